// Links over real HTTP: who may make, list and delete them, and what a
// recipient gets when opening one (404 / 410 / 401 / 403 / 200).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, startTestService, type TestService } from '../../helpers/hosted.js';
import { newActor, ownerActor, type Actor } from '../../helpers/auth.js';
import { createPackage, finalizePackage, makeLink, uploadFile, type Pkg } from '../../helpers/flow.js';

let svc: TestService;
let owner: Actor;
let pkg: Pkg;

beforeAll(async () => {
  svc = await startTestService();
  owner = await ownerActor(svc);
  pkg = await createPackage(svc, owner, { name: 'Links test' });
  await uploadFile(svc, pkg, 'a.txt', '', Buffer.from('hello'));
  await finalizePackage(svc, pkg);
});
afterAll(async () => {
  await svc?.close();
});

const open = (l: { id: string; secret: string }, headers: Record<string, string> = {}) =>
  call(svc.url, 'GET', `/v1/links/${l.id}?secret=${encodeURIComponent(l.secret)}`, { headers });

describe('making Links', () => {
  it('needs a finalized Package (409 while new)', async () => {
    const fresh = await createPackage(svc, owner);
    const r = await call(svc.url, 'POST', `/v1/packages/${fresh.id}/links`, { headers: fresh.h, body: {} });
    expect(r.status).toBe(409);
  });

  it('takes the package token or a member API key, answers the secret once and lists Links without it', async () => {
    const a = await makeLink(svc, pkg, { email: 'a@example.com' });
    expect(a).toMatchObject({ email: 'a@example.com', locked: false, expiry: null });
    const byKey = await call(svc.url, 'POST', `/v1/packages/${pkg.id}/links`, { headers: owner.h, body: { access_limit: 3 } });
    expect(byKey.status).toBe(201);
    expect(byKey.body.access_limit).toBe(3);
    const noBody = await call(svc.url, 'POST', `/v1/packages/${pkg.id}/links`, { headers: pkg.h });
    expect(noBody.status).toBe(201);

    const list = await call(svc.url, 'GET', `/v1/packages/${pkg.id}/links`, { headers: pkg.h });
    expect(list.status).toBe(200);
    const ids = list.body.map((l: any) => l.id);
    expect(ids).toEqual(expect.arrayContaining([a.id, byKey.body.id, noBody.body.id]));
    for (const l of list.body) {
      expect(l).not.toHaveProperty('secret');
      expect(l).not.toHaveProperty('url');
    }
    const row = await svc.ctx.db.selectFrom('links').selectAll().where('id', '=', a.id).executeTakeFirstOrThrow();
    expect(row.secret_hash).not.toContain(a.secret);
  });

  it('answers 404 to a member of another Team and 401 without credentials', async () => {
    const stranger = await newActor(svc, 'stranger-links@example.com');
    expect((await call(svc.url, 'POST', `/v1/packages/${pkg.id}/links`, { headers: stranger.h, body: {} })).status).toBe(404);
    expect((await call(svc.url, 'GET', `/v1/packages/${pkg.id}/links`, { headers: stranger.h })).status).toBe(404);
    expect((await call(svc.url, 'POST', `/v1/packages/${pkg.id}/links`, { body: {} })).status).toBe(401);
  });

  it('refuses an expiry in the past and a malformed e-mail with 400', async () => {
    const past = await call(svc.url, 'POST', `/v1/packages/${pkg.id}/links`, { headers: pkg.h, body: { expiry: '2001-01-01T00:00:00Z' } });
    expect(past.status).toBe(400);
    const mail = await call(svc.url, 'POST', `/v1/packages/${pkg.id}/links`, { headers: pkg.h, body: { email: 'not an email' } });
    expect(mail.status).toBe(400);
  });
});

