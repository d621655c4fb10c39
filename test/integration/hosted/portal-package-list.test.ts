// GET /v1.1/portals/{portal_id}/packages: the Packages one Portal received, for
// members of its Team (404 for others), with the Team list's filters plus
// Ferry's finalized_at_start filter and finalized_at sort; bad queries 400.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, startTestService, type TestService } from '../../helpers/hosted.js';
import { teamActors, type Actor } from '../../helpers/auth.js';

let svc: TestService;
let owner: Actor;
let member: Actor;
let stranger: Actor;
let portalId: string;
let otherPortalId: string;
const ids: Record<string, string> = {};

async function portal(subdomain: string): Promise<string> {
  const r = await call(svc.url, 'POST', `/v1/teams/${owner.teamId}/portals`, { headers: owner.h, body: { name: subdomain, subdomain, active: true } });
  expect(r.status, JSON.stringify(r.body)).toBe(201);
  return r.body.id;
}

beforeAll(async () => {
  svc = await startTestService();
  ({ owner, member, stranger } = await teamActors(svc, 'ppl'));
  portalId = await portal('ppl-desk');
  otherPortalId = await portal('ppl-other');
  const seeds: [string, string, string, string | null][] = [
    // key, portal, state, finalized_at
    ['early', portalId, 'finalized', '2024-01-01T10:00:00.000Z'],
    ['late', portalId, 'finalized', '2024-03-01T10:00:00.000Z'],
    ['middle', portalId, 'finalized', '2024-02-01T10:00:00.000Z'],
    ['open', portalId, 'new', null],
    ['elsewhere', otherPortalId, 'finalized', '2024-02-15T10:00:00.000Z'],
  ];
  for (const [key, p, state, finalizedAt] of seeds) {
    const r = await call(svc.url, 'POST', `/v1/portals/${p}/packages`, { body: { name: key, description: '', sender: 'sender@example.com' } });
    expect(r.status, JSON.stringify(r.body)).toBe(201);
    ids[key] = r.body.id;
    await svc.ctx.db.updateTable('packages').set({ state: state as 'new', finalized_at: finalizedAt }).where('id', '=', r.body.id).execute();
  }
});
afterAll(async () => svc?.close());

const list = (query = '', who: Actor = owner, p = portalId) => call(svc.url, 'GET', `/v1.1/portals/${p}/packages${query ? `?${query}` : ''}`, { headers: who.h });
const names = (records: { name: string }[]) => records.map((r) => r.name);

describe('Portal Package list', () => {
  it('lists the Portal\'s finalized and expired Packages to members, with portal_id and finalized_at', async () => {
    const r = await list('', member);
    expect(r.status, JSON.stringify(r.body)).toBe(200);
    expect(r.body.metadata).toEqual({ total: 3, page: 1, limit: 50 });
    expect(names(r.body.records).sort()).toEqual(['early', 'late', 'middle']);
    const late = r.body.records.find((x: { name: string }) => x.name === 'late');
    expect(late).toMatchObject({ id: ids.late, portal_id: portalId, finalized_at: '2024-03-01T10:00:00.000Z', state: 'finalized', sender: 'sender@example.com' });
    expect(late.access_token).toEqual(expect.any(String));
  });

  it('finalized_at_start and the finalized_at sort give what arrived since, oldest first, page by page', async () => {
    expect(names((await list('finalized_at_start=2024-02-01T10:00:00Z&sort=finalized_at')).body.records)).toEqual(['middle', 'late']);
    expect(names((await list('sort=-finalized_at')).body.records)).toEqual(['late', 'middle', 'early']);
    const page2 = await list('sort=finalized_at&limit=2&page=2');
    expect(page2.body.metadata).toEqual({ total: 3, page: 2, limit: 2 });
    expect(names(page2.body.records)).toEqual(['late']);
    expect(names((await list('status=new')).body.records)).toEqual(['open']);
    expect(names((await list('status=new,finalized&sort=finalized_at')).body.records)).toEqual(['early', 'middle', 'late', 'open']);
  });

  it('answers 404 to another Team, 401 without credentials, 404 for an unknown Portal', async () => {
    expect((await list('', stranger)).status).toBe(404);
    expect((await call(svc.url, 'GET', `/v1.1/portals/${portalId}/packages`)).status).toBe(401);
    expect((await list('', owner, 'prt_nope')).status).toBe(404);
  });

  it('answers 400 {code, message} to bad queries', async () => {
    for (const q of ['finalized_at_start=yesterday', 'finalized_at_start=2024-02-30T00:00:00Z', 'sort=finalized', 'sort=--finalized_at', 'limit=51', 'page=0', 'status=gone']) {
      const r = await list(q);
      expect(r.status, q).toBe(400);
      expect(r.body).toMatchObject({ code: expect.anything(), message: expect.any(String) });
    }
  });
});

