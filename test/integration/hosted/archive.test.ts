// Archive and unarchive: one Package at a time, and in bulk by expiry range for
// Packages the Team sent and Packages it received through Portals (inbox).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, startTestService, type TestService } from '../../helpers/hosted.js';
import { teamActors, type Actor } from '../../helpers/auth.js';
import type { PackageState } from '../../../src/hosted/db/schema.js';
import { newId } from '../../../src/hosted/ids.js';

let svc: TestService;
let owner: Actor;
let admin: Actor;
let member: Actor;
let stranger: Actor;

beforeAll(async () => {
  svc = await startTestService();
  ({ owner, admin, member, stranger } = await teamActors(svc, 'arch'));
});
afterAll(async () => svc?.close());

const create = async (who: Actor = owner) =>
  (await call(svc.url, 'POST', `/v1/teams/${who.teamId}/packages`, { headers: who.h, body: { name: 'A', description: '', recipients: [] } })).body;
const state = async (id: string) => (await svc.ctx.db.selectFrom('packages').select('state').where('id', '=', id).executeTakeFirstOrThrow()).state;
const setRow = (id: string, values: { state?: PackageState; expiry?: string }) => svc.ctx.db.updateTable('packages').set(values).where('id', '=', id).execute();

/** An expired Package sent by the Team, its expiry moved to `expiry`. */
async function expiredSent(expiry: string, who: Actor = owner): Promise<string> {
  const p = await create(who);
  expect((await call(svc.url, 'DELETE', `/v1/packages/${p.id}`, { headers: who.h })).status).toBe(204);
  await setRow(p.id, { expiry });
  return p.id;
}

/** A Package received through a Portal (Portals are built elsewhere, so the row is written directly). */
async function receivedThroughPortal(expiry: string, st: PackageState = 'expired'): Promise<string> {
  const id = newId('pkg');
  const now = new Date().toISOString();
  await svc.ctx.db.insertInto('packages').values({
    id, team_id: owner.teamId, portal_id: 'prt_test', teamspace_id: null, created_by: null, name: 'Inbound', description: '',
    sender: 'outside@example.com', recipients: '[]', state: st, size: 0, total_files: 0, access_limit: null, password_hash: null,
    contains_virus: 0, custom_expiry: 0, custom_metadata_id: null, expiry, unlimited_storage: 0, chunk_size: 0, tag_id: null,
    finalized_at: null, objects_deleted: 1, created_at: now, updated_at: now,
  }).execute();
  return id;
}

describe('PUT /v1/packages/{id}/archive and /unarchive', () => {
  it('archives an expired Package and unarchives it back to expired', async () => {
    const p = await create();
    const h = { 'x-package-token': p.access_token };
    await call(svc.url, 'DELETE', `/v1/packages/${p.id}`, { headers: h });
    const a = await call(svc.url, 'PUT', `/v1/packages/${p.id}/archive`, { headers: h });
    expect(a.status).toBe(204);
    expect(await state(p.id)).toBe('archived');
    const u = await call(svc.url, 'PUT', `/v1/packages/${p.id}/unarchive`, { headers: owner.h });
    expect(u.status).toBe(204);
    expect(await state(p.id)).toBe('expired');
  });

  it('answers 409 for archiving a new or finalized Package, or unarchiving one not archived', async () => {
    const p = await create();
    expect((await call(svc.url, 'PUT', `/v1/packages/${p.id}/archive`, { headers: owner.h })).status).toBe(409);
    expect((await call(svc.url, 'PUT', `/v1/packages/${p.id}/unarchive`, { headers: owner.h })).status).toBe(409);
    await setRow(p.id, { state: 'finalized' });
    expect((await call(svc.url, 'PUT', `/v1/packages/${p.id}/archive`, { headers: owner.h })).status).toBe(409);
    expect(await state(p.id)).toBe('finalized');
    await call(svc.url, 'DELETE', `/v1/packages/${p.id}`, { headers: owner.h });
    expect((await call(svc.url, 'PUT', `/v1/packages/${p.id}/unarchive`, { headers: owner.h })).status).toBe(409);
    expect((await call(svc.url, 'PUT', `/v1/packages/${p.id}/archive`, { headers: owner.h })).status).toBe(204);
    expect((await call(svc.url, 'PUT', `/v1/packages/${p.id}/archive`, { headers: owner.h })).status).toBe(409);
  });

  it('answers 404 to another Team', async () => {
    const id = await expiredSent('2020-01-01T00:00:00.000Z');
    expect((await call(svc.url, 'PUT', `/v1/packages/${id}/archive`, { headers: stranger.h })).status).toBe(404);
    expect(await state(id)).toBe('expired');
  });
});

