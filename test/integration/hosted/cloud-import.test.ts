// cloud_to_svc against a real customer bucket: the objects under the
// connection's source folders (or the keys and folders a transfer names) become
// the files of a new Package, streamed into our store through the upload flow,
// and the Package is finalized; a recipient downloads identical bytes.
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { call, startTestService, type TestService } from '../../helpers/hosted.js';
import { ownerActor, type Actor } from '../../helpers/auth.js';
import { MiB, createPackage, downloadAll, makeLink, sha256 } from '../../helpers/flow.js';
import { waitFor } from '../../helpers/downloads.js';
import { startCustomerBucket, type CustomerBucket } from '../../helpers/bucket.js';
import { importPath } from '../../../src/hosted/cloud/fromS3.js';

let svc: TestService;
let owner: Actor;
let bucket: CustomerBucket;

const OBJECTS: Record<string, Buffer> = {
  'in/day1/a.mov': randomBytes(200_000),
  'in/day1/sub/b.wav': randomBytes(30_000),
  'in/day1/sub/deeper/empty.txt': Buffer.alloc(0),
  'in/day1/big.bin': randomBytes(13 * MiB + 7),
  'in/day1/folder/': Buffer.alloc(0),
  'in/day10/not-this.txt': Buffer.from('a sibling folder with a longer name'),
  'in/loose.txt': Buffer.from('outside the source folder'),
  'archive/old.txt': Buffer.from('elsewhere'),
};

beforeAll(async () => {
  bucket = await startCustomerBucket({ bucket: 'ingest' });
  for (const [k, v] of Object.entries(OBJECTS)) await bucket.put(k, v);
  // The customer's bucket is on 127.0.0.1 on purpose: the outbound guard allows that address here.
  svc = await startTestService({ 'cloud-part-size': String(6 * MiB), 'cloud-retry-base-ms': '50', 'jobs-poll-ms': '50', 'allow-private-targets': '127.0.0.1/32' });
  owner = await ownerActor(svc);
});
afterAll(async () => {
  await svc?.close();
  await bucket?.close();
});

async function inbound(extra: Record<string, unknown> = {}) {
  const r = await call(svc.url, 'POST', `/v1/teams/${owner.teamId}/cloud_connections`, {
    headers: owner.h,
    body: { provider: 'generic_s3', direction: 'cloud_to_svc', authorization: bucket.authorization(), source_directory_ids: ['in/day1'], ...extra },
  });
  expect(r.status, JSON.stringify(r.body)).toBe(201);
  return r.body;
}

async function fill(body: Record<string, unknown>, name: string) {
  const pkg = await createPackage(svc, owner, { name });
  const r = await call(svc.url, 'POST', `/v1/packages/${pkg.id}/transfer`, { headers: pkg.h, body });
  expect(r.status, JSON.stringify(r.body)).toBe(201);
  expect(r.body).toMatchObject({ direction: 'cloud_to_svc', state: 'queued', trigger: 'manual' });
  const t = await waitFor('the import', async () => {
    const g = await call(svc.url, 'GET', `/v1/packages/${pkg.id}/transfers/${r.body.id}`, { headers: pkg.h });
    return g.body.state === 'complete' || g.body.state === 'error' ? g.body : undefined;
  });
  return { pkg, t };
}

it('maps keys below a source folder to paths that keep the folder by its last name', () => {
  expect(importPath('in/day1/a/b.mov', ['in/day1'])).toEqual({ path: 'day1/a', name: 'b.mov' });
  expect(importPath('in/day1/b.mov', ['in', 'in/day1'])).toEqual({ path: 'day1', name: 'b.mov' });
  expect(importPath('x/y.bin', [])).toEqual({ path: 'x', name: 'y.bin' });
  expect(importPath('top.bin', [''])).toEqual({ path: '', name: 'top.bin' });
});

