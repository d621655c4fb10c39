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