// Every filter the spec gives the route (tags, sender, created_at_*, expiry_*, extra_storage),
// plus name and teamspaces, each on its own.
describe('Portal Package list: the spec\'s filters', () => {
  let filterPortal: string;
  let spaceId: string;
  const keyed: Record<string, string> = {};
  beforeAll(async () => {
    filterPortal = await portal('ppl-filters');
    const space = await call(svc.url, 'POST', `/v1/teams/${owner.teamId}/spaces`, { headers: owner.h, body: { name: 'ppl space' } });
    spaceId = space.body.id;
    const tag = await call(svc.url, 'POST', `/v1/teams/${owner.teamId}/tags`, { headers: owner.h, body: { name: 'ppl-tag' } });
    keyed.tag = tag.body.id;
    const seeds: [string, Record<string, unknown>][] = [
      ['f1', { sender: 'one@example.com', created_at: '2024-05-01T10:00:00.000Z', expiry: '2024-06-01T00:00:00.000Z', unlimited_storage: 0, tag_id: keyed.tag, teamspace_id: spaceId }],
      ['f2', { sender: 'two@example.com', created_at: '2024-05-02T10:00:00.000Z', expiry: '2024-07-01T00:00:00.000Z', unlimited_storage: 1, tag_id: null, teamspace_id: null }],
      ['f3', { sender: 'one@example.com', created_at: '2024-05-03T10:00:00.000Z', expiry: '2024-08-01T00:00:00.000Z', unlimited_storage: 0, tag_id: null, teamspace_id: null }],
    ];
    for (const [key, values] of seeds) {
      const r = await call(svc.url, 'POST', `/v1/portals/${filterPortal}/packages`, { body: { name: `${key} delivery`, description: '', sender: 'x@example.com' } });
      keyed[key] = r.body.id;
      await svc.ctx.db.updateTable('packages').set({ ...values, state: 'finalized' }).where('id', '=', r.body.id).execute();
    }
  });
  const keysOf = async (q: string) => {
    const r = await list(q, owner, filterPortal);
    expect(r.status, q).toBe(200);
    expect(r.body.metadata.total).toBe(r.body.records.length);
    return r.body.records.map((p: { id: string }) => Object.keys(keyed).find((k) => keyed[k] === p.id)).sort();
  };

  it('filters by tags, sender, created_at, expiry, extra_storage, name and teamspaces', async () => {
    expect(await keysOf(`tags=${keyed.tag}`)).toEqual(['f1']);
    expect(await keysOf('sender=ONE@example.com')).toEqual(['f1', 'f3']);
    expect(await keysOf('created_at_start=2024-05-02&created_at_end=2024-05-03')).toEqual(['f2', 'f3']);
    expect(await keysOf('created_at_end=2024-05-01T10:00:00Z')).toEqual(['f1']);
    expect(await keysOf('expiry_start=2024-06-15T00:00:00Z&expiry_end=2024-07-01T00:00:00Z')).toEqual(['f2']);
    expect(await keysOf('extra_storage=true')).toEqual(['f2']);
    expect(await keysOf('extra_storage=false')).toEqual(['f1', 'f3']);
    expect(await keysOf('name=F3')).toEqual(['f3']);
    expect(await keysOf(`teamspaces=${spaceId}`)).toEqual(['f1']);
    const page = await list('sort=-sender&limit=1&page=2', owner, filterPortal);
    expect(page.body.metadata).toEqual({ total: 3, page: 2, limit: 1 });
    expect(page.body.records.map((p: { sender: string }) => p.sender)).toEqual(['one@example.com']);
  });
});
