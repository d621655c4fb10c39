// The ZIP of a Package of 70,000 entries (more than a ZIP without ZIP64 can
// count): streamed from pages of the list, every entry there, read back by
// Python's zipfile (its CRCs checked) and by zipinfo.
import { execFileSync } from 'node:child_process';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, startTestService, type TestService } from '../../helpers/hosted.js';
import { ownerActor } from '../../helpers/auth.js';
import { createPackage, finalizePackage, uploadFile, type Pkg } from '../../helpers/flow.js';
import { insertFileRows, type RowSpec } from '../../helpers/fileRows.js';

const ENTRIES = 70_000;
const SEED = Buffer.from('seventy thousand entries\n');

let svc: TestService;
let pkg: Pkg;
let dir: string;
beforeAll(async () => {
  svc = await startTestService();
  dir = await fs.mkdtemp(path.join(os.tmpdir(), 'ferry-zip-many-'));
  pkg = await createPackage(svc, await ownerActor(svc), { name: 'Many' });
  const seedId = await uploadFile(svc, pkg, 'seed.txt', '', SEED);
  const seed = await svc.ctx.db.selectFrom('files').select('object_key').where('id', '=', seedId).executeTakeFirstOrThrow();
  // Tiny entries in folders of 1000: most empty, one in 1000 the seed's bytes (read from the store).
  const rows: RowSpec[] = [];
  for (let i = 0; i < ENTRIES - 1; i++) {
    const withBytes = i % 1000 === 0;
    rows.push({ id: `file_many${i}`, path: `d${Math.floor(i / 1000)}`, name: `f${i}.txt`, size: withBytes ? SEED.length : 0, object_key: withBytes ? seed.object_key : null });
  }
  await insertFileRows(svc, pkg.id, rows);
  await finalizePackage(svc, pkg);
}, 120_000);
afterAll(async () => {
  await svc?.close();
  if (dir) await fs.rm(dir, { recursive: true, force: true });
});

async function zipFile(variant: 'zip_mac' | 'zip_windows'): Promise<string> {
  const d = await call(svc.url, 'GET', `/v1/packages/${pkg.id}/files/${variant}/download`, { headers: pkg.h });
  expect(d.status, JSON.stringify(d.body)).toBe(200);
  const res = await fetch(d.body.url);
  expect(res.status).toBe(200);
  const data = Buffer.from(await res.arrayBuffer());
  expect(Number(res.headers.get('content-length'))).toBe(data.length);
  const file = path.join(dir, `${variant}.zip`);
  await fs.writeFile(file, data);
  return file;
}

const PY = `
import sys, zipfile
z = zipfile.ZipFile(sys.argv[1])
bad = z.testzip()
names = z.namelist()
print(len(names), len(set(names)), bad, sum(i.file_size for i in z.infolist()), names[0], names[-1])
`;

describe('a ZIP of 70,000 entries', () => {
  it('holds every entry, in ZIP64, with the right bytes', async () => {
    const file = await zipFile('zip_mac');
    const [count, distinct, bad, bytes, first, last] = execFileSync('python3', ['-c', PY, file], { encoding: 'utf8' }).trim().split(' ');
    expect(Number(count)).toBe(ENTRIES);
    expect(Number(distinct)).toBe(ENTRIES);
    expect(bad).toBe('None');
    expect(Number(bytes)).toBe(SEED.length * 71);
    expect([first, last]).toEqual(['seed.txt', 'd9/f9999.txt']);
    // The ZIP64 end of central directory record and its locator, before the classic end record.
    const tail = (await fs.readFile(file)).subarray(-(56 + 20 + 22));
    expect(tail.readUInt32LE(0)).toBe(0x06064b50);
    expect(tail.readUInt32LE(56)).toBe(0x07064b50);
    expect(Number(tail.readBigUInt64LE(24))).toBe(ENTRIES);
    // zipinfo's last line: "70000 files, <bytes> bytes uncompressed, ..."
    const info = execFileSync('zipinfo', ['-t', file], { encoding: 'utf8' });
    expect(info).toMatch(new RegExp(`^${ENTRIES} files, ${SEED.length * 71} bytes uncompressed`));
  }, 120_000);

  it('names the Windows variant alike, every name distinct', async () => {
    const file = await zipFile('zip_windows');
    const [count, distinct, bad] = execFileSync('python3', ['-c', PY, file], { encoding: 'utf8' }).trim().split(' ');
    expect([Number(count), Number(distinct), bad]).toEqual([ENTRIES, ENTRIES, 'None']);
  }, 120_000);
});