describe('opening Links', () => {
  it('answers 404 for an unknown id, a wrong or missing secret, and an inactive Link', async () => {
    const l = await makeLink(svc, pkg);
    expect((await open({ id: 'lnk_nope', secret: l.secret })).status).toBe(404);
    expect((await open({ id: l.id, secret: 'wrong' })).status).toBe(404);
    expect((await call(svc.url, 'GET', `/v1/links/${l.id}`)).status).toBe(404);
    const inactive = await makeLink(svc, pkg, { active: false });
    expect((await open(inactive)).status).toBe(404);
  });

  it('counts accesses and answers 403 past the access limit', async () => {
    const l = await makeLink(svc, pkg, { access_limit: 2 });
    expect((await open(l)).status).toBe(200);
    expect((await open(l)).status).toBe(200);
    const third = await open(l);
    expect(third.status).toBe(403);
    expect(third.body.code).toBe('access_limit_reached');
    const row = await svc.ctx.db.selectFrom('links').select('access_count').where('id', '=', l.id).executeTakeFirstOrThrow();
    expect(row.access_count).toBe(2);
  });

  it('never lets concurrent openings exceed the access limit', async () => {
    const l = await makeLink(svc, pkg, { access_limit: 3 });
    const answers = await Promise.all(Array.from({ length: 10 }, () => open(l)));
    expect(answers.filter((a) => a.status === 200)).toHaveLength(3);
    expect(answers.filter((a) => a.status === 403)).toHaveLength(7);
  });

  it('answers 410 once the Link or the Package has expired', async () => {
    const l = await makeLink(svc, pkg, { expiry: new Date(Date.now() + 3600_000).toISOString() });
    const ok = await open(l);
    expect(ok.status).toBe(200);
    await svc.ctx.db.updateTable('links').set({ expiry: '2001-01-01T00:00:00.000Z' }).where('id', '=', l.id).execute();
    expect((await open(l)).status).toBe(410);
    // The token obtained earlier dies with the Link as well.
    const files = await call(svc.url, 'GET', `/v1/packages/${pkg.id}/files`, { headers: { 'x-package-token': ok.body.package_token } });
    expect(files.status).toBe(410);

    const other = await createPackage(svc, owner);
    await finalizePackage(svc, other);
    const l2 = await makeLink(svc, other);
    await svc.ctx.db.updateTable('packages').set({ state: 'expired' }).where('id', '=', other.id).execute();
    expect((await open(l2)).status).toBe(410);
  });

  it('uses the Package password by default; an empty password makes an open Link', async () => {
    const locked = await createPackage(svc, owner, { password: 'pkg-pass' });
    await finalizePackage(svc, locked);
    const l = await makeLink(svc, locked);
    expect(l.locked).toBe(true);
    expect((await open(l)).status).toBe(401);
    expect((await open(l, { 'x-link-password': 'pkg-pass' })).status).toBe(200);
    const unlocked = await makeLink(svc, locked, { password: '' });
    expect(unlocked.locked).toBe(false);
    expect((await open(unlocked)).status).toBe(200);
  });
});

describe('deleting Links', () => {
  it('lets the package token or a member delete a Link; it and its token stop working', async () => {
    const l = await makeLink(svc, pkg);
    const info = await open(l);
    const stranger = await newActor(svc, 'stranger-delete@example.com');
    expect((await call(svc.url, 'DELETE', `/v1/links/${l.id}`)).status).toBe(401);
    expect((await call(svc.url, 'DELETE', `/v1/links/${l.id}`, { headers: stranger.h })).status).toBe(404);
    expect((await call(svc.url, 'DELETE', `/v1/links/${l.id}`, { headers: { 'x-package-token': info.body.package_token } })).status).toBe(403);

    expect((await call(svc.url, 'DELETE', `/v1/links/${l.id}`, { headers: pkg.h })).status).toBe(204);
    expect((await open(l)).status).toBe(404);
    const files = await call(svc.url, 'GET', `/v1/packages/${pkg.id}/files`, { headers: { 'x-package-token': info.body.package_token } });
    expect(files.status).toBe(401);

    const byKey = await makeLink(svc, pkg);
    expect((await call(svc.url, 'DELETE', `/v1/links/${byKey.id}`, { headers: owner.h })).status).toBe(204);
    expect((await call(svc.url, 'DELETE', `/v1/links/${byKey.id}`, { headers: owner.h })).status).toBe(404);
  });
});
