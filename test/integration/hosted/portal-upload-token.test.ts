// What the token of an anonymous Portal uploader (access `upload`) may do: finish
// its upload and read the Package's own state, nothing else (no file list, no
// download URL, no ZIP, no events); it expires, and stops working once its Portal
// is deactivated, expires or is deleted. A member's Portal Package is unaffected.
import { decodeJwt } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, startTestService, type TestService } from '../../helpers/hosted.js';
import { teamActors, type Actor } from '../../helpers/auth.js';
import { finalizeFile, finalizePackage, putParts, register, startUpload, uploadFile, type Pkg } from '../../helpers/flow.js';

let svc: TestService;
let owner: Actor;

beforeAll(async () => {
  svc = await startTestService();
  ({ owner } = await teamActors(svc, 'uptoken'));
});
afterAll(async () => svc?.close());

let seq = 0;
async function portal(body: Record<string, unknown> = {}) {
  const r = await call(svc.url, 'POST', `/v1/teams/${owner.teamId}/portals`, {
    headers: owner.h,
    body: { name: 'Drop box', subdomain: `uptoken-${++seq}`, active: true, access_code: 'letmein', recipients: ['staff@example.com'], ...body },
  });
  expect(r.status, JSON.stringify(r.body)).toBe(201);
  return r.body as { id: string; subdomain: string };
}
const PKG = { name: 'Delivery', description: 'from a client', sender: 'client@example.com' };
const asPkg = (b: any): Pkg => ({ id: b.id, token: b.access_token, h: { 'x-package-token': b.access_token }, body: b });
async function anonymousPackage(portalId: string): Promise<Pkg> {
  const r = await call(svc.url, 'POST', `/v1/portals/${portalId}/packages`, { headers: { 'x-access-code': 'letmein' }, body: PKG });
  expect(r.status, JSON.stringify(r.body)).toBe(201);
  return asPkg(r.body);
}
const setPortal = async (id: string, body: Record<string, unknown>) => {
  const r = await call(svc.url, 'PUT', `/v1/portals/${id}`, { headers: owner.h, body: { name: 'Drop box', subdomain: (await call(svc.url, 'GET', `/v1/portals/${id}`, { headers: owner.h })).body.subdomain, ...body } });
  expect(r.status, JSON.stringify(r.body)).toBe(200);
};
const entry = (pkg: Pkg, name: string) =>
  call(svc.url, 'POST', `/v1/packages/${pkg.id}/files`, { headers: pkg.h, body: { kind: 'file', name, path: '', last_modified: '2024-05-01T10:00:00Z', size: 5 } });

/** Status of a GET, reading no further than the headers (event streams stay open). */
async function statusOf(path: string, headers: Record<string, string>): Promise<{ status: number; code?: string }> {
  const abort = new AbortController();
  const res = await fetch(svc.url + path, { headers, signal: abort.signal });
  if ((res.headers.get('content-type') ?? '').includes('json')) return { status: res.status, code: ((await res.json()) as { code: string }).code };
  abort.abort();
  return { status: res.status };
}

