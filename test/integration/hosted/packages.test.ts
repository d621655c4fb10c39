// Team Packages: create, get, update, expiry and delete through real HTTP.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, startTestService, type TestService } from '../../helpers/hosted.js';
import { newActor, ownerActor, type Actor } from '../../helpers/auth.js';
import { PASSWORD_MASK } from '../../../src/api/hosted/packages.js';

let svc: TestService;
let owner: Actor;
let member: Actor;
let stranger: Actor;
const FUTURE = '2099-06-01T12:00:00.000Z';

beforeAll(async () => {
  svc = await startTestService();
  owner = await ownerActor(svc);
  member = await newActor(svc, 'member@example.com', { teamId: owner.teamId, role: 'member' });
  stranger = await newActor(svc, 'stranger@example.com');
});
afterAll(async () => svc?.close());

const body = (extra: Record<string, unknown> = {}) => ({ name: 'Dailies', description: 'day 1', recipients: ['a@example.com'], ...extra });
const create = (extra: Record<string, unknown> = {}, headers = owner.h) =>
  call(svc.url, 'POST', `/v1/teams/${owner.teamId}/packages`, { headers, body: body(extra) });
const row = (id: string) => svc.ctx.db.selectFrom('packages').selectAll().where('id', '=', id).executeTakeFirstOrThrow();
const count = async () => Number((await svc.ctx.db.selectFrom('packages').select((eb) => eb.fn.countAll().as('n')).executeTakeFirstOrThrow()).n);
const finalize = (id: string) => svc.ctx.db.updateTable('packages').set({ state: 'finalized', expiry: FUTURE }).where('id', '=', id).execute();

describe('POST /v1/teams/{team_id}/packages', () => {
  it('creates a new Package with every field of the Package object', async () => {
    const res = await create({ recipients: ['B@Example.com', 'b@example.com', 'c@example.com'], access_limit: 3, password: 'pw', chunk_size: 8 * 1024 * 1024 });
    expect(res.status).toBe(201);
    const p = res.body;
    expect(p).toMatchObject({
      name: 'Dailies', description: 'day 1', sender: owner.email, recipients: ['b@example.com', 'c@example.com'],
      state: 'new', size: 0, total_files: 0, access_limit: 3, password: PASSWORD_MASK, contains_virus: false,
      custom_expiry: false, custom_metadata_id: null, expiry: null, unlimited_storage: false, teamspace: null,
      chunk_size: 8 * 1024 * 1024, tag: null,
    });
    expect(p.id).toMatch(/^pkg_/);
    expect(typeof p.created_at).toBe('string');
    expect(typeof p.updated_at).toBe('string');
    const stored = await row(p.id);
    expect(stored.password_hash).toMatch(/^scrypt\$/);
    expect(stored.created_by).toBe(owner.userId);
  });

  it('gives a full-access token that reads the Package', async () => {
    const p = (await create()).body;
    const res = await call(svc.url, 'GET', `/v1/packages/${p.id}`, { headers: { 'x-package-token': p.access_token } });
    expect(res.status).toBe(200);
    expect(res.body.id).toBe(p.id);
    expect(res.body.password).toBe('');
  });

  it('lets a member create with a user token, in a Teamspace of theirs; the sender is that member', async () => {
    const m = await svc.ctx.db.selectFrom('memberships').select('id').where('user_id', '=', member.userId).executeTakeFirstOrThrow();
    const space = await call(svc.url, 'POST', `/v1/teams/${owner.teamId}/spaces`, { headers: owner.h, body: { name: 'Editors', membership_ids: [m.id] } });
    expect(space.status, JSON.stringify(space.body)).toBe(201);
    const res = await create({ teamspace_id: space.body.id, unlimited_storage: true }, { 'x-user-token': member.userToken });
    expect(res.status).toBe(201);
    expect(res.body).toMatchObject({ sender: member.email, teamspace: { id: space.body.id, name: 'Editors' }, unlimited_storage: true });
  });

  it('answers 404 for another Team and 401 without credentials', async () => {
    expect((await create({}, stranger.h)).status).toBe(404);
    expect((await call(svc.url, 'POST', `/v1/teams/${owner.teamId}/packages`, { body: body() })).status).toBe(401);
  });

  it('rejects bad input with 400 and creates nothing, not even the tag', async () => {
    await svc.ctx.db.updateTable('teams').set({ max_email_recipients: 2 }).where('id', '=', owner.teamId).execute();
    const before = await count();
    const bad: Record<string, unknown>[] = [
      { name: '' },
      { name: 'a\u0000b' },
      { name: 42 },
      { recipients: ['not-an-email'] },
      { recipients: ['a@x.com', 'b@x.com', 'c@x.com'] },
      { chunk_size: 1024 },
      { chunk_size: 6 * 1024 * 1024 * 1024 },
      { access_limit: -1 },
    ];
    for (const extra of bad) {
      const res = await create({ ...extra, tag: { name: 'should-not-exist' } });
      expect(res.status, JSON.stringify(extra)).toBe(400);
      expect(res.body.code).toBeTruthy();
    }
    const missing = await call(svc.url, 'POST', `/v1/teams/${owner.teamId}/packages`, { headers: owner.h, body: { name: 'x', recipients: [] } });
    expect(missing.status).toBe(400);
    expect(await count()).toBe(before);
    const tag = await svc.ctx.db.selectFrom('tags').select('id').where('name', '=', 'should-not-exist').executeTakeFirst();
    expect(tag).toBeUndefined();
    await svc.ctx.db.updateTable('teams').set({ max_email_recipients: 50 }).where('id', '=', owner.teamId).execute();
  });
});

