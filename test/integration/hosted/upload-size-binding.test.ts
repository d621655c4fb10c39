// Blueprints bind the size a file was registered with: each part URL signs its
// Content-Length (chunk_size, the last part the remainder), a single PUT the
// file's size, and no part beyond the size's part count is signed; the store
// refuses any other body. What a refused finalize left is deleted, unfinished
// Packages are swept with their parts, and folders count toward max_file_count.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, startTestService, type TestService } from '../../helpers/hosted.js';
import { teamActors, type Actor } from '../../helpers/auth.js';
import { createPackage, finalizeFile, MiB, putWith, type Pkg } from '../../helpers/flow.js';
import { sweepUnfinished } from '../../../src/hosted/services/expiry.js';

let svc: TestService;
let owner: Actor;

beforeAll(async () => {
  svc = await startTestService();
  ({ owner } = await teamActors(svc, 'binding'));
});
afterAll(async () => svc?.close());

let seq = 0;
async function portal(body: Record<string, unknown> = {}, on: TestService = svc, who: Actor = owner) {
  const r = await call(on.url, 'POST', `/v1/teams/${who.teamId}/portals`, { headers: who.h, body: { name: 'Inbox', subdomain: `binding-${++seq}`, active: true, ...body } });
  expect(r.status, JSON.stringify(r.body)).toBe(201);
  return r.body as { id: string; subdomain: string };
}
const asPkg = (b: any): Pkg => ({ id: b.id, token: b.access_token, h: { 'x-package-token': b.access_token }, body: b });
async function portalPackage(portalId: string, on: TestService = svc): Promise<Pkg> {
  const r = await call(on.url, 'POST', `/v1/portals/${portalId}/packages`, { body: { name: 'P', description: '', sender: 'up@example.com' } });
  expect(r.status, JSON.stringify(r.body)).toBe(201);
  return asPkg(r.body);
}
interface Registered { file: { id: string; chunk_size: number }; upload_id?: string; upload_blueprints?: { url: string; method: string; headers: Record<string, string> }[]; create_blueprint: any }
async function registerAt(pkg: Pkg, name: string, size: number | undefined, query = '', extra: Record<string, unknown> = {}, on: TestService = svc) {
  return call<Registered & { code?: string }>(on.url, 'POST', `/v1/packages/${pkg.id}/files${query}`, {
    headers: pkg.h,
    body: { kind: 'file', name, path: '', last_modified: '2024-05-01T10:00:00Z', size, ...extra },
  });
}
const blueprints = (pkg: Pkg, fileId: string, uploadId: string, start: number, count: number) =>
  call(svc.url, 'POST', `/v1/packages/${pkg.id}/files/${fileId}?start=${start}&count=${count}`, { headers: pkg.h, body: { upload_id: uploadId } });
/** A PUT of `body` to a blueprint URL as an attacker sends it: whatever length it likes, no blueprint headers. */
const rawPut = (url: string, body: Buffer) => fetch(url, { method: 'PUT', body });
const signedHeaders = (url: string) => new URL(url).searchParams.get('X-Amz-SignedHeaders');
const keyOf = async (fileId: string) => (await svc.ctx.db.selectFrom('files').select('object_key').where('id', '=', fileId).executeTakeFirstOrThrow()).object_key!;

