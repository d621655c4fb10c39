// Packages that arrive through a Portal: creation with the access code or a
// member's credential (and every refusal), the full upload on the Package token,
// the Team's list and inbox archive, the Portal's limits (413), its period, and
// the e-mail its recipients get in DATA_DIR/outbox.
import fs from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { call, startTestService, type TestService } from '../../helpers/hosted.js';
import { teamActors, type Actor } from '../../helpers/auth.js';
import { HostedApiError, HostedHttp } from '../../../src/client/http.js';
import { createPortalPackage, getPortalBySubdomain, getPortalWithAccessCode } from '../../../src/client/portals.js';
import { downloadAll, finalizeFile, finalizePackage, putParts, register, startUpload, uploadFile, type Pkg } from '../../helpers/flow.js';

let svc: TestService;
let owner: Actor;
let member: Actor;
let stranger: Actor;

beforeAll(async () => {
  svc = await startTestService();
  ({ owner, member, stranger } = await teamActors(svc, 'inbox'));
});
afterAll(async () => svc?.close());

let seq = 0;
async function portal(body: Record<string, unknown> = {}) {
  const r = await call(svc.url, 'POST', `/v1/teams/${owner.teamId}/portals`, { headers: owner.h, body: { name: 'Inbox', subdomain: `inbox-${++seq}`, active: true, ...body } });
  expect(r.status, JSON.stringify(r.body)).toBe(201);
  return r.body;
}
const CODE = 'open sesame/ü%';
const withCode = (c = CODE) => ({ 'x-access-code': encodeURIComponent(c) });
const PKG = { name: 'Rushes day 1', description: 'from the set', sender: 'Sender@Example.com' };
const createIn = (portalId: string, headers: Record<string, string> = {}, body: Record<string, unknown> = PKG) =>
  call(svc.url, 'POST', `/v1/portals/${portalId}/packages`, { headers, body });
const asPkg = (b: any): Pkg => ({ id: b.id, token: b.access_token, h: { 'x-package-token': b.access_token }, body: b });
const pkgRow = (id: string) => svc.ctx.db.selectFrom('packages').selectAll().where('id', '=', id).executeTakeFirstOrThrow();
const packageCount = async () => Number((await svc.ctx.db.selectFrom('packages').select((eb) => eb.fn.countAll().as('n')).executeTakeFirstOrThrow()).n);
const fileCount = async (id: string) => (await svc.ctx.db.selectFrom('files').select('id').where('package_id', '=', id).execute()).length;

/** The .eml files of the outbox addressed to `to` that mention `text`. */
async function mailsTo(to: string, text: string): Promise<string[]> {
  const dir = path.join(svc.dataDir, 'outbox');
  const names = (await fs.readdir(dir).catch(() => [] as string[])).filter((f) => f.endsWith('.eml'));
  const all = await Promise.all(names.map((n) => fs.readFile(path.join(dir, n), 'utf8')));
  return all.filter((m) => new RegExp(`^To: ${to.replace(/[.]/g, '\\.')}$`, 'm').test(m) && m.includes(text));
}