describe('GET /v1/packages/{package_id}', () => {
  it('answers a member of the Team, and 404 to another Team and to another Package token', async () => {
    const p = (await create()).body;
    const q = (await create()).body;
    expect((await call(svc.url, 'GET', `/v1/packages/${p.id}`, { headers: member.h })).status).toBe(200);
    expect((await call(svc.url, 'GET', `/v1/packages/${p.id}`, { headers: stranger.h })).status).toBe(404);
    expect((await call(svc.url, 'GET', `/v1/packages/${p.id}`, { headers: { 'x-package-token': q.access_token } })).status).toBe(404);
    expect((await call(svc.url, 'GET', `/v1/packages/pkg_nope`, { headers: owner.h })).status).toBe(404);
  });
});

describe('PUT /v1/packages/{package_id}', () => {
  it('updates the editable fields of a new Package', async () => {
    const p = (await create({ password: 'old', tag: { name: 'first' } })).body;
    const res = await call(svc.url, 'PUT', `/v1/packages/${p.id}`, {
      headers: { 'x-package-token': p.access_token },
      body: { ...p, name: 'Renamed', description: 'new text', recipients: ['z@example.com'], access_limit: 9, chunk_size: 0, tag: { name: 'second' } },
    });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ name: 'Renamed', description: 'new text', recipients: ['z@example.com'], access_limit: 9, password: PASSWORD_MASK });
    expect(res.body.tag.name).toBe('second');
  });

  it('keeps the password when the mask is sent back, replaces it with a new value, removes it with ""', async () => {
    const p = (await create({ password: 'old' })).body;
    const h = { 'x-package-token': p.access_token };
    const hash0 = (await row(p.id)).password_hash;
    expect((await call(svc.url, 'PUT', `/v1/packages/${p.id}`, { headers: h, body: p })).status).toBe(200);
    expect((await row(p.id)).password_hash).toBe(hash0);
    await call(svc.url, 'PUT', `/v1/packages/${p.id}`, { headers: h, body: { ...p, password: 'new' } });
    const hash1 = (await row(p.id)).password_hash;
    expect(hash1).not.toBe(hash0);
    expect(hash1).toMatch(/^scrypt\$/);
    const cleared = await call(svc.url, 'PUT', `/v1/packages/${p.id}`, { headers: h, body: { ...p, password: '' } });
    expect(cleared.body.password).toBe('');
    expect((await row(p.id)).password_hash).toBeNull();
  });

  it('removes the tag when tag is omitted', async () => {
    const p = (await create({ tag: { name: 'keep-me' } })).body;
    expect(p.tag.name).toBe('keep-me');
    const { tag: _omitted, ...rest } = p;
    const res = await call(svc.url, 'PUT', `/v1/packages/${p.id}`, { headers: owner.h, body: rest });
    expect(res.status).toBe(200);
    expect(res.body.tag).toBeNull();
  });

  it('refuses to change recipients or chunk size once finalized (409), but accepts them unchanged', async () => {
    const p = (await create()).body;
    await finalize(p.id);
    const h = { 'x-package-token': p.access_token };
    const r1 = await call(svc.url, 'PUT', `/v1/packages/${p.id}`, { headers: h, body: { ...p, name: 'N', recipients: ['other@example.com'] } });
    expect(r1.status).toBe(409);
    const r2 = await call(svc.url, 'PUT', `/v1/packages/${p.id}`, { headers: h, body: { ...p, name: 'N', chunk_size: 16 * 1024 * 1024 } });
    expect(r2.status).toBe(409);
    expect((await row(p.id)).name).toBe('Dailies');
    const ok = await call(svc.url, 'PUT', `/v1/packages/${p.id}`, { headers: h, body: { ...p, name: 'N' } });
    expect(ok.status).toBe(200);
    expect(ok.body).toMatchObject({ name: 'N', state: 'finalized', recipients: ['a@example.com'] });
  });

  it('turns unlimited storage on and off; off restarts the Team default period of a finalized Package', async () => {
    const p = (await create()).body;
    await finalize(p.id);
    const on = await call(svc.url, 'PUT', `/v1/packages/${p.id}`, { headers: owner.h, body: { ...p, unlimited_storage: true } });
    expect(on.body).toMatchObject({ unlimited_storage: true, expiry: null });
    const off = await call(svc.url, 'PUT', `/v1/packages/${p.id}`, { headers: owner.h, body: { ...p, unlimited_storage: false } });
    expect(off.body.unlimited_storage).toBe(false);
    expect(Date.parse(off.body.expiry)).toBeGreaterThan(Date.now() + 6 * 24 * 3600 * 1000);
  });

  it('answers 400 without a name, 409 on an expired Package, 404 for another Team', async () => {
    const p = (await create()).body;
    const noName = await call(svc.url, 'PUT', `/v1/packages/${p.id}`, { headers: owner.h, body: { description: 'x' } });
    expect(noName.status).toBe(400);
    expect((await call(svc.url, 'PUT', `/v1/packages/${p.id}`, { headers: stranger.h, body: p })).status).toBe(404);
    expect((await call(svc.url, 'DELETE', `/v1/packages/${p.id}`, { headers: owner.h })).status).toBe(204);
    const expired = await call(svc.url, 'PUT', `/v1/packages/${p.id}`, { headers: owner.h, body: { ...p, name: 'late' } });
    expect(expired.status).toBe(409);
    expect((await row(p.id)).name).toBe('Dailies');
  });
});

