// The expiry sweeper: a finalized Package whose expiry passes becomes `expired`,
// its objects are deleted from storage, and its Links stop working.
import { afterAll, beforeAll, expect, test } from 'vitest';
import { call, startTestService, type TestService } from '../../helpers/hosted.js';
import { ownerActor } from '../../helpers/auth.js';
import { sweepExpired } from '../../../src/hosted/services/expiry.js';
import { createPackage, finalizePackage, makeLink, uploadFile } from '../../helpers/flow.js';

let svc: TestService;
beforeAll(async () => {
  svc = await startTestService({ 'sweep-interval-ms': '50' });
});
afterAll(() => svc?.close());

async function objectKeys(packageId: string): Promise<string[]> {
  const rows = await svc.ctx.db.selectFrom('files').select('object_key').where('package_id', '=', packageId).execute();
  return rows.map((r) => r.object_key!).filter(Boolean);
}

/** Polls until `check` holds, for at most ~10 s (bounded; not a timing assertion). */
async function eventually(check: () => Promise<boolean>): Promise<boolean> {
  for (let i = 0; i < 200; i++) {
    if (await check()) return true;
    await new Promise((r) => setTimeout(r, 50));
  }
  return false;
}

test('at expiry the sweeper expires the Package, deletes its objects and its Links answer 410', async () => {
  const pkg = await createPackage(svc, await ownerActor(svc));
  await uploadFile(svc, pkg, 'a.bin', 'd', Buffer.alloc(1024, 1));
  await uploadFile(svc, pkg, 'b.bin', '', Buffer.alloc(10, 2));
  await finalizePackage(svc, pkg);
  const link = await makeLink(svc, pkg);
  const keys = await objectKeys(pkg.id);
  expect(keys).toHaveLength(2);
  for (const k of keys) expect(await svc.ctx.storage.objectInfo(k)).not.toBeNull();

  // Time passes: the Package's expiry is now behind us.
  await svc.ctx.db.updateTable('packages').set({ expiry: new Date(Date.now() - 1000).toISOString() }).where('id', '=', pkg.id).execute();

  expect(await eventually(async () => {
    const row = await svc.ctx.db.selectFrom('packages').select(['state', 'objects_deleted']).where('id', '=', pkg.id).executeTakeFirstOrThrow();
    return row.state === 'expired' && row.objects_deleted === 1;
  })).toBe(true);
  for (const k of keys) expect(await svc.ctx.storage.objectInfo(k)).toBeNull();
  expect((await call(svc.url, 'GET', `/v1/links/${link.id}?secret=${link.secret}`)).status).toBe(410);
  const got = await call(svc.url, 'GET', `/v1/packages/${pkg.id}`, { headers: pkg.h });
  expect(got.body.state).toBe('expired');
  expect(got.body.name).toBe(pkg.body.name);
});

test('a Package that is not yet due keeps its objects', async () => {
  const pkg = await createPackage(svc, await ownerActor(svc));
  await uploadFile(svc, pkg, 'keep.bin', '', Buffer.alloc(100, 3));
  await finalizePackage(svc, pkg);
  const [key] = await objectKeys(pkg.id);
  await sweepExpired(svc.ctx);
  const row = await svc.ctx.db.selectFrom('packages').select('state').where('id', '=', pkg.id).executeTakeFirstOrThrow();
  expect(row.state).toBe('finalized');
  expect((await svc.ctx.storage.objectInfo(key!))?.size).toBe(100);
});