describe('bulk archive by expiry range', () => {
  const range = (start: string, end: string) => ({ expiry_start: start, expiry_end: end });
  const bulk = (path: string, body: unknown, who: Actor = owner) => call(svc.url, 'PUT', `/v1/teams/${owner.teamId}/${path}`, { headers: who.h, body });

  it('archives the sent Packages expired within the range (inclusive) and leaves the rest', async () => {
    const inside1 = await expiredSent('2021-03-01T00:00:00.000Z');
    const inside2 = await expiredSent('2021-03-31T23:59:59.000Z');
    const before = await expiredSent('2021-02-28T23:59:59.999Z');
    const after = await expiredSent('2021-04-01T00:00:00.000Z');
    const inbox = await receivedThroughPortal('2021-03-15T00:00:00.000Z');
    const live = await create();
    await setRow(live.id, { state: 'finalized', expiry: '2021-03-10T00:00:00.000Z' });
    const foreign = await expiredSent('2021-03-10T00:00:00.000Z', stranger);

    const res = await bulk('archive', range('2021-03-01T00:00:00Z', '2021-03-31T23:59:59Z'));
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ count: 2 });
    expect(await state(inside1)).toBe('archived');
    expect(await state(inside2)).toBe('archived');
    for (const id of [before, after, inbox, foreign]) expect(await state(id)).toBe('expired');
    expect(await state(live.id)).toBe('finalized');

    const again = await bulk('archive', range('2021-03-01T00:00:00Z', '2021-03-31T23:59:59Z'));
    expect(again.body).toEqual({ count: 0 });
    const un = await bulk('unarchive', range('2021-03-15T00:00:00Z', '2021-04-30T00:00:00Z'), admin);
    expect(un.body).toEqual({ count: 1 });
    expect(await state(inside2)).toBe('expired');
    expect(await state(inside1)).toBe('archived');
  });

  it('inbox routes touch only Packages received through Portals', async () => {
    const sent = await expiredSent('2022-05-05T00:00:00.000Z');
    const got1 = await receivedThroughPortal('2022-05-05T00:00:00.000Z');
    const got2 = await receivedThroughPortal('2022-05-06T00:00:00.000Z');
    const gotLive = await receivedThroughPortal('2022-05-06T00:00:00.000Z', 'finalized');
    const res = await bulk('inbox/archive', range('2022-05-01T00:00:00Z', '2022-05-31T00:00:00Z'));
    expect(res.body).toEqual({ count: 2 });
    expect(await state(got1)).toBe('archived');
    expect(await state(got2)).toBe('archived');
    expect(await state(gotLive)).toBe('finalized');
    expect(await state(sent)).toBe('expired');
    const un = await bulk('inbox/unarchive', range('2022-05-06T00:00:00Z', '2022-05-06T00:00:00Z'));
    expect(un.body).toEqual({ count: 1 });
    expect(await state(got2)).toBe('expired');
  });

  it('answers 400 for a missing, malformed or reversed range and changes nothing', async () => {
    const id = await expiredSent('2023-01-01T00:00:00.000Z');
    for (const body of [{}, { expiry_start: '2023-01-01T00:00:00Z' }, range('yesterday', '2024-01-01T00:00:00Z'), range('2024-01-01T00:00:00Z', '2022-01-01T00:00:00Z')]) {
      const res = await bulk('archive', body);
      expect(res.status, JSON.stringify(body)).toBe(400);
    }
    expect(await state(id)).toBe('expired');
  });

  it('is for Owners and Admins: a member gets 403, another Team 404', async () => {
    const id = await expiredSent('2024-02-01T00:00:00.000Z');
    const body = range('2024-01-01T00:00:00Z', '2024-03-01T00:00:00Z');
    expect((await bulk('archive', body, member)).status).toBe(403);
    expect((await bulk('inbox/archive', body, member)).status).toBe(403);
    expect((await call(svc.url, 'PUT', `/v1/teams/${owner.teamId}/archive`, { headers: stranger.h, body })).status).toBe(404);
    expect(await state(id)).toBe('expired');
  });
});