describe('the store takes exactly the registered bytes', () => {
  it('a single PUT of 20 MiB to a file registered at 1,000 bytes is refused, and nothing is stored; 1,000 bytes go in', async () => {
    for (const pkg of [await portalPackage((await portal()).id), await createPackage(svc, owner)]) {
      const r = await registerAt(pkg, 'small.bin', 1000, '?single=true');
      expect(r.status, JSON.stringify(r.body)).toBe(201);
      const [bp] = r.body.upload_blueprints!;
      expect(signedHeaders(bp!.url)).toBe('content-length;host');
      const big = await rawPut(bp!.url, Buffer.alloc(20 * MiB, 1));
      expect(big.status).toBe(403);
      expect(await big.text()).toContain('SignatureDoesNotMatch');
      expect(await svc.ctx.storage.objectInfo(await keyOf(r.body.file.id))).toBeNull();
      expect((await rawPut(bp!.url, Buffer.alloc(1000, 2))).status).toBe(200);
    }
  });

  it('a part blueprint of a 1,000-byte file takes 1,000 bytes, not 8 MiB; `count` is cut to the part count, and further part URLs answer 400', async () => {
    const pkg = await portalPackage((await portal()).id);
    const r = await registerAt(pkg, 'small.bin', 1000, '?count=100');
    expect(r.status).toBe(201);
    expect(r.body.upload_blueprints).toHaveLength(1);
    const uploadId = r.body.upload_id!;
    const url = r.body.upload_blueprints![0]!.url;
    expect((await rawPut(url, Buffer.alloc(8 * MiB, 1))).status).toBe(403);
    for (const [start, count] of [[1, 1], [0, 100], [0, 2], [99, 1]]) {
      const more = await blueprints(pkg, r.body.file.id, uploadId, start!, count!);
      expect(more.status, `start=${start} count=${count}`).toBe(400);
      expect(more.body.code).toBe('too_many_chunks');
    }
    expect((await blueprints(pkg, r.body.file.id, uploadId, 0, 1)).status).toBe(200);
    expect((await svc.ctx.storage.listParts(await keyOf(r.body.file.id), uploadId))).toEqual([]);
  });

  it('parts are chunk_size long, the last the remainder: a larger or smaller part is refused', async () => {
    const pkg = await portalPackage((await portal()).id);
    const size = 12 * MiB;
    const r = await registerAt(pkg, 'three.bin', size, '?count=3', { chunk_size: 5 * MiB });
    expect(r.body.file.chunk_size).toBe(5 * MiB);
    const bps = r.body.upload_blueprints!;
    expect(bps.map((b) => signedHeaders(b.url))).toEqual(['content-length;host', 'content-length;host', 'content-length;host']);
    expect((await rawPut(bps[0]!.url, Buffer.alloc(8 * MiB))).status).toBe(403);
    expect((await rawPut(bps[0]!.url, Buffer.alloc(4 * MiB))).status).toBe(403);
    expect((await rawPut(bps[2]!.url, Buffer.alloc(5 * MiB))).status).toBe(403);
    // Sent in parts of the registered chunk size, the file goes in whole.
    const data = Buffer.alloc(size, 5);
    const parts = await putWith(bps, data, 5 * MiB);
    expect((await finalizeFile(svc, pkg, r.body.file.id, r.body.upload_id!, parts, size)).status).toBe(204);
  });

  it('a file registered without a size is not bound (a Team Package; a Portal that limits sizes requires the size)', async () => {
    const pkg = await createPackage(svc, owner);
    const r = await registerAt(pkg, 'stream.bin', undefined, '?count=2');
    expect(r.status).toBe(201);
    expect(r.body.upload_blueprints!.map((b) => signedHeaders(b.url))).toEqual(['host', 'host']);
    expect((await rawPut(r.body.upload_blueprints![0]!.url, Buffer.alloc(6 * MiB))).status).toBe(200);
  });
});

describe('the Portal\'s limits reach the store', () => {
  it('folders count toward max_file_count', async () => {
    const pkg = await portalPackage((await portal({ package_size_restriction_enabled: true, max_file_count: 2 })).id);
    const dir = (name: string) => call(svc.url, 'POST', `/v1/packages/${pkg.id}/files`, { headers: pkg.h, body: { kind: 'directory', name, path: '', last_modified: '2024-05-01T10:00:00Z' } });
    expect((await dir('a')).status).toBe(201);
    expect((await dir('b')).status).toBe(201);
    const third = await dir('c');
    expect(third.status).toBe(413);
    expect(third.body.code).toBe('too_many_files');
    expect((await registerAt(pkg, 'f.txt', 1)).body.code).toBe('too_many_files');
  });

  it('a finalize refused over a limit deletes what the file stored (its parts, or its object)', async () => {
    const p = await portal({ package_size_restriction_enabled: true, max_file_size: 1000 });
    const pkg = await portalPackage(p.id);
    const multi = await registerAt(pkg, 'multi.bin', 800, '?count=1');
    const single = await registerAt(pkg, 'single.bin', 900, '?single=true');
    const mParts = await putWith(multi.body.upload_blueprints!, Buffer.alloc(800, 1), 800);
    const sParts = await putWith(single.body.upload_blueprints!, Buffer.alloc(900, 2), 900);
    // The Team lowers the limit while the files are on their way.
    const lowered = await call(svc.url, 'PUT', `/v1/portals/${p.id}`, { headers: owner.h, body: { name: 'Inbox', subdomain: p.subdomain, max_file_size: 500 } });
    expect(lowered.status).toBe(200);
    for (const [reg, parts, size] of [[multi, mParts, 800], [single, sParts, 900]] as const) {
      const r = await finalizeFile(svc, pkg, reg.body.file.id, reg.body.upload_id!, parts, size);
      expect(r.status).toBe(413);
      expect(r.body.code).toBe('file_too_large');
    }
    const key = await keyOf(multi.body.file.id);
    expect(await svc.ctx.storage.uploadExists(key, multi.body.upload_id!)).toBe(false);
    expect(await svc.ctx.storage.objectInfo(await keyOf(single.body.file.id))).toBeNull();
  });
});

