// API key management: creation (secret shown once, stored hashed), listing,
// reads, updates, (de)activation and deletion, and the role rules around them.
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { call, startTestService, type TestService } from '../../helpers/hosted.js';
import { newActor, ownerActor, type Actor } from '../../helpers/auth.js';

let svc: TestService;
let owner: Actor;
let admin: Actor;
let member: Actor;
let stranger: Actor;

const ut = (a: Actor) => ({ 'x-user-token': a.userToken });
const future = () => new Date(Date.now() + 30 * 86400_000).toISOString();

async function createKey(a: Actor, body: Record<string, unknown> = { name: 'k' }, teamId = a.teamId) {
  return call(svc.url, 'POST', `/v1/teams/${teamId}/api_keys`, { headers: ut(a), body });
}
const me = (key: string) => call(svc.url, 'GET', '/v1/me', { headers: { 'x-api-key': key } });

beforeAll(async () => {
  svc = await startTestService();
  owner = await ownerActor(svc);
  admin = await newActor(svc, 'keys-admin@example.com', { teamId: owner.teamId, role: 'admin' });
  member = await newActor(svc, 'keys-member@example.com', { teamId: owner.teamId, role: 'member' });
  stranger = await newActor(svc, 'keys-stranger@example.com');
});
afterAll(() => svc?.close());

describe('POST /v1/teams/{team_id}/api_keys', () => {
  test('answers 201 with the full secret once, which then works as X-API-KEY', async () => {
    const expiry = future();
    const r = await createKey(owner, { name: 'ci', description: 'for the build', expiry });
    expect(r.status).toBe(201);
    expect(r.body).toEqual({
      id: expect.stringMatching(/^key_/),
      name: 'ci',
      description: 'for the build',
      key: expect.stringMatching(/^fk_[0-9A-Za-z]{40}$/),
      expiry,
      state: 'active',
      last_request_at: null,
      created_at: expect.any(String),
      updated_at: expect.any(String),
      owner: { id: owner.userId, email: svc.owner.email, name: expect.any(String) },
    });
    expect((await me(r.body.key)).body.id).toBe(owner.userId);

    const again = await call(svc.url, 'GET', `/v1/api_keys/${r.body.id}`, { headers: ut(owner) });
    expect(again.status).toBe(200);
    expect(again.body.key).not.toBe(r.body.key);
    expect(again.body.key).toBe(`${r.body.key.slice(0, 7)}…${r.body.key.slice(-4)}`);
    expect(again.body.last_request_at).toEqual(expect.any(String));
  });

  test('stores the secret hashed: the database row does not contain it', async () => {
    const r = await createKey(owner, { name: 'hashed' });
    const row = await svc.ctx.db.selectFrom('api_keys').selectAll().where('id', '=', r.body.id).executeTakeFirstOrThrow();
    expect(JSON.stringify(row)).not.toContain(r.body.key);
    expect(row.key_hash).toMatch(/^[0-9a-f]{64}$/);
  });

  test('a key may be created inactive, and is then refused', async () => {
    const r = await createKey(owner, { name: 'dormant', state: 'inactive' });
    expect(r.status).toBe(201);
    expect(r.body.state).toBe('inactive');
    expect((await me(r.body.key)).status).toBe(401);
  });

  test('an admin may create keys, a member may not (403)', async () => {
    expect((await createKey(admin, { name: 'admin key' })).status).toBe(201);
    const r = await createKey(member, { name: 'member key' });
    expect(r.status).toBe(403);
    expect(r.body.code).toBe('forbidden');
  });

  test('an API key cannot create keys: X-User-Token only (401)', async () => {
    const r = await call(svc.url, 'POST', `/v1/teams/${owner.teamId}/api_keys`, { headers: owner.h, body: { name: 'k' } });
    expect(r.status).toBe(401);
  });

  test("another Team answers 404", async () => {
    expect((await createKey(stranger, { name: 'k' }, owner.teamId)).status).toBe(404);
  });

  test('bad input answers 400 and creates nothing', async () => {
    const before = (await call(svc.url, 'GET', `/v1/teams/${owner.teamId}/api_keys`, { headers: ut(owner) })).body.length;
    const bad = [
      {},
      { name: '' },
      { name: 'a\u0000b' },
      { name: 'x'.repeat(201) },
      { name: 'k', expiry: 'tomorrow' },
      { name: 'k', expiry: '2001-01-01T00:00:00Z' },
      { name: 'k', state: 'paused' },
      { name: 42 },
    ];
    for (const body of bad) {
      const r = await createKey(owner, body);
      expect(r.status, JSON.stringify(body)).toBe(400);
    }
    const after = (await call(svc.url, 'GET', `/v1/teams/${owner.teamId}/api_keys`, { headers: ut(owner) })).body.length;
    expect(after).toBe(before);
  });
});

