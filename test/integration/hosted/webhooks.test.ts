// Custom webhooks: the routes (create, update, delete, list; get and events are
// additions) with their checks and roles, attachment to Portals by the full-list
// rule, and the events a real receiver gets for Packages created and finalized
// through a Portal and through a Team: exactly the spec's payload.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, startTestService, type TestService } from '../../helpers/hosted.js';
import { teamActors, type Actor, type TeamActors } from '../../helpers/auth.js';
import { startReceiver, type Receiver } from '../../helpers/receiver.js';
import { waitFor } from '../../helpers/downloads.js';
import { uploadFile, type Pkg } from '../../helpers/flow.js';

let svc: TestService;
let rx: Receiver;
beforeAll(async () => {
  // The receivers are on 127.0.0.1 on purpose: the outbound guard allows that address here (outbound-guard.test.ts tests it on).
  svc = await startTestService({ 'webhook-retry-base-ms': '50', 'jobs-poll-ms': '50', 'allow-private-targets': '127.0.0.1/32' });
  rx = await startReceiver();
});
afterAll(async () => {
  await svc?.close();
  await rx?.close();
});

let seq = 0;
const team = (): Promise<TeamActors> => teamActors(svc, `hooks-${++seq}`);

async function hook(actor: Actor, body: Record<string, unknown> = {}) {
  const r = await call(svc.url, 'POST', `/v1/teams/${actor.teamId}/custom_webhooks`, {
    headers: actor.h,
    body: { active: true, events: ['package.created', 'package.finalized'], method: 'POST', url: rx.url, ...body },
  });
  expect(r.status, JSON.stringify(r.body)).toBe(201);
  return r.body;
}

async function portal(actor: Actor, body: Record<string, unknown> = {}) {
  const r = await call(svc.url, 'POST', `/v1/teams/${actor.teamId}/portals`, { headers: actor.h, body: { name: 'Inbox', subdomain: `hooks-inbox-${++seq}`, active: true, ...body } });
  expect(r.status, JSON.stringify(r.body)).toBe(201);
  return r.body;
}

/** The requests the receiver got for webhook `hookId`, once there are `n`. */
const receivedFor = (hookId: string, n: number) =>
  waitFor(`${n} requests for ${hookId}`, () => {
    const got = rx.requests.filter((r) => r.body?.custom_webhook_id === hookId);
    return got.length >= n ? got : undefined;
  });

/** The request of webhook `hookId` carrying `type` (events of one Package may arrive in any order). */
const receivedEvent = async (hookId: string, type: string) =>
  (await waitFor(`${type} for ${hookId}`, () => rx.requests.find((r) => r.body?.custom_webhook_id === hookId && r.body.event_type === type)));

const eventsOf = async (actor: Actor, hookId: string) => (await call(svc.url, 'GET', `/v1/custom_webhooks/${hookId}/events`, { headers: actor.h })).body.records as any[];

