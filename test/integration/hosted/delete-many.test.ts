// Deleting a Package of thousands of files removes every object: its files are
// read a page at a time (1000 rows), each page's objects removed in one request.
import { afterAll, beforeAll, expect, test } from 'vitest';
import { call, startTestService, type TestService } from '../../helpers/hosted.js';
import { ownerActor } from '../../helpers/auth.js';
import { createPackage, finalizePackage, uploadFile } from '../../helpers/flow.js';
import { insertFileRows } from '../../helpers/fileRows.js';

let svc: TestService;
beforeAll(async () => {
  svc = await startTestService();
});
afterAll(async () => {
  await svc?.close();
});

test('deleting a Package of 2,503 files removes each of their objects once, a thousand a request', async () => {
  const owner = await ownerActor(svc);
  const pkg = await createPackage(svc, owner);
  const real = [await uploadFile(svc, pkg, 'a.txt', '', Buffer.from('a')), await uploadFile(svc, pkg, 'm.txt', 'k', Buffer.from('m')), await uploadFile(svc, pkg, 'z.txt', 'z', Buffer.from('z'))];
  await insertFileRows(svc, pkg.id, Array.from({ length: 2500 }, (_, i) => ({ id: `file_del${i}`, path: `p${i % 9}`, name: `f${i}`, size: 0, object_key: `packages/${pkg.id}/file_del${i}` })));
  await finalizePackage(svc, pkg);
  const keys = (await svc.ctx.db.selectFrom('files').select('object_key').where('package_id', '=', pkg.id).where('id', 'in', real).execute()).map((f) => f.object_key!);

  const storage = svc.ctx.storage;
  const removeMany = storage.removeMany;
  const removed: string[] = [];
  let requests = 0;
  storage.removeMany = async (keys) => {
    requests++;
    removed.push(...keys);
    return removeMany.call(storage, keys);
  };
  try {
    const r = await call(svc.url, 'DELETE', `/v1/packages/${pkg.id}`, { headers: owner.h });
    expect(r.status, JSON.stringify(r.body)).toBe(204);
  } finally {
    storage.removeMany = removeMany;
  }
  expect(requests).toBe(3);
  expect(removed).toHaveLength(2503);
  expect(new Set(removed).size).toBe(2503);
  for (const key of keys) await expect(storage.read(key)).rejects.toThrow();
  const row = await svc.ctx.db.selectFrom('packages').select('objects_deleted').where('id', '=', pkg.id).executeTakeFirstOrThrow();
  expect(row.objects_deleted).toBe(1);
});
