// GET /v1.1/teams/{team_id}/packages: every filter, each sort in both
// directions, paging totals and input errors.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, startTestService, type TestService } from '../../helpers/hosted.js';
import { teamActors, type Actor } from '../../helpers/auth.js';
import type { PackagesTable } from '../../../src/hosted/db/schema.js';

let svc: TestService;
let owner: Actor;
let admin: Actor;
let stranger: Actor;
const ids: Record<string, string> = {};
const tagIds: Record<string, string> = {};
const ALL = 'status=new,finalized,expired,archived';

type Seed = Partial<PackagesTable> & { key: string; tag?: string };
const seeds: Seed[] = [
  { key: 'alpha', name: 'Alpha shots', size: 300, state: 'finalized', created_at: '2024-01-01T10:00:00.000Z', expiry: '2024-02-01T00:00:00.000Z', sender: 'a@example.com', teamspace_id: 's1', tag: 't1' },
  { key: 'beta', name: 'beta cut', size: 100, state: 'finalized', created_at: '2024-01-02T10:00:00.000Z', expiry: '2024-03-01T00:00:00.000Z', sender: 'b@example.com', teamspace_id: 's2', tag: 't2' },
  { key: 'gamma', name: 'Gamma_100%', size: 200, state: 'expired', created_at: '2024-01-03T10:00:00.000Z', expiry: '2024-01-15T00:00:00.000Z', sender: 'a@example.com', teamspace_id: null },
  { key: 'delta', name: 'delta', size: 50, state: 'new', created_at: '2024-01-04T10:00:00.000Z', expiry: null, sender: 'c@example.com', teamspace_id: null },
  { key: 'epsilon', name: 'Epsilon', size: 400, state: 'archived', created_at: '2024-01-05T10:00:00.000Z', expiry: '2023-12-01T00:00:00.000Z', sender: 'b@example.com', teamspace_id: 's3' },
  { key: 'zeta', name: 'zeta', size: 500, state: 'finalized', created_at: '2024-01-06T10:00:00.000Z', expiry: null, unlimited_storage: 1, sender: 'c@example.com', teamspace_id: 's1' },
];

beforeAll(async () => {
  svc = await startTestService();
  ({ owner, admin, stranger } = await teamActors(svc, 'list'));
  for (const { key, tag, ...values } of seeds) {
    const res = await call(svc.url, 'POST', `/v1/teams/${owner.teamId}/packages`, {
      headers: owner.h,
      body: { name: values.name, description: '', recipients: [], ...(tag ? { tag: { name: tag } } : {}) },
    });
    expect(res.status).toBe(201);
    ids[key] = res.body.id;
    if (tag) tagIds[tag] = res.body.tag.id;
    // States, sizes and dates come from other flows (upload, finalize, expiry): set them directly.
    await svc.ctx.db.updateTable('packages').set(values).where('id', '=', res.body.id).execute();
  }
  // A Package of another Team never shows up.
  await call(svc.url, 'POST', `/v1/teams/${stranger.teamId}/packages`, { headers: stranger.h, body: { name: 'Alpha other', description: '', recipients: [] } });
});
afterAll(async () => svc?.close());

const list = (query = '', who: Actor = owner) => call(svc.url, 'GET', `/v1.1/teams/${owner.teamId}/packages${query ? `?${query}` : ''}`, { headers: who.h });
const keysOf = (records: { id: string }[]) => records.map((r) => Object.keys(ids).find((k) => ids[k] === r.id));
const keys = async (query: string) => {
  const res = await list(query);
  expect(res.status, query).toBe(200);
  return keysOf(res.body.records);
};
const sorted = (xs: (string | undefined)[]) => [...xs].sort();