describe('POST /v1/portals/{portal_id}/packages: who may create', () => {
  it('anyone with the URI-encoded access code: 201 with the Package and its token', async () => {
    const p = await portal({ access_code: CODE });
    const r = await createIn(p.id, withCode());
    expect(r.status, JSON.stringify(r.body)).toBe(201);
    expect(r.body).toMatchObject({ name: PKG.name, description: PKG.description, sender: 'sender@example.com', state: 'new' });
    expect(typeof r.body.access_token).toBe('string');
  });

  it('a member of the Portal\'s Team without the code', async () => {
    const p = await portal({ access_code: CODE });
    const r = await createIn(p.id, member.h);
    expect(r.status).toBe(201);
    expect((await pkgRow(r.body.id)).created_by).toBe(member.userId);
  });

  it('refuses a missing or wrong code with 401, and creates nothing', async () => {
    const p = await portal({ access_code: CODE });
    const before = await packageCount();
    const missing = await createIn(p.id);
    expect(missing.status).toBe(401);
    expect(missing.body.code).toBe('access_code_required');
    const wrong = await createIn(p.id, withCode('open sesame'));
    expect(wrong.status).toBe(401);
    expect(wrong.body.code).toBe('invalid_access_code');
    // Another Team's key is no credential for this Portal: the code is still needed.
    expect((await createIn(p.id, stranger.h)).status).toBe(401);
    expect(await packageCount()).toBe(before);
  });

  it('answers 404 for an unknown or inactive Portal (409 to a member), 410 once expired', async () => {
    expect((await createIn('prt_unknown')).status).toBe(404);
    const off = await portal({ active: false });
    expect((await createIn(off.id)).status).toBe(404);
    const r = await createIn(off.id, member.h);
    expect(r.status).toBe(409);
    expect(r.body.code).toBe('portal_inactive');
    const old = await portal({ expiry_enabled: true, expiry: '2001-01-01T00:00:00Z' });
    expect((await createIn(old.id)).status).toBe(410);
  });

  it('user_authentication_required: 401 without a credential, 403 for another Team, 201 for a member', async () => {
    const p = await portal({ user_authentication_required: true });
    expect((await createIn(p.id)).status).toBe(401);
    expect((await createIn(p.id, stranger.h)).status).toBe(403);
    expect((await createIn(p.id, { 'x-user-token': member.userToken })).status).toBe(201);
  });

  it('enforces package_name_format and validates the body (400), creating nothing', async () => {
    const p = await portal({ package_name_format: '^PRJ-\\d{3}$' });
    const before = await packageCount();
    const off = await createIn(p.id, {}, { ...PKG, name: 'Holiday' });
    expect(off.status).toBe(400);
    expect(off.body.code).toBe('package_name_format');
    for (const body of [{ ...PKG, sender: undefined }, { ...PKG, sender: 'nope' }, { ...PKG, description: undefined }, { ...PKG, name: '' }, { ...PKG, chunk_size: 1 }]) {
      expect((await createIn(p.id, {}, body)).status).toBe(400);
    }
    expect(await packageCount()).toBe(before);
    expect((await createIn(p.id, {}, { ...PKG, name: 'PRJ-042' })).status).toBe(201);
  });
});