describe('the routes', () => {
  it('create answers 201 with the webhook; get, list and update show it; delete answers 204', async () => {
    const { owner } = await team();
    const created = await hook(owner, { name: 'Ops', headers: { 'X-Shared-Secret': 's3cret' }, body_extras: { env: 'prod' } });
    expect(created).toEqual({
      id: expect.stringMatching(/^cwh_/),
      name: 'Ops',
      active: true,
      events: ['package.created', 'package.finalized'],
      method: 'POST',
      url: rx.url,
      headers: { 'X-Shared-Secret': 's3cret' },
      body_extras: { env: 'prod' },
      connections: 0,
      created_at: expect.any(String),
      updated_at: expect.any(String),
    });
    expect((await call(svc.url, 'GET', `/v1/custom_webhooks/${created.id}`, { headers: owner.h })).body).toEqual(created);
    expect((await call(svc.url, 'GET', `/v1/teams/${owner.teamId}/custom_webhooks`, { headers: owner.h })).body).toEqual([created]);

    // PUT takes the complete object; omitted optional fields keep their value.
    const put = await call(svc.url, 'PUT', `/v1/custom_webhooks/${created.id}`, {
      headers: owner.h,
      body: { active: false, events: ['package.finalized'], method: 'PUT', url: 'https://hooks.example.com/ferry' },
    });
    expect(put.status, JSON.stringify(put.body)).toBe(200);
    expect(put.body).toMatchObject({ active: false, events: ['package.finalized'], method: 'PUT', url: 'https://hooks.example.com/ferry', name: 'Ops', headers: { 'X-Shared-Secret': 's3cret' }, body_extras: { env: 'prod' } });
    const cleared = await call(svc.url, 'PUT', `/v1/custom_webhooks/${created.id}`, { headers: owner.h, body: { ...put.body, headers: {}, body_extras: {} } });
    expect(cleared.body).toMatchObject({ headers: {}, body_extras: {} });

    expect((await call(svc.url, 'DELETE', `/v1/custom_webhooks/${created.id}`, { headers: owner.h })).status).toBe(204);
    expect((await call(svc.url, 'GET', `/v1/custom_webhooks/${created.id}`, { headers: owner.h })).status).toBe(404);
    expect((await call(svc.url, 'DELETE', `/v1/custom_webhooks/${created.id}`, { headers: owner.h })).status).toBe(404);
    expect((await call(svc.url, 'GET', `/v1/teams/${owner.teamId}/custom_webhooks`, { headers: owner.h })).body).toEqual([]);
  });

  it('refuses bad input with 400 and {code, message}', async () => {
    const { owner } = await team();
    const base = { active: true, events: ['package.created'], method: 'POST', url: rx.url };
    const cases: [Record<string, unknown>, string][] = [
      [{ ...base, active: undefined }, 'validation_failed'],
      [{ ...base, events: [] }, 'validation_failed'],
      [{ ...base, events: ['package.deleted'] }, 'validation_failed'],
      [{ ...base, events: ['package.created', 'package.created'] }, 'validation_failed'],
      [{ ...base, method: 'GET' }, 'validation_failed'],
      [{ ...base, url: 'ftp://example.com/x' }, 'validation_failed'],
      [{ ...base, url: 'http://user:pw@example.com/x' }, 'invalid_url'],
      [{ ...base, url: 'http://exa mple.com/' }, 'validation_failed'],
      [{ ...base, headers: { 'bad name': 'x' } }, 'invalid_header'],
      [{ ...base, headers: { 'Content-Length': '1' } }, 'invalid_header'],
      [{ ...base, headers: { 'X-A': 'a', 'x-a': 'b' } }, 'invalid_header'],
      [{ ...base, headers: { 'X-A': 'a\r\nX-Injected: 1' } }, 'validation_failed'],
      [{ ...base, body_extras: { event_id: 'mine' } }, 'invalid_body_extras'],
      [{ ...base, body_extras: { n: 1 } }, 'validation_failed'],
    ];
    for (const [body, code] of cases) {
      const r = await call(svc.url, 'POST', `/v1/teams/${owner.teamId}/custom_webhooks`, { headers: owner.h, body });
      expect([r.status, r.body.code], JSON.stringify(body)).toEqual([400, code]);
      expect(typeof r.body.message).toBe('string');
    }
  });

  it('Owners and Admins manage webhooks; a member gets 403, another Team 404, no credential 401', async () => {
    const { owner, admin, member, stranger } = await team();
    const h = await hook(admin);
    const body = { active: true, events: ['package.created'], method: 'POST', url: rx.url };
    expect((await call(svc.url, 'GET', `/v1/custom_webhooks/${h.id}`, { headers: owner.h })).status).toBe(200);
    expect((await call(svc.url, 'POST', `/v1/teams/${owner.teamId}/custom_webhooks`, { headers: member.h, body })).status).toBe(403);
    expect((await call(svc.url, 'GET', `/v1/teams/${owner.teamId}/custom_webhooks`, { headers: member.h })).status).toBe(403);
    expect((await call(svc.url, 'PUT', `/v1/custom_webhooks/${h.id}`, { headers: member.h, body })).status).toBe(403);
    expect((await call(svc.url, 'GET', `/v1/custom_webhooks/${h.id}`, { headers: stranger.h })).status).toBe(404);
    expect((await call(svc.url, 'DELETE', `/v1/custom_webhooks/${h.id}`, { headers: stranger.h })).status).toBe(404);
    expect((await call(svc.url, 'GET', `/v1/custom_webhooks/${h.id}/events`, { headers: stranger.h })).status).toBe(404);
    expect((await call(svc.url, 'POST', `/v1/teams/${owner.teamId}/custom_webhooks`, { headers: stranger.h, body })).status).toBe(404);
    expect((await call(svc.url, 'GET', `/v1/teams/${owner.teamId}/custom_webhooks`)).status).toBe(401);
  });
});