describe('Team Package list: filters', () => {
  // An admin sees every Package; what a member sees is in teamspaces.test.ts.
  it('lists finalized and expired Packages by default, newest first, as full Package objects', async () => {
    const res = await list('', admin);
    expect(res.status).toBe(200);
    expect(res.body.metadata).toEqual({ total: 4, page: 1, limit: 50 });
    expect(keysOf(res.body.records)).toEqual(['zeta', 'gamma', 'beta', 'alpha']);
    const alpha = res.body.records.find((r: { id: string }) => r.id === ids.alpha);
    expect(alpha).toMatchObject({ name: 'Alpha shots', state: 'finalized', size: 300, teamspace: { id: 's1' }, tag: { id: tagIds.t1, name: 't1' } });
    expect(typeof alpha.access_token).toBe('string');
  });

  it('filters by status, repeated or comma-separated', async () => {
    expect(await keys('status=new')).toEqual(['delta']);
    expect(sorted(await keys('status=new&status=archived'))).toEqual(['delta', 'epsilon']);
    expect(sorted(await keys('status=new,archived'))).toEqual(['delta', 'epsilon']);
    expect((await list(ALL)).body.metadata.total).toBe(6);
  });

  it('filters by name substring, case-insensitively, with % and _ taken literally', async () => {
    expect(await keys('name=ALPHA')).toEqual(['alpha']);
    expect(await keys('name=%25')).toEqual(['gamma']);
    expect(await keys('name=a_1')).toEqual(['gamma']);
    expect(await keys('name=_')).toEqual(['gamma']);
    expect(sorted(await keys(`${ALL}&name=ta`))).toEqual(['beta', 'delta', 'zeta']);
  });

  it('filters by sender, tags, teamspaces and extra storage', async () => {
    expect(sorted(await keys('sender=A@Example.com'))).toEqual(['alpha', 'gamma']);
    expect(sorted(await keys(`tags=${tagIds.t1},${tagIds.t2}`))).toEqual(['alpha', 'beta']);
    expect(await keys(`tags=${tagIds.t2}`)).toEqual(['beta']);
    expect(sorted(await keys('teamspaces=s1'))).toEqual(['alpha', 'zeta']);
    expect(sorted(await keys(`${ALL}&teamspaces=s2,s3`))).toEqual(['beta', 'epsilon']);
    expect(await keys('extra_storage=true')).toEqual(['zeta']);
    expect(sorted(await keys('extra_storage=false'))).toEqual(['alpha', 'beta', 'gamma']);
  });

  it('filters by creation range (dates cover whole days; date-times are inclusive)', async () => {
    expect(sorted(await keys(`${ALL}&created_at_start=2024-01-02&created_at_end=2024-01-03`))).toEqual(['beta', 'gamma']);
    expect(sorted(await keys(`${ALL}&created_at_end=2024-01-02T10:00:00Z`))).toEqual(['alpha', 'beta']);
    expect(sorted(await keys(`${ALL}&created_at_start=2024-01-05T10:00:00.000Z`))).toEqual(['epsilon', 'zeta']);
  });

  it('filters by expiry range', async () => {
    expect(sorted(await keys(`${ALL}&expiry_start=2024-01-10T00:00:00Z&expiry_end=2024-02-15T00:00:00Z`))).toEqual(['alpha', 'gamma']);
    expect(sorted(await keys(`${ALL}&expiry_end=2024-01-15T00:00:00Z`))).toEqual(['epsilon', 'gamma']);
  });
});