it('the objects under the source folder become a finalized Package with the same bytes', async () => {
  const conn = await inbound();
  const { pkg, t } = await fill({ cloud_connection_id: conn.id, notify_email: 'ingest@example.com' }, 'From the bucket');
  expect(t, JSON.stringify(t)).toMatchObject({ state: 'complete', files_total: 4, files_done: 4, files_filtered_out: 1, destination: null });
  const wanted = Object.entries(OBJECTS).filter(([k]) => k.startsWith('in/day1/') && !k.endsWith('/'));
  expect(t.bytes_total).toBe(wanted.reduce((n, [, v]) => n + v.length, 0));
  expect(t.bytes_done).toBe(t.bytes_total);

  const got = await call(svc.url, 'GET', `/v1/packages/${pkg.id}`, { headers: pkg.h });
  expect(got.body).toMatchObject({ state: 'finalized', total_files: 4, size: t.bytes_total });
  const files = await downloadAll(svc, await makeLink(svc, pkg));
  expect([...files.keys()].sort()).toEqual(wanted.map(([k]) => k.replace(/^in\//, '')).sort());
  for (const [k, v] of wanted) expect(sha256(files.get(k.replace(/^in\//, ''))!)).toBe(sha256(v));
  // 13 MiB in 6 MiB parts: the file went up in three parts of our store.
  const big = await svc.ctx.db.selectFrom('files').selectAll().where('package_id', '=', pkg.id).where('name', '=', 'big.bin').executeTakeFirstOrThrow();
  expect(big.chunk_size).toBe(6 * MiB);
  expect((await svc.ctx.storage.objectInfo(big.object_key!))!.etag).toMatch(/-3"$/);
});

it('a transfer naming keys and folders brings only those in; a missing key fails it plainly', async () => {
  const conn = await inbound();
  const { pkg, t } = await fill({ cloud_connection_id: conn.id, files: [{ path: 'in/day1/sub/' }, { path: 'in/day1/a.mov' }] }, 'Chosen');
  expect(t.state, JSON.stringify(t)).toBe('complete');
  const files = await downloadAll(svc, await makeLink(svc, pkg));
  expect([...files.keys()].sort()).toEqual(['day1/a.mov', 'day1/sub/b.wav', 'day1/sub/deeper/empty.txt']);

  const missing = await fill({ cloud_connection_id: conn.id, files: [{ path: 'in/day1/nope.mov' }] }, 'Missing');
  expect(missing.t).toMatchObject({ state: 'error', attempts: 1 });
  expect(missing.t.error).toMatch(/has no object in\/day1\/nope\.mov/);
  expect((await call(svc.url, 'GET', `/v1/packages/${missing.pkg.id}`, { headers: missing.pkg.h })).body.state).toBe('new');
});

it('a connection without source folders brings in the whole bucket, keys as paths', async () => {
  const conn = await inbound({ source_directory_ids: [] });
  const { pkg, t } = await fill({ cloud_connection_id: conn.id, files: [{ path: 'archive/' }, { path: 'in/loose.txt' }] }, 'Whole bucket');
  expect(t.state, JSON.stringify(t)).toBe('complete');
  const files = await downloadAll(svc, await makeLink(svc, pkg));
  expect([...files.keys()].sort()).toEqual(['archive/old.txt', 'in/loose.txt']);
  expect(files.get('in/loose.txt')!.equals(OBJECTS['in/loose.txt']!)).toBe(true);
});

it('a folder named without its "/" is a folder; a file the Package refuses ends the transfer at once, saying why', async () => {
  const conn = await inbound();
  const { pkg, t } = await fill({ cloud_connection_id: conn.id, files: [{ path: 'in/day1/sub' }] }, 'Folder without slash');
  expect(t.state, JSON.stringify(t)).toBe('complete');
  expect([...(await downloadAll(svc, await makeLink(svc, pkg))).keys()].sort()).toEqual(['day1/sub/b.wav', 'day1/sub/deeper/empty.txt']);

  // A Portal that takes files of 100 KB at most, filled by a member (whose Package token has full access).
  const portal = await call(svc.url, 'POST', `/v1/teams/${owner.teamId}/portals`, {
    headers: owner.h,
    body: { name: 'Small files only', subdomain: 'small-only', active: true, package_size_restriction_enabled: true, max_file_size: 100_000 },
  });
  const created = await call(svc.url, 'POST', `/v1/portals/${portal.body.id}/packages`, { headers: owner.h, body: { name: 'too big', description: '', sender: 'x@example.com' } });
  expect(created.status, JSON.stringify(created.body)).toBe(201);
  const r = await call(svc.url, 'POST', `/v1/packages/${created.body.id}/transfer`, { headers: owner.h, body: { cloud_connection_id: conn.id, files: [{ path: 'in/day1/a.mov' }] } });
  expect(r.status, JSON.stringify(r.body)).toBe(201);
  const t2 = await waitFor('the refused import', async () => {
    const g = await call(svc.url, 'GET', `/v1/packages/${created.body.id}/transfers/${r.body.id}`, { headers: owner.h });
    return g.body.state === 'error' ? g.body : undefined;
  });
  expect(t2.attempts).toBe(1);
  expect(t2.error).toMatch(/Ferry refused a file: files may be at most 100000 bytes/);
});