describe('a Portal upload end to end', () => {
  it('arrives in the Team: listed, mailed to the Portal\'s recipients, downloadable, archivable from the inbox', async () => {
    const tag = { name: 'from-clients' };
    const p = await portal({ access_code: CODE, recipients: ['alice@example.com', 'bob@example.com'], tag, download_password: 'pw' });
    const r = await createIn(p.id, withCode(), { ...PKG, name: 'Client delivery' });
    expect(r.status).toBe(201);
    // The anonymous uploader does not see whom the Portal notifies; the row holds them.
    expect(r.body).toMatchObject({ recipients: [], tag: { name: 'from-clients' }, password: '********' });
    const row = await pkgRow(r.body.id);
    expect(row).toMatchObject({ portal_id: p.id, team_id: owner.teamId, created_by: null, sender: 'sender@example.com' });
    expect(JSON.parse(row.recipients)).toEqual(['alice@example.com', 'bob@example.com']);

    const pkg = asPkg(r.body);
    const data = Buffer.alloc(6 * 1024 * 1024, 7);
    const reg = await register(svc, pkg, { name: 'take1.mov', path: 'day1', size: data.length });
    const uploadId = await startUpload(reg.create_blueprint);
    const parts = await putParts(svc, pkg, reg.file.id, uploadId, data);
    expect((await finalizeFile(svc, pkg, reg.file.id, uploadId, parts, data.length)).status).toBe(204);
    await finalizePackage(svc, pkg);

    const list = await call(svc.url, 'GET', `/v1.1/teams/${owner.teamId}/packages?name=Client%20delivery`, { headers: member.h });
    expect(list.body.records).toHaveLength(1);
    expect(list.body.records[0]).toMatchObject({ id: pkg.id, state: 'finalized', size: data.length, total_files: 1, sender: 'sender@example.com' });

    for (const to of ['alice@example.com', 'bob@example.com']) {
      const mail = await vi.waitFor(async () => {
        const found = await mailsTo(to, 'Client delivery');
        expect(found).toHaveLength(1);
        return found[0]!;
      }, { timeout: 20_000 });
      const m = /\/l\/(lnk_[A-Za-z0-9]+)\?secret=([A-Za-z0-9_-]+)/.exec(mail.replace(/=\r?\n/g, '').replace(/=3D/g, '='));
      expect(m, mail).not.toBeNull();
      const files = await downloadAll(svc, { id: m![1]!, secret: m![2]! }, 'pw');
      expect(files.get('day1/take1.mov')?.equals(data)).toBe(true);
    }

    // Deleted (expired now), it is archived by the inbox range, not by the sent one.
    // The Team deletes it (the anonymous uploader's token may not).
    expect((await call(svc.url, 'DELETE', `/v1/packages/${pkg.id}`, { headers: owner.h })).status).toBe(204);
    const range = { expiry_start: '2000-01-01T00:00:00Z', expiry_end: '2999-01-01T00:00:00Z' };
    const sent = await call(svc.url, 'PUT', `/v1/teams/${owner.teamId}/archive`, { headers: owner.h, body: range });
    expect((await pkgRow(pkg.id)).state).toBe('expired');
    expect(sent.status).toBe(200);
    const inbox = await call(svc.url, 'PUT', `/v1/teams/${owner.teamId}/inbox/archive`, { headers: owner.h, body: range });
    expect(inbox.body.count).toBeGreaterThanOrEqual(1);
    expect((await pkgRow(pkg.id)).state).toBe('archived');
  });

  it('gives an anonymous uploader a files-only token: it cannot redirect the Package, and the Portal\'s recipients are mailed', async () => {
    const p = await portal({ recipients: ['carol@example.com'] });
    const pkg = asPkg((await createIn(p.id, {}, { ...PKG, name: 'Redirect attempt' })).body);
    const put = await call(svc.url, 'PUT', `/v1/packages/${pkg.id}`, { headers: pkg.h, body: { name: 'Redirect attempt', recipients: ['mallory@example.com'] } });
    expect(put.status).toBe(403);
    for (const [method, path] of [['GET', '/files'], ['DELETE', ''], ['PUT', '/archive'], ['GET', '/links']] as const) {
      expect((await call(svc.url, method, `/v1/packages/${pkg.id}${path}`, { headers: pkg.h })).status).toBe(403);
    }
    // It reads the Package's own state only, without the Portal's recipients.
    expect((await call(svc.url, 'GET', `/v1/packages/${pkg.id}`, { headers: pkg.h })).body).toMatchObject({ state: 'new', recipients: [] });
    await uploadFile(svc, pkg, 'a.txt', '', Buffer.from('hello'));
    await finalizePackage(svc, pkg);
    await vi.waitFor(async () => expect(await mailsTo('carol@example.com', 'Redirect attempt')).toHaveLength(1), { timeout: 20_000 });
    expect(await mailsTo('mallory@example.com', 'Redirect attempt')).toHaveLength(0);
    expect(JSON.parse((await pkgRow(pkg.id)).recipients)).toEqual(['carol@example.com']);
  });

  it('keeps the Package for the Portal\'s custom_expiry_days, or until deleted with -1', async () => {
    const days = asPkg((await createIn((await portal({ custom_expiry_days: 3 })).id)).body);
    await uploadFile(svc, days, 'a.txt', '', Buffer.from('x'));
    await finalizePackage(svc, days);
    const row = await pkgRow(days.id);
    expect(Date.parse(row.expiry!) - Date.parse(row.finalized_at!)).toBe(3 * 24 * 3600 * 1000);

    const keep = asPkg((await createIn((await portal({ custom_expiry_days: -1 })).id)).body);
    expect(keep.body.unlimited_storage).toBe(true);
    await finalizePackage(svc, keep);
    expect((await pkgRow(keep.id)).expiry).toBeNull();
  });
});