describe('attaching webhooks to Portals', () => {
  it('the list sent replaces the attached webhooks; leaving the property out keeps them', async () => {
    const { owner, stranger } = await team();
    const a = await hook(owner, { active: false });
    const b = await hook(owner, { active: false });
    const p = await portal(owner, { custom_webhooks: [{ id: a.id }, { id: b.id }, { id: a.id }] });
    const ids = (x: any) => x.custom_webhooks.map((w: any) => w.id).sort();
    expect(ids(p)).toEqual([a.id, b.id].sort());
    const put = (body: Record<string, unknown>) => call(svc.url, 'PUT', `/v1/portals/${p.id}`, { headers: owner.h, body: { name: p.name, subdomain: p.subdomain, ...body } });

    expect(ids((await put({ custom_webhooks: [{ id: b.id }] })).body)).toEqual([b.id]);
    expect(ids((await put({ message: 'hello' })).body)).toEqual([b.id]);
    expect(ids((await call(svc.url, 'GET', `/v1/portals/${p.id}`, { headers: owner.h })).body)).toEqual([b.id]);
    const listed = await call(svc.url, 'GET', `/v1.1/teams/${owner.teamId}/portals`, { headers: owner.h });
    expect(listed.body.records.find((r: any) => r.id === p.id).custom_webhooks).toEqual([{ id: b.id }]);
    expect((await call(svc.url, 'GET', `/v1/custom_webhooks/${b.id}`, { headers: owner.h })).body.connections).toBe(1);
    expect((await call(svc.url, 'GET', `/v1/custom_webhooks/${a.id}`, { headers: owner.h })).body.connections).toBe(0);

    // Unknown ids and another Team's webhooks are refused, and nothing changes.
    const theirs = await hook(stranger, { active: false });
    for (const id of ['cwh_nope', theirs.id]) {
      const r = await put({ custom_webhooks: [{ id: a.id }, { id }] });
      expect([r.status, r.body.code]).toEqual([400, 'unknown_custom_webhook']);
    }
    expect(ids((await call(svc.url, 'GET', `/v1/portals/${p.id}`, { headers: owner.h })).body)).toEqual([b.id]);

    expect(ids((await put({ custom_webhooks: [] })).body)).toEqual([]);
    // Deleting a webhook detaches it.
    await put({ custom_webhooks: [{ id: a.id }] });
    await call(svc.url, 'DELETE', `/v1/custom_webhooks/${a.id}`, { headers: owner.h });
    expect(ids((await call(svc.url, 'GET', `/v1/portals/${p.id}`, { headers: owner.h })).body)).toEqual([]);
  });
});