describe('PUT /v1/packages/{package_id}/expiry', () => {
  it('sets a custom expiry on new and finalized Packages', async () => {
    const p = (await create()).body;
    const res = await call(svc.url, 'PUT', `/v1/packages/${p.id}/expiry`, { headers: { 'x-package-token': p.access_token }, body: { expiry: '2098-01-02T03:04:05+02:00' } });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ expiry: '2098-01-02T01:04:05.000Z', custom_expiry: true, unlimited_storage: false });
    await finalize(p.id);
    const again = await call(svc.url, 'PUT', `/v1/packages/${p.id}/expiry`, { headers: owner.h, body: { expiry: FUTURE } });
    expect(again.body.expiry).toBe(FUTURE);
  });

  it('switches to unlimited storage without an expiry', async () => {
    const p = (await create()).body;
    const res = await call(svc.url, 'PUT', `/v1/packages/${p.id}/expiry`, { headers: owner.h, body: { unlimited_storage: true } });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ expiry: null, unlimited_storage: true, custom_expiry: true });
  });

  it('answers 400 for a past or missing expiry and changes nothing', async () => {
    const p = (await create()).body;
    for (const b of [{ expiry: '2001-01-01T00:00:00Z' }, {}, { unlimited_storage: false }, { expiry: 'tomorrow' }]) {
      const res = await call(svc.url, 'PUT', `/v1/packages/${p.id}/expiry`, { headers: owner.h, body: b });
      expect(res.status, JSON.stringify(b)).toBe(400);
    }
    expect((await row(p.id)).custom_expiry).toBe(0);
  });

  it('answers 409 once expired and 403 when the Team disabled custom expiry', async () => {
    const p = (await create()).body;
    await svc.ctx.db.updateTable('teams').set({ custom_expiry_enabled: 0 }).where('id', '=', owner.teamId).execute();
    const off = await call(svc.url, 'PUT', `/v1/packages/${p.id}/expiry`, { headers: owner.h, body: { expiry: FUTURE } });
    await svc.ctx.db.updateTable('teams').set({ custom_expiry_enabled: 1 }).where('id', '=', owner.teamId).execute();
    expect(off.status).toBe(403);
    await call(svc.url, 'DELETE', `/v1/packages/${p.id}`, { headers: owner.h });
    const late = await call(svc.url, 'PUT', `/v1/packages/${p.id}/expiry`, { headers: owner.h, body: { expiry: FUTURE } });
    expect(late.status).toBe(409);
  });
});

describe('DELETE /v1/packages/{package_id}', () => {
  it('expires a new Package, keeping its name and recipients; a second delete answers 409', async () => {
    const p = (await create()).body;
    const res = await call(svc.url, 'DELETE', `/v1/packages/${p.id}`, { headers: { 'x-package-token': p.access_token } });
    expect(res.status).toBe(204);
    const after = (await call(svc.url, 'GET', `/v1/packages/${p.id}`, { headers: owner.h })).body;
    expect(after).toMatchObject({ state: 'expired', name: 'Dailies', recipients: ['a@example.com'] });
    expect(after.expiry).not.toBeNull();
    expect((await row(p.id)).objects_deleted).toBe(1);
    expect((await call(svc.url, 'DELETE', `/v1/packages/${p.id}`, { headers: owner.h })).status).toBe(409);
  });

  it('expires a finalized Package and moves its expiry to the deletion time', async () => {
    const p = (await create()).body;
    await finalize(p.id);
    expect((await call(svc.url, 'DELETE', `/v1/packages/${p.id}`, { headers: owner.h })).status).toBe(204);
    const r = await row(p.id);
    expect(r.state).toBe('expired');
    expect(r.expiry! < FUTURE).toBe(true);
  });

  it('answers 404 to another Team', async () => {
    const p = (await create()).body;
    expect((await call(svc.url, 'DELETE', `/v1/packages/${p.id}`, { headers: stranger.h })).status).toBe(404);
    expect((await row(p.id)).state).toBe('new');
  });
});