describe('the Portal\'s limits (413)', () => {
  const limits = {
    package_size_restriction_enabled: true, max_file_size: 10, max_package_size: 15, max_file_count: 2,
    file_type_restriction_enabled: true, file_types: ['.txt'],
  };
  const entry = (pkg: Pkg, name: string, size?: number, kind = 'file') =>
    call(svc.url, 'POST', `/v1/packages/${pkg.id}/files`, { headers: pkg.h, body: { kind, name, path: '', last_modified: '2024-05-01T10:00:00Z', size } });

  it('refuses file types, file sizes, entry counts (folders count) and package sizes over the limits at registration', async () => {
    const pkg = asPkg((await createIn((await portal({ ...limits, max_file_count: 3 })).id)).body);
    const refused = async (name: string, size: number | undefined, status: number, code: string) => {
      const before = await fileCount(pkg.id);
      const r = await entry(pkg, name, size);
      expect(r.status, JSON.stringify(r.body)).toBe(status);
      expect(r.body).toEqual({ code, message: expect.any(String) });
      expect(await fileCount(pkg.id)).toBe(before);
    };
    await refused('clip.mov', 1, 413, 'file_type_not_allowed');
    await refused('big.txt', 11, 413, 'file_too_large');
    await refused('nosize.txt', undefined, 400, 'size_required');
    expect((await entry(pkg, 'A.TXT', 8)).status).toBe(201);
    await refused('b.txt', 8, 413, 'package_too_large');
    expect((await entry(pkg, 'folder', undefined, 'directory')).status).toBe(201);
    expect((await entry(pkg, 'b.txt', 7)).status).toBe(201);
    // Registering the same place again replaces the pending entry, so it does not count twice.
    expect((await entry(pkg, 'b.txt', 7)).status).toBe(201);
    await refused('c.txt', 0, 413, 'too_many_files');
  });

  it('checks each entry of a register_files request after the ones before it; a refused entry undoes only its own writes', async () => {
    const pkg = asPkg((await createIn((await portal(limits)).id)).body);
    const a = await register(svc, pkg, { name: 'a.txt', size: 8 });
    const batch = (sizes: [string, number][]) =>
      call(svc.url, 'POST', `/v1/packages/${pkg.id}/register_files`, {
        headers: pkg.h,
        body: { files: sizes.map(([name, size]) => ({ kind: 'file', name, path: '', last_modified: '2024-05-01T10:00:00Z', size, count: 1 })) },
      });
    // b fits beside a (14 of 15 bytes). a again would replace the pending a, but 6 + 10 is too
    // much: the refusal puts the pending a back. c would be a third file.
    const r = await batch([['b.txt', 6], ['a.txt', 10], ['c.txt', 1]]);
    expect(r.status, JSON.stringify(r.body)).toBe(200);
    expect(r.body.results.map((o: any) => [o.status, o.code])).toEqual([[201, undefined], [413, 'package_too_large'], [413, 'too_many_files']]);
    const rows = await svc.ctx.db.selectFrom('files').select(['id', 'name', 'size']).where('package_id', '=', pkg.id).orderBy('name').execute();
    expect(rows).toEqual([{ id: a.file.id, name: 'a.txt', size: 8 }, { id: r.body.results[0].registration.file.id, name: 'b.txt', size: 6 }]);
  });

  it('lets the store take no more than the registered size, nor the finalize claim more', async () => {
    const pkg = asPkg((await createIn((await portal(limits)).id)).body);
    const reg = await register(svc, pkg, { name: 'liar.txt', size: 4 });
    const uploadId = await startUpload(reg.create_blueprint);
    const bp = await call(svc.url, 'POST', `/v1/packages/${pkg.id}/files/${reg.file.id}?start=0&count=1`, { headers: pkg.h, body: { upload_id: uploadId } });
    // The part URL is bound to the 4 bytes registered: twelve are refused by the store itself.
    expect((await fetch(bp.body[0].url, { method: 'PUT', body: Buffer.from('twelve bytes') })).status).toBe(403);
    // Nor does a finalize go past the registered size.
    const r = await finalizeFile(svc, pkg, reg.file.id, uploadId, [{ part_number: '1', etag: 'x' }], 12);
    expect(r.status).toBe(409);
    expect(r.body.code).toBe('size_mismatch');
    const f = await svc.ctx.db.selectFrom('files').select('state').where('id', '=', reg.file.id).executeTakeFirstOrThrow();
    expect(f.state).toBe('pending');
  });

  it('leaves Packages sent by the Team alone', async () => {
    await portal(limits);
    const r = await call(svc.url, 'POST', `/v1/teams/${owner.teamId}/packages`, { headers: owner.h, body: { name: 'T', description: '', recipients: [] } });
    expect((await entry(asPkg(r.body), 'clip.mov', 1000)).status).toBe(201);
  });
});

describe('the typed client calls (src/client/portals.ts)', () => {
  it('finds a Portal by subdomain and creates a Package in it with the access code', async () => {
    const p = await portal({ access_code: CODE, message: 'Hello', package_size_restriction_enabled: true, max_file_count: 5 });
    const http = new HostedHttp(svc.url);
    try {
      const found = await getPortalBySubdomain(http, p.subdomain);
      expect(found).toMatchObject({ id: p.id, message: 'Hello', has_access_code: true, restrictions: { max_file_count: 5 } });
      const pkg = await createPortalPackage(http, found.id, PKG, { auth: { accessCode: CODE } });
      expect((await pkgRow(pkg.id)).portal_id).toBe(p.id);
      expect(await getPortalWithAccessCode(http, p.id, { auth: { accessCode: CODE } })).toEqual(found);
      const refused = await createPortalPackage(http, found.id, PKG, { auth: { accessCode: 'nope' } }).catch((e: unknown) => e);
      expect(refused).toBeInstanceOf(HostedApiError);
      expect(refused).toMatchObject({ status: 401, code: 'invalid_access_code' });
      await expect(getPortalBySubdomain(http, 'no-such-portal')).rejects.toMatchObject({ status: 404 });
    } finally {
      await http.close();
    }
  });
});