describe('Team Package list: sort and paging', () => {
  it('sorts by name case-insensitively, both directions', async () => {
    const asc = await keys(`${ALL}&sort=name`);
    expect(asc).toEqual(['alpha', 'beta', 'delta', 'epsilon', 'gamma', 'zeta']);
    expect(await keys(`${ALL}&sort=-name`)).toEqual([...asc].reverse());
  });

  it('sorts by size and usage_total_bytes, both directions', async () => {
    const asc = ['delta', 'beta', 'gamma', 'alpha', 'epsilon', 'zeta'];
    expect(await keys(`${ALL}&sort=size`)).toEqual(asc);
    expect(await keys(`${ALL}&sort=usage_total_bytes`)).toEqual(asc);
    expect(await keys(`${ALL}&sort=-size`)).toEqual([...asc].reverse());
    expect(await keys(`${ALL}&sort=-usage_total_bytes`)).toEqual([...asc].reverse());
  });

  it('sorts by created_at, both directions', async () => {
    const asc = ['alpha', 'beta', 'gamma', 'delta', 'epsilon', 'zeta'];
    expect(await keys(`${ALL}&sort=created_at`)).toEqual(asc);
    expect(await keys(`${ALL}&sort=-created_at`)).toEqual([...asc].reverse());
  });

  it('sorts by expiry with Packages without expiry last, both directions', async () => {
    const asc = await keys(`${ALL}&sort=expiry`);
    expect(asc.slice(0, 4)).toEqual(['epsilon', 'gamma', 'alpha', 'beta']);
    expect(sorted(asc.slice(4))).toEqual(['delta', 'zeta']);
    const desc = await keys(`${ALL}&sort=-expiry`);
    expect(desc.slice(0, 4)).toEqual(['beta', 'alpha', 'gamma', 'epsilon']);
    expect(sorted(desc.slice(4))).toEqual(['delta', 'zeta']);
  });

  it('sorts by sender, status and teamspace_id, both directions', async () => {
    const field = (k: string | undefined, f: string) => String(seeds.find((s) => s.key === k)![f === 'status' ? 'state' : (f as keyof Seed)] ?? '~');
    for (const f of ['sender', 'status', 'teamspace_id']) {
      const asc = (await keys(`${ALL}&sort=${f}`)).map((k) => field(k, f));
      const desc = (await keys(`${ALL}&sort=-${f}`)).map((k) => field(k, f));
      // '~' stands for no value, which sorts last in both directions.
      expect(asc, f).toEqual([...asc].sort());
      const withValue = desc.filter((v) => v !== '~');
      expect(desc, f).toEqual([...withValue.sort().reverse(), ...desc.filter((v) => v === '~')]);
    }
  });

  it('pages with a stable order and the total of all matches', async () => {
    const seen: string[] = [];
    for (let page = 1; page <= 3; page++) {
      const res = await list(`${ALL}&sort=sender&limit=2&page=${page}`);
      expect(res.body.metadata).toEqual({ total: 6, page, limit: 2 });
      expect(res.body.records).toHaveLength(2);
      seen.push(...res.body.records.map((r: { id: string }) => r.id));
    }
    expect(new Set(seen).size).toBe(6);
    const past = await list(`${ALL}&limit=2&page=4`);
    expect(past.body).toEqual({ metadata: { total: 6, page: 4, limit: 2 }, records: [] });
    const filtered = await list('sender=b@example.com&limit=1');
    expect(filtered.body.metadata.total).toBe(1);
  });
});

describe('Team Package list: errors', () => {
  it('answers 400 for bad paging, sort, status and dates', async () => {
    for (const q of ['limit=0', 'limit=51', 'limit=x', 'page=0', 'sort=bogus', 'sort=--name', 'status=bogus', 'status=new,bogus',
      'status=new&status=gone', 'created_at_start=yesterday', 'expiry_end=2024-13-01T00:00:00Z', 'extra_storage=maybe',
      'created_at_start=2024-02-01&created_at_end=2024-01-01', 'expiry_start=2024-02-01T00:00:00Z&expiry_end=2024-01-01T00:00:00Z']) {
      const res = await list(q);
      expect(res.status, q).toBe(400);
      expect(res.body.code).toBeTruthy();
    }
  });

  it('answers 404 for another Team and 401 without credentials', async () => {
    expect((await list('', stranger)).status).toBe(404);
    expect((await call(svc.url, 'GET', `/v1.1/teams/${owner.teamId}/packages`)).status).toBe(401);
  });
});