describe('unfinished Packages are swept', () => {
  it('a Package left new past --unfinished-package-ttl-hours is expired: its open uploads aborted, its objects deleted', async () => {
    const short = await startTestService({ 'unfinished-package-ttl-hours': '0.001', 'sweep-interval-ms': '100' });
    try {
      const { owner: o } = await teamActors(short, 'sweep');
      const pkg = await portalPackage((await portal({}, short, o)).id, short);
      const half = await registerAt(pkg, 'half.bin', 12 * MiB, '?count=3', { chunk_size: 5 * MiB }, short);
      expect(half.status, JSON.stringify(half.body)).toBe(201);
      await putWith(half.body.upload_blueprints!.slice(0, 1), Buffer.alloc(5 * MiB, 3), 5 * MiB);
      const whole = await registerAt(pkg, 'whole.txt', 4, '?single=true', {}, short);
      const parts = await putWith(whole.body.upload_blueprints!, Buffer.from('done'), 4);
      expect((await finalizeFile(short, pkg, whole.body.file.id, whole.body.upload_id!, parts, 4)).status).toBe(204);
      const keys = await short.ctx.db.selectFrom('files').select(['id', 'object_key']).where('package_id', '=', pkg.id).execute();
      const keyOfShort = (id: string) => keys.find((k) => k.id === id)!.object_key!;
      expect((await short.ctx.storage.listParts(keyOfShort(half.body.file.id), half.body.upload_id!))).toHaveLength(1);

      // Bounded polling: the sweeper runs every 100 ms, and the Package goes once untouched for 3.6 s.
      let row = { state: 'new', objects_deleted: 0 };
      for (let i = 0; i < 300 && !(row.state === 'expired' && row.objects_deleted === 1); i++) {
        await new Promise((res) => setTimeout(res, 100));
        row = await short.ctx.db.selectFrom('packages').select(['state', 'objects_deleted']).where('id', '=', pkg.id).executeTakeFirstOrThrow();
      }
      expect(row).toEqual({ state: 'expired', objects_deleted: 1 });
      expect(await short.ctx.storage.uploadExists(keyOfShort(half.body.file.id), half.body.upload_id!)).toBe(false);
      expect(await short.ctx.storage.objectInfo(keyOfShort(whole.body.file.id))).toBeNull();
      expect((await registerAt(pkg, 'late.txt', 1, '', {}, short)).status).toBe(409);
    } finally {
      await short.close();
    }
  });

  it('the sweep goes by the last activity of the Package and its files, and leaves finalized Packages alone', async () => {
    const sent = await portalPackage((await portal()).id);
    expect((await call(svc.url, 'POST', `/v1/packages/${sent.id}/finalize`, { headers: sent.h })).status).toBe(204);
    const pkg = await portalPackage((await portal()).id);
    const reg = await registerAt(pkg, 'recent.txt', 1);
    const fileAt = Date.parse((await svc.ctx.db.selectFrom('files').select('updated_at').where('id', '=', reg.body.file.id).executeTakeFirstOrThrow()).updated_at);
    const hour = 3600_000;
    // The Package row is older than the TTL, its file is not: kept.
    await svc.ctx.db.updateTable('packages').set({ updated_at: new Date(fileAt - 5 * hour).toISOString() }).where('id', '=', pkg.id).execute();
    await sweepUnfinished(svc.ctx, 2 * hour, new Date(fileAt + hour).toISOString());
    expect((await svc.ctx.db.selectFrom('packages').select('state').where('id', '=', pkg.id).executeTakeFirstOrThrow()).state).toBe('new');
    // Both older than the TTL: swept.
    await sweepUnfinished(svc.ctx, 2 * hour, new Date(fileAt + 3 * hour).toISOString());
    expect((await svc.ctx.db.selectFrom('packages').select('state').where('id', '=', pkg.id).executeTakeFirstOrThrow()).state).toBe('expired');
    expect((await svc.ctx.db.selectFrom('packages').select('state').where('id', '=', sent.id).executeTakeFirstOrThrow()).state).toBe('finalized');
  });

  it('asking for part blueprints counts as activity (written at most hourly)', async () => {
    const pkg = await portalPackage((await portal()).id);
    const reg = await registerAt(pkg, 'slow.bin', 12 * MiB, '?count=1', { chunk_size: 5 * MiB });
    const updatedAt = async () => (await svc.ctx.db.selectFrom('files').select('updated_at').where('id', '=', reg.body.file.id).executeTakeFirstOrThrow()).updated_at;
    const fresh = await updatedAt();
    expect((await blueprints(pkg, reg.body.file.id, reg.body.upload_id!, 1, 2)).status).toBe(200);
    expect(await updatedAt()).toBe(fresh);
    const old = new Date(Date.now() - 5 * 3600_000).toISOString();
    await svc.ctx.db.updateTable('files').set({ updated_at: old }).where('id', '=', reg.body.file.id).execute();
    expect((await blueprints(pkg, reg.body.file.id, reg.body.upload_id!, 1, 2)).status).toBe(200);
    expect(await updatedAt()).not.toBe(old);
  });
});