describe('GET /v1/teams/{team_id}/api_keys', () => {
  test('an owner sees every key of the Team, masked; an admin only their own', async () => {
    const ownKey = (await createKey(admin, { name: 'listed' })).body;
    const ownerView = await call(svc.url, 'GET', `/v1/teams/${owner.teamId}/api_keys`, { headers: ut(owner) });
    expect(ownerView.status).toBe(200);
    const owners = new Set(ownerView.body.map((k: { owner: { id: string } }) => k.owner.id));
    expect(owners).toContain(admin.userId);
    expect(owners).toContain(owner.userId);
    expect(owners).toContain(member.userId); // the helper gave the member a key
    for (const k of ownerView.body) expect(k.key).toMatch(/^fk_.{4}….{4}$/);
    expect(ownerView.body.map((k: { key: string }) => k.key)).not.toContain(ownKey.key);

    const adminView = await call(svc.url, 'GET', `/v1/teams/${owner.teamId}/api_keys`, { headers: ut(admin) });
    expect(adminView.status).toBe(200);
    expect(adminView.body.length).toBeGreaterThan(0);
    for (const k of adminView.body) expect(k.owner.id).toBe(admin.userId);
    expect(adminView.body.map((k: { id: string }) => k.id)).toContain(ownKey.id);
  });

  test('a member answers 403, an outsider 404, an API key 401', async () => {
    const path = `/v1/teams/${owner.teamId}/api_keys`;
    expect((await call(svc.url, 'GET', path, { headers: ut(member) })).status).toBe(403);
    expect((await call(svc.url, 'GET', path, { headers: ut(stranger) })).status).toBe(404);
    expect((await call(svc.url, 'GET', path, { headers: owner.h })).status).toBe(401);
  });
});