describe('events', () => {
  const asPkg = (b: any): Pkg => ({ id: b.id, token: b.access_token, h: { 'x-package-token': b.access_token }, body: b });
  const pkgRow = (id: string) => svc.ctx.db.selectFrom('packages').selectAll().where('id', '=', id).executeTakeFirstOrThrow();
  const KEYS = ['custom_webhook_id', 'event_id', 'event_time', 'event_type', 'object'];

  it('a Package created and finalized through a Portal: package.created with size 0, then package.finalized with the totals, portal_id, headers and body_extras', async () => {
    const { owner } = await team();
    const h = await hook(owner, { headers: { 'X-Shared-Secret': 's3cret', 'X-Team': 'post' }, body_extras: { env: 'prod', team: 'post' } });
    const p = await portal(owner, { access_code: 'open', custom_webhooks: [{ id: h.id }] });
    const created = await call(svc.url, 'POST', `/v1/portals/${p.id}/packages`, {
      headers: { 'x-access-code': 'open' },
      body: { name: 'Rushes day 2', description: 'from the set', sender: 'Camera@Example.com' },
    });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    const pkg = asPkg(created.body);
    const first = await receivedEvent(h.id, 'package.created');
    const atCreate = await pkgRow(pkg.id);

    expect(first.method).toBe('POST');
    expect(first.url).toBe('/hook');
    expect(first.headers).toMatchObject({ 'x-shared-secret': 's3cret', 'x-team': 'post', 'content-type': 'application/json' });
    expect(first.body).toEqual({
      event_id: expect.stringMatching(/^evt_/),
      event_time: expect.any(String),
      event_type: 'package.created',
      custom_webhook_id: h.id,
      env: 'prod',
      team: 'post',
      object: {
        id: pkg.id,
        name: 'Rushes day 2',
        sender: 'camera@example.com',
        state: 'new',
        size: 0,
        total_files: 0,
        created_at: atCreate.created_at,
        updated_at: atCreate.updated_at,
        portal_id: p.id,
      },
    });
    expect(Date.parse(first.body.event_time)).not.toBeNaN();

    await uploadFile(svc, pkg, 'a.mov', 'day2', Buffer.alloc(1000, 1));
    await uploadFile(svc, pkg, 'b.wav', '', Buffer.alloc(24, 2));
    expect((await call(svc.url, 'POST', `/v1/packages/${pkg.id}/finalize`, { headers: pkg.h })).status).toBe(204);
    const second = await receivedEvent(h.id, 'package.finalized');
    const atFinalize = await pkgRow(pkg.id);
    expect(second.body).toEqual({
      event_id: expect.stringMatching(/^evt_/),
      event_time: expect.any(String),
      event_type: 'package.finalized',
      custom_webhook_id: h.id,
      env: 'prod',
      team: 'post',
      object: {
        id: pkg.id,
        name: 'Rushes day 2',
        sender: 'camera@example.com',
        state: 'finalized',
        size: 1024,
        total_files: 2,
        created_at: atCreate.created_at,
        updated_at: atFinalize.updated_at,
        portal_id: p.id,
      },
    });
    expect(second.body.event_id).not.toBe(first.body.event_id);
    expect(second.body.event_time >= first.body.event_time).toBe(true);
  });

  it('a Team Package: every active webhook of the Team gets its events, without portal_id', async () => {
    const { owner, member } = await team();
    const both = await hook(owner, { method: 'PUT' });
    const onlyFinal = await hook(owner, { events: ['package.finalized'] });
    const off = await hook(owner, { active: false });
    const attached = await hook(owner);
    await portal(owner, { custom_webhooks: [{ id: attached.id }] });

    const r = await call(svc.url, 'POST', `/v1/teams/${owner.teamId}/packages`, { headers: member.h, body: { name: 'Cut v3', description: 'for review', recipients: ['client@example.com'] } });
    expect(r.status, JSON.stringify(r.body)).toBe(201);
    const pkg = asPkg(r.body);
    await uploadFile(svc, pkg, 'cut.mp4', '', Buffer.alloc(300, 3));
    expect((await call(svc.url, 'POST', `/v1/packages/${pkg.id}/finalize`, { headers: pkg.h })).status).toBe(204);
    const row = await pkgRow(pkg.id);

    const created = await receivedEvent(both.id, 'package.created');
    const finalized = await receivedEvent(both.id, 'package.finalized');
    expect(created.method).toBe('PUT');
    expect(Object.keys(created.body).sort()).toEqual(KEYS);
    expect(created.body.object).toEqual({
      id: pkg.id, name: 'Cut v3', sender: member.email, state: 'new', size: 0, total_files: 0, created_at: row.created_at, updated_at: row.created_at,
    });
    expect(Object.keys(finalized.body).sort()).toEqual(KEYS);
    expect(finalized.body).toMatchObject({ event_type: 'package.finalized', custom_webhook_id: both.id });
    expect(finalized.body.object).toEqual({
      id: pkg.id, name: 'Cut v3', sender: member.email, state: 'finalized', size: 300, total_files: 1, created_at: row.created_at, updated_at: row.updated_at,
    });

    await receivedEvent(onlyFinal.id, 'package.finalized');
    // A webhook attached to a Portal is still one of the Team's webhooks.
    expect((await receivedFor(attached.id, 2)).map((x) => x.body.event_type).sort()).toEqual(['package.created', 'package.finalized']);
    // Events are raised in the Package's transaction: what is not there now never comes.
    expect((await eventsOf(owner, onlyFinal.id)).map((e) => e.event_type)).toEqual(['package.finalized']);
    expect(await eventsOf(owner, off.id)).toEqual([]);
  });

  it('a Portal Package goes only to the webhooks attached to its Portal', async () => {
    const { owner } = await team();
    const teamWide = await hook(owner);
    const attached = await hook(owner);
    const p = await portal(owner, { custom_webhooks: [{ id: attached.id }] });
    const r = await call(svc.url, 'POST', `/v1/portals/${p.id}/packages`, { headers: owner.h, body: { name: 'Drop', description: '', sender: 'someone@example.com' } });
    expect(r.status, JSON.stringify(r.body)).toBe(201);
    const e = await receivedEvent(attached.id, 'package.created');
    expect(e.body.object.portal_id).toBe(p.id);
    expect(await eventsOf(owner, teamWide.id)).toEqual([]);
  });
});