describe('an anonymous uploader\'s token reads nothing but its Package\'s state', () => {
  const READS: [string, (p: Pkg, fileId: string) => string][] = [
    ['GET /v1/packages/{id}/files', (p) => `/v1/packages/${p.id}/files`],
    ['GET /v1/packages/{id}/files/{file_id}/download', (p, f) => `/v1/packages/${p.id}/files/${f}/download`],
    ['GET /v1/packages/{id}/files/{file_id}/download?expiry=...', (p, f) => `/v1/packages/${p.id}/files/${f}/download?expiry=${encodeURIComponent(new Date(Date.now() + 6 * 86400_000).toISOString())}`],
    ['GET /v1/packages/{id}/zip/zip_windows', (p) => `/v1/packages/${p.id}/zip/zip_windows`],
    ['GET /v1/packages/{id}/zip/zip_mac', (p) => `/v1/packages/${p.id}/zip/zip_mac`],
    ['GET /v1/packages/{id}/events', (p) => `/v1/packages/${p.id}/events`],
    ['GET /v1/packages/{id}/metadata', (p) => `/v1/packages/${p.id}/metadata`],
    ['GET /v1/packages/{id}/links', (p) => `/v1/packages/${p.id}/links`],
    ['GET /v1/packages/{id}/transfers', (p) => `/v1/packages/${p.id}/transfers`],
  ];
  let open: { pkg: Pkg; fileId: string };
  let done: { pkg: Pkg; fileId: string };

  beforeAll(async () => {
    const p = await portal();
    // The uploader sends a file and keeps its token: while the Package is open, and once finalized.
    const a = await anonymousPackage(p.id);
    open = { pkg: a, fileId: await uploadFile(svc, a, 'secret.bin', '', Buffer.from('hosted for free')) };
    const b = await anonymousPackage(p.id);
    done = { pkg: b, fileId: await uploadFile(svc, b, 'secret.bin', '', Buffer.from('hosted for free')) };
    await finalizePackage(svc, b);
  });

  for (const [route, path] of READS) {
    it(`${route}: 403 while the Package is open and once it is finalized`, async () => {
      for (const { pkg, fileId } of [open, done]) {
        const r = await statusOf(path(pkg, fileId), pkg.h);
        expect(r.status, `${route} on a ${pkg === open.pkg ? 'new' : 'finalized'} Package`).toBe(403);
        expect(r.code).toBe('forbidden');
      }
    });
  }

  it('the Team reads the same routes with its own credential', async () => {
    for (const [route, path] of READS.filter(([r]) => !r.includes('metadata') && !r.includes('expiry'))) {
      expect((await statusOf(path(done.pkg, done.fileId), owner.h)).status, route).toBe(200);
    }
  });

  it('GET /v1/packages/{id}: the Package\'s own state, the Portal\'s recipients hidden, and the same token back (never a fresh one)', async () => {
    for (const { pkg } of [open, done]) {
      const r = await call(svc.url, 'GET', `/v1/packages/${pkg.id}`, { headers: pkg.h });
      expect(r.status, JSON.stringify(r.body)).toBe(200);
      expect(r.body).toMatchObject({ id: pkg.id, name: PKG.name, recipients: [], state: pkg === open.pkg ? 'new' : 'finalized', access_token: pkg.token });
    }
  });

  it('still registers, uploads (parts and blueprints) and finalizes files and the Package', async () => {
    const pkg = await anonymousPackage((await portal()).id);
    const data = Buffer.alloc(6 * 1024 * 1024 + 3, 9);
    const reg = await register(svc, pkg, { name: 'big.bin', size: data.length });
    const uploadId = await startUpload(reg.create_blueprint);
    const parts = await putParts(svc, pkg, reg.file.id, uploadId, data);
    expect((await finalizeFile(svc, pkg, reg.file.id, uploadId, parts, data.length)).status).toBe(204);
    const batch = await call(svc.url, 'POST', `/v1/packages/${pkg.id}/register_files`, {
      headers: pkg.h,
      body: { files: [{ kind: 'file', name: 'small.txt', path: '', last_modified: '2024-05-01T10:00:00Z', size: 2, single: true }] },
    });
    expect(batch.status).toBe(200);
    expect(batch.body.results[0].status).toBe(201);
    await finalizePackage(svc, pkg);
    const files = await call(svc.url, 'GET', `/v1/packages/${pkg.id}/files`, { headers: owner.h });
    expect(files.body.filter((f: any) => f.kind === 'file').map((f: any) => f.name)).toEqual(['big.bin']);
  });
});