describe('GET, PUT, DELETE /v1/api_keys/{id}', () => {
  test('admins reach their own keys only; owners reach every key of the Team; other Teams 404', async () => {
    const ownerKey = (await createKey(owner, { name: 'owner only' })).body;
    const adminKey = (await createKey(admin, { name: 'admin own' })).body;
    const get = (a: Actor, id: string) => call(svc.url, 'GET', `/v1/api_keys/${id}`, { headers: ut(a) });
    expect((await get(admin, adminKey.id)).status).toBe(200);
    expect((await get(owner, adminKey.id)).status).toBe(200);
    expect((await get(admin, ownerKey.id)).status).toBe(404);
    expect((await get(stranger, ownerKey.id)).status).toBe(404);
    expect((await get(member, ownerKey.id)).status).toBe(403);
    expect((await get(owner, 'key_unknown')).status).toBe(404);
    expect((await call(svc.url, 'PUT', `/v1/api_keys/${ownerKey.id}/deactivate`, { headers: ut(admin) })).status).toBe(404);
    expect((await call(svc.url, 'DELETE', `/v1/api_keys/${ownerKey.id}`, { headers: ut(stranger) })).status).toBe(404);
    expect((await call(svc.url, 'GET', `/v1/api_keys/${ownerKey.id}`, { headers: owner.h })).status).toBe(401);
    expect((await me(ownerKey.key)).status).toBe(200);
  });

  test('PUT changes name, description, expiry and state, and answers the key masked', async () => {
    const k = (await createKey(admin, { name: 'before' })).body;
    const expiry = future();
    const r = await call(svc.url, 'PUT', `/v1/api_keys/${k.id}`, {
      headers: ut(admin),
      body: { name: 'after', description: 'changed', expiry, state: 'inactive' },
    });
    expect(r.status).toBe(200);
    expect(r.body).toMatchObject({ id: k.id, name: 'after', description: 'changed', expiry, state: 'inactive' });
    expect(r.body.key).not.toBe(k.key);
    expect((await me(k.key)).status).toBe(401);
    const cleared = await call(svc.url, 'PUT', `/v1/api_keys/${k.id}`, { headers: ut(admin), body: { expiry: null, state: 'active' } });
    expect(cleared.body).toMatchObject({ name: 'after', expiry: null, state: 'active' });
    expect((await me(k.key)).status).toBe(200);
  });

  test('PUT with bad input answers 400 and changes nothing', async () => {
    const k = (await createKey(owner, { name: 'stable' })).body;
    for (const body of [{ name: '' }, { expiry: '1999-01-01T00:00:00Z', name: 'changed' }, { state: 'on' }, { owner: 'usr_nobody', name: 'changed' }]) {
      const r = await call(svc.url, 'PUT', `/v1/api_keys/${k.id}`, { headers: ut(owner), body });
      expect(r.status, JSON.stringify(body)).toBe(400);
    }
    const now = await call(svc.url, 'GET', `/v1/api_keys/${k.id}`, { headers: ut(owner) });
    expect(now.body).toMatchObject({ name: 'stable', state: 'active', expiry: null, owner: { id: owner.userId } });
  });

  test('only an owner gives a key to another member of the Team', async () => {
    const k = (await createKey(admin, { name: 'handed over' })).body;
    const byAdmin = await call(svc.url, 'PUT', `/v1/api_keys/${k.id}`, { headers: ut(admin), body: { owner: owner.userId } });
    expect(byAdmin.status).toBe(403);
    // The owner object of a GET may be sent back unchanged by an admin.
    const same = await call(svc.url, 'PUT', `/v1/api_keys/${k.id}`, { headers: ut(admin), body: { owner: { id: admin.userId }, name: 'kept' } });
    expect(same.status).toBe(200);
    const outsider = await call(svc.url, 'PUT', `/v1/api_keys/${k.id}`, { headers: ut(owner), body: { owner: stranger.userId } });
    expect(outsider.status).toBe(400);
    const r = await call(svc.url, 'PUT', `/v1/api_keys/${k.id}`, { headers: ut(owner), body: { owner: { id: member.userId } } });
    expect(r.status).toBe(200);
    expect(r.body.owner).toEqual({ id: member.userId, email: 'keys-member@example.com', name: 'keys-member' });
    expect((await me(k.key)).body.id).toBe(member.userId);
    // The admin no longer owns it, so it is out of their reach.
    expect((await call(svc.url, 'GET', `/v1/api_keys/${k.id}`, { headers: ut(admin) })).status).toBe(404);
  });

  test('deactivate refuses the key (401) and activate lets it in again', async () => {
    const k = (await createKey(admin, { name: 'switch' })).body;
    const off = await call(svc.url, 'PUT', `/v1/api_keys/${k.id}/deactivate`, { headers: ut(admin) });
    expect(off.status).toBe(200);
    expect(off.body).toMatchObject({ id: k.id, state: 'inactive' });
    expect(off.body.key).not.toBe(k.key);
    expect((await me(k.key)).status).toBe(401);
    const on = await call(svc.url, 'PUT', `/v1/api_keys/${k.id}/activate`, { headers: ut(owner) });
    expect(on.status).toBe(200);
    expect(on.body.state).toBe('active');
    expect((await me(k.key)).status).toBe(200);
  });

  test('an expired key is refused (401)', async () => {
    const k = (await createKey(owner, { name: 'short-lived', expiry: future() })).body;
    expect((await me(k.key)).status).toBe(200);
    await svc.ctx.db.updateTable('api_keys').set({ expiry: '2001-01-01T00:00:00.000Z' }).where('id', '=', k.id).execute();
    expect((await me(k.key)).status).toBe(401);
  });

  test('DELETE answers 204; the key is gone and refused', async () => {
    const k = (await createKey(admin, { name: 'doomed' })).body;
    expect((await call(svc.url, 'DELETE', `/v1/api_keys/${k.id}`, { headers: ut(member) })).status).toBe(403);
    const r = await call(svc.url, 'DELETE', `/v1/api_keys/${k.id}`, { headers: ut(admin) });
    expect(r.status).toBe(204);
    expect((await call(svc.url, 'GET', `/v1/api_keys/${k.id}`, { headers: ut(admin) })).status).toBe(404);
    expect((await me(k.key)).status).toBe(401);
    expect((await call(svc.url, 'DELETE', `/v1/api_keys/${k.id}`, { headers: ut(admin) })).status).toBe(404);
  });
});