describe('the token ends with its Portal', () => {
  const refusals = async (pkg: Pkg, status: number, code: string) => {
    const reg = await entry(pkg, 'late.txt');
    expect(reg.status, JSON.stringify(reg.body)).toBe(status);
    expect(reg.body.code).toBe(code);
    expect((await call(svc.url, 'GET', `/v1/packages/${pkg.id}`, { headers: pkg.h })).body.code).toBe(code);
    expect((await call(svc.url, 'POST', `/v1/packages/${pkg.id}/finalize`, { headers: pkg.h })).status).toBe(status);
  };

  it('a deactivated Portal: its uploaders\' tokens answer 409 portal_inactive (blueprints and file finalize too); active again, they work', async () => {
    const p = await portal();
    const pkg = await anonymousPackage(p.id);
    const reg = await register(svc, pkg, { name: 'half.bin', size: 5 });
    const uploadId = await startUpload(reg.create_blueprint);
    await setPortal(p.id, { active: false });
    await refusals(pkg, 409, 'portal_inactive');
    const bp = await call(svc.url, 'POST', `/v1/packages/${pkg.id}/files/${reg.file.id}?start=0&count=1`, { headers: pkg.h, body: { upload_id: uploadId } });
    expect(bp.status).toBe(409);
    expect(bp.body.code).toBe('portal_inactive');
    const fin = await finalizeFile(svc, pkg, reg.file.id, uploadId, [{ part_number: '1', etag: 'x' }], 5);
    expect(fin.status).toBe(409);
    expect(fin.body.code).toBe('portal_inactive');
    await setPortal(p.id, { active: true });
    expect((await entry(pkg, 'again.txt')).status).toBe(201);
  });

  it('an expired Portal: 410 portal_expired', async () => {
    const p = await portal();
    const pkg = await anonymousPackage(p.id);
    await setPortal(p.id, { expiry_enabled: true, expiry: new Date(Date.now() - 1000).toISOString() });
    await refusals(pkg, 410, 'portal_expired');
  });

  it('a deleted Portal: 410 portal_deleted, and the Package stays the Team\'s to finish or delete', async () => {
    const p = await portal();
    const pkg = await anonymousPackage(p.id);
    expect((await entry(pkg, 'first.txt')).status).toBe(201);
    expect((await call(svc.url, 'DELETE', `/v1/portals/${p.id}`, { headers: owner.h })).status).toBe(204);
    await refusals(pkg, 410, 'portal_deleted');
    expect((await call(svc.url, 'POST', `/v1/packages/${pkg.id}/finalize`, { headers: owner.h })).status).toBe(204);
  });

  it('a member\'s Portal Package keeps a full-access token that the Portal\'s state does not touch', async () => {
    const p = await portal();
    const r = await call(svc.url, 'POST', `/v1/portals/${p.id}/packages`, { headers: owner.h, body: PKG });
    expect(r.status).toBe(201);
    const pkg = asPkg(r.body);
    expect(decodeJwt(pkg.token).exp).toBeUndefined();
    await setPortal(p.id, { active: false });
    expect((await entry(pkg, 'mine.txt')).status).toBe(201);
    expect((await call(svc.url, 'GET', `/v1/packages/${pkg.id}/files`, { headers: pkg.h })).status).toBe(200);
  });

  it('an uploader\'s token carries an expiry: a week by default', async () => {
    const pkg = await anonymousPackage((await portal()).id);
    const { exp, iat } = decodeJwt(pkg.token);
    expect(exp! - iat!).toBe(7 * 24 * 3600);
  });

  it('an uploader\'s token is refused once it expires (--upload-token-ttl-hours)', async () => {
    const short = await startTestService({ 'upload-token-ttl-hours': '0.0005' });
    try {
      const { owner: o } = await teamActors(short, 'short');
      const p = await call(short.url, 'POST', `/v1/teams/${o.teamId}/portals`, { headers: o.h, body: { name: 'S', subdomain: 'short-lived', active: true } });
      const r = await call(short.url, 'POST', `/v1/portals/${p.body.id}/packages`, { body: PKG });
      const h = { 'x-package-token': r.body.access_token };
      const { exp, iat } = decodeJwt(r.body.access_token);
      expect(exp! - iat!).toBe(2);
      const at = () => call(short.url, 'GET', `/v1/packages/${r.body.id}`, { headers: h });
      expect((await at()).status).toBe(200);
      // Bounded wait for the token to run out (no timing asserted).
      let status = 200;
      for (let i = 0; i < 100 && status === 200; i++) {
        await new Promise((res) => setTimeout(res, 100));
        status = (await at()).status;
      }
      expect(status).toBe(401);
    } finally {
      await short.close();
    }
  });
});
