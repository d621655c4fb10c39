// Teamspaces and their members through real HTTP: create, read, the /v1.1 list,
// rename, delete, memberships (both body names), bad ids refused with nothing
// changed, the Teamspace Package list with its paging and filters, teamspace_id on
// Packages and Portals, and the teamspaces on Team memberships.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, startTestService, type TestService } from '../../helpers/hosted.js';
import { newActor, teamActors, type Actor } from '../../helpers/auth.js';

let svc: TestService;
let owner: Actor;
let admin: Actor;
let member: Actor;
let outsider: Actor;
let stranger: Actor;
/** Team membership ids by actor email. */
const mid: Record<string, string> = {};

async function membershipId(a: Actor): Promise<string> {
  const m = await svc.ctx.db.selectFrom('memberships').select('id').where('user_id', '=', a.userId).where('team_id', '=', a.teamId).executeTakeFirstOrThrow();
  return m.id;
}

beforeAll(async () => {
  svc = await startTestService();
  ({ owner, admin, member, stranger } = await teamActors(svc, 'ts'));
  outsider = await newActor(svc, 'ts-outsider@example.com', { teamId: owner.teamId, role: 'member' });
  for (const a of [owner, admin, member, outsider, stranger]) mid[a.email] = await membershipId(a);
});
afterAll(async () => svc?.close());

const api = (method: string, path: string, who: Actor = owner, body?: unknown) =>
  call(svc.url, method, path, { headers: who.h, ...(body === undefined ? {} : { body }) });
const createSpace = async (name: string, ids: string[] = [], who: Actor = owner) => {
  const r = await api('POST', `/v1/teams/${owner.teamId}/spaces`, who, { name, membership_ids: ids });
  expect(r.status, JSON.stringify(r.body)).toBe(201);
  return r.body as { id: string; name: string; members: { id: string; membership_id: string; user_id: string }[] };
};
const snapshot = async () => ({
  spaces: await svc.ctx.db.selectFrom('teamspaces').selectAll().orderBy('id').execute(),
  members: await svc.ctx.db.selectFrom('teamspace_members').selectAll().orderBy('id').execute(),
});

describe('Teamspace routes', () => {
  it('POST creates a Teamspace with its members (membership_ids or member_ids), GET reads it with members', async () => {
    const r = await api('POST', `/v1/teams/${owner.teamId}/spaces`, admin, { name: 'Colour', member_ids: [mid[member.email]!] });
    expect(r.status, JSON.stringify(r.body)).toBe(201);
    expect(r.body).toMatchObject({ id: expect.stringMatching(/^tsp_/), team_id: owner.teamId, name: 'Colour' });
    expect(r.body.members).toEqual([{ id: expect.stringMatching(/^tsm_/), membership_id: mid[member.email], name: 'ts-member', email: member.email, user_id: member.userId }]);
    const got = await api('GET', `/v1/spaces/${r.body.id}`, member);
    expect(got.status).toBe(200);
    expect(got.body).toEqual(r.body);
    const both = await createSpace('Both names', [mid[outsider.email]!]);
    expect(both.members.map((m) => m.user_id)).toEqual([outsider.userId]);
  });

  it('GET /v1.1/teams/{team_id}/spaces pages from 0 with metadata {per_page, total}; a member lists only their own', async () => {
    for (const n of ['p-a', 'p-b', 'p-c']) await createSpace(n);
    const all = await api('GET', `/v1.1/teams/${owner.teamId}/spaces?limit=50`);
    expect(all.status).toBe(200);
    const total = all.body.metadata.total as number;
    expect(total).toBe(all.body.records.length);
    const first = await api('GET', `/v1.1/teams/${owner.teamId}/spaces?limit=2`);
    expect(first.body.metadata).toEqual({ per_page: 2, total, page: 0 });
    const second = await api('GET', `/v1.1/teams/${owner.teamId}/spaces?page=1&limit=2`);
    expect(second.body.records.map((s: { id: string }) => s.id)).toEqual(all.body.records.slice(2, 4).map((s: { id: string }) => s.id));
    const defaults = await api('GET', `/v1.1/teams/${owner.teamId}/spaces`);
    expect(defaults.body.metadata).toMatchObject({ per_page: 50, page: 0 });
    const mine = await api('GET', `/v1.1/teams/${owner.teamId}/spaces`, member);
    expect(mine.body.records.map((s: { name: string }) => s.name)).toEqual(['Colour']);
    expect(mine.body.metadata.total).toBe(1);
    for (const q of ['limit=0', 'limit=51', 'page=-1', 'page=x']) expect((await api('GET', `/v1.1/teams/${owner.teamId}/spaces?${q}`)).status, q).toBe(400);
  });

  it('PUT renames; DELETE answers 204 and the Teamspace is gone', async () => {
    const s = await createSpace('Old name');
    const put = await api('PUT', `/v1/spaces/${s.id}`, admin, { name: 'New name' });
    expect(put.status).toBe(200);
    expect(put.body).toMatchObject({ id: s.id, name: 'New name' });
    expect((await api('PUT', `/v1/spaces/${s.id}`, admin, { name: '   ' })).status).toBe(400);
    expect((await api('PUT', `/v1/spaces/${s.id}`, admin, {})).status).toBe(400);
    const del = await api('DELETE', `/v1/spaces/${s.id}`);
    expect(del.status).toBe(204);
    expect((await api('GET', `/v1/spaces/${s.id}`)).status).toBe(404);
    expect((await api('DELETE', `/v1/spaces/${s.id}`)).status).toBe(404);
  });

  it('POST members adds memberships (201 with them), GET lists them, DELETE removes one', async () => {
    const s = await createSpace('Members');
    const add = await api('POST', `/v1/spaces/${s.id}/members`, owner, { membership_ids: [mid[member.email]], member_ids: [mid[admin.email]] });
    expect(add.status, JSON.stringify(add.body)).toBe(201);
    expect(add.body.map((m: { user_id: string }) => m.user_id).sort()).toEqual([member.userId, admin.userId].sort());
    const list = await api('GET', `/v1/spaces/${s.id}/members`, member);
    expect(list.status).toBe(200);
    expect(list.body).toHaveLength(2);
    const gone = list.body.find((m: { user_id: string }) => m.user_id === member.userId);
    expect((await api('DELETE', `/v1/spaces/${s.id}/members/${gone.id}`)).status).toBe(204);
    expect((await api('GET', `/v1/spaces/${s.id}/members`)).body.map((m: { user_id: string }) => m.user_id)).toEqual([admin.userId]);
    expect((await api('DELETE', `/v1/spaces/${s.id}/members/${gone.id}`)).status).toBe(404);
    // The removed member no longer reads it.
    expect((await api('GET', `/v1/spaces/${s.id}`, member)).status).toBe(404);
  });

  it('refuses bad, foreign, repeated and present membership ids with 400/409, changing nothing', async () => {
    const s = await createSpace('Strict', [mid[member.email]!]);
    const before = await snapshot();
    const cases: [unknown, number, string][] = [
      [{}, 400, 'members_required'],
      [{ membership_ids: [] }, 400, 'members_required'],
      [{ membership_ids: ['mem_nope'] }, 400, 'unknown_membership'],
      [{ membership_ids: [mid[stranger.email]] }, 400, 'unknown_membership'],
      [{ membership_ids: [mid[admin.email], mid[admin.email]] }, 400, 'duplicate_membership'],
      [{ membership_ids: [mid[admin.email]], member_ids: [mid[admin.email]] }, 400, 'duplicate_membership'],
      [{ membership_ids: [mid[admin.email], 'mem_nope'] }, 400, 'unknown_membership'],
      [{ membership_ids: [mid[admin.email], mid[member.email]] }, 409, 'already_member'],
      [{ membership_ids: 'mem_x' }, 400, 'validation_failed'],
    ];
    for (const [body, status, code] of cases) {
      const r = await api('POST', `/v1/spaces/${s.id}/members`, owner, body);
      expect(r.status, JSON.stringify(body)).toBe(status);
      if (code !== 'validation_failed') expect(r.body.code).toBe(code);
      expect(r.body.message).toEqual(expect.any(String));
    }
    for (const [body, code] of [
      [{ name: 'x', membership_ids: ['mem_nope'] }, 'unknown_membership'],
      [{ name: 'x', membership_ids: [mid[stranger.email]] }, 'unknown_membership'],
      [{ name: 'x', member_ids: [mid[admin.email], mid[admin.email]] }, 'duplicate_membership'],
    ] as const) {
      const r = await api('POST', `/v1/teams/${owner.teamId}/spaces`, owner, body);
      expect(r.status).toBe(400);
      expect(r.body.code).toBe(code);
    }
    expect((await api('POST', `/v1/teams/${owner.teamId}/spaces`, owner, { membership_ids: [] })).status).toBe(400);
    expect((await api('DELETE', `/v1/spaces/${s.id}/members/tsm_nope`)).status).toBe(404);
    expect(await snapshot()).toEqual(before);
  });

  it("answers 404 for another Team's Teamspace and for one a member is not in; 403 when a member would change one", async () => {
    const s = await createSpace('Guarded', [mid[member.email]!]);
    for (const [m, p] of [['GET', ''], ['GET', '/members'], ['GET', '/packages'], ['PUT', ''], ['DELETE', ''], ['POST', '/members']] as const) {
      const path = `${p === '/packages' ? '/v1.1' : '/v1'}/spaces/${s.id}${p}`;
      const body = m === 'PUT' ? { name: 'x' } : m === 'POST' ? { membership_ids: [mid[outsider.email]] } : undefined;
      expect((await api(m, path, stranger, body)).status, `${m} ${p} stranger`).toBe(404);
      expect((await api(m, path, outsider, body)).status, `${m} ${p} outsider`).toBe(404);
      expect((await api(m, path, member, body)).status, `${m} ${p} member`).toBe(m === 'GET' ? 200 : 403);
    }
    expect((await api('GET', `/v1.1/teams/${owner.teamId}/spaces`, stranger)).status).toBe(404);
    expect((await api('GET', `/v1/spaces/tsp_unknown`)).status).toBe(404);
  });

  it('Team memberships carry their Teamspaces', async () => {
    const s = await createSpace('Aardvark', [mid[outsider.email]!]);
    const r = await api('GET', `/v1/teams/${owner.teamId}/members`, outsider);
    const byUser = Object.fromEntries(r.body.map((m: { user_id: string }) => [m.user_id, m]));
    expect(byUser[outsider.userId].teamspaces[0]).toEqual({ id: s.id, name: 'Aardvark' });
    expect(byUser[outsider.userId].teamspaces.map((t: { name: string }) => t.name)).toContain('Both names');
    expect(byUser[stranger.userId]).toBeUndefined();
    expect(byUser[owner.userId].teamspaces).toEqual([]);
  });
});

describe('teamspace_id on Packages and Portals', () => {
  let space: string;
  let other: string;
  beforeAll(async () => {
    space = (await createSpace('Uploads', [mid[member.email]!])).id;
    other = (await createSpace('Not mine')).id;
  });
  const createPkg = (who: Actor, teamspace_id: string) =>
    api('POST', `/v1/teams/${owner.teamId}/packages`, who, { name: 'p', description: '', recipients: [], teamspace_id });

  it('a Package may be created in a Teamspace of the Team the sender belongs to (Owners and Admins: any)', async () => {
    const mine = await createPkg(member, space);
    expect(mine.status, JSON.stringify(mine.body)).toBe(201);
    expect(mine.body.teamspace).toEqual({ id: space, name: 'Uploads' });
    expect((await createPkg(admin, other)).status).toBe(201);
    const none = await createPkg(member, '');
    expect(none.body.teamspace).toBeNull();
  });

  it('refuses another Team\'s or an unknown Teamspace (400) and one the member is not in (403), creating nothing', async () => {
    const strangerSpace = await api('POST', `/v1/teams/${stranger.teamId}/spaces`, stranger, { name: 'theirs' });
    const count = async () => Number((await svc.ctx.db.selectFrom('packages').select((eb) => eb.fn.countAll().as('n')).executeTakeFirstOrThrow()).n);
    const before = await count();
    const unknown = await createPkg(owner, 'tsp_nope');
    expect(unknown.status).toBe(400);
    expect(unknown.body.code).toBe('unknown_teamspace');
    expect((await createPkg(owner, strangerSpace.body.id)).status).toBe(400);
    const notMine = await createPkg(member, other);
    expect(notMine.status).toBe(403);
    expect(notMine.body.code).toBe('forbidden');
    expect(await count()).toBe(before);
  });

  it('a Portal takes a teamspace_id of the Team (null clears it) and access_level; the Portal list filters by teamspaces', async () => {
    const mk = await api('POST', `/v1/teams/${owner.teamId}/portals`, admin, { name: 'TS portal', subdomain: 'ts-portal', teamspace_id: space, access_level: 'private' });
    expect(mk.status, JSON.stringify(mk.body)).toBe(201);
    expect(mk.body).toMatchObject({ teamspace_id: space, access_level: 'private' });
    const plain = await api('POST', `/v1/teams/${owner.teamId}/portals`, admin, { name: 'Plain portal', subdomain: 'ts-plain' });
    expect(plain.body).toMatchObject({ teamspace_id: null, access_level: 'regular' });
    const bad = await api('POST', `/v1/teams/${owner.teamId}/portals`, admin, { name: 'Bad', subdomain: 'ts-bad', teamspace_id: 'tsp_nope' });
    expect(bad.status).toBe(400);
    expect((await api('GET', `/v1/subdomains/portals/ts-bad`)).status).toBe(404);
    const filtered = await api('GET', `/v1.1/teams/${owner.teamId}/portals?teamspaces=${space},${other}`);
    expect(filtered.body.records.map((p: { id: string }) => p.id)).toEqual([mk.body.id]);
    const kept = await api('PUT', `/v1/portals/${mk.body.id}`, admin, { name: 'TS portal', subdomain: 'ts-portal' });
    expect(kept.body.teamspace_id).toBe(space);
    const cleared = await api('PUT', `/v1/portals/${mk.body.id}`, admin, { name: 'TS portal', subdomain: 'ts-portal', teamspace_id: null });
    expect(cleared.body.teamspace_id).toBeNull();
  });

  it('DELETE of a Teamspace a Portal uses answers 409 and keeps it; once free, its Packages keep its id and leave members\' sight', async () => {
    const s = await createSpace('Doomed', [mid[member.email]!]);
    const portal = await api('POST', `/v1/teams/${owner.teamId}/portals`, admin, { name: 'Doomed portal', subdomain: 'ts-doomed', teamspace_id: s.id });
    const pkg = await createPkg(owner, s.id);
    expect((await api('GET', `/v1/packages/${pkg.body.id}`, member)).status).toBe(200);
    const refused = await api('DELETE', `/v1/spaces/${s.id}`);
    expect(refused.status).toBe(409);
    expect(refused.body.code).toBe('teamspace_in_use');
    expect((await api('GET', `/v1/spaces/${s.id}`)).status).toBe(200);
    await api('PUT', `/v1/portals/${portal.body.id}`, admin, { name: 'Doomed portal', subdomain: 'ts-doomed', teamspace_id: null });
    expect((await api('DELETE', `/v1/spaces/${s.id}`)).status).toBe(204);
    const asOwner = await api('GET', `/v1/packages/${pkg.body.id}`);
    expect(asOwner.status).toBe(200);
    expect(asOwner.body.teamspace).toEqual({ id: s.id });
    expect((await api('GET', `/v1/packages/${pkg.body.id}`, member)).status).toBe(404);
    expect(await svc.ctx.db.selectFrom('teamspace_members').select('id').where('teamspace_id', '=', s.id).execute()).toEqual([]);
  });
});

describe('GET /v1.1/spaces/{space_id}/packages', () => {
  let space: string;
  const ids: Record<string, string> = {};
  beforeAll(async () => {
    space = (await createSpace('Listing', [mid[member.email]!])).id;
    const seeds: [string, string, Record<string, unknown>, string | null][] = [
      ['one', 'Alpha one', { state: 'finalized', created_at: '2024-01-01T10:00:00.000Z', sender: 'a@example.com', size: 30 }, 'red'],
      ['two', 'beta two', { state: 'expired', created_at: '2024-01-02T10:00:00.000Z', sender: 'b@example.com', size: 10 }, null],
      ['three', 'Alpha three', { state: 'new', created_at: '2024-01-03T10:00:00.000Z', sender: 'a@example.com', size: 20 }, 'red'],
    ];
    for (const [key, name, values, tag] of seeds) {
      const r = await api('POST', `/v1/teams/${owner.teamId}/packages`, owner, { name, description: '', recipients: [], teamspace_id: space, ...(tag ? { tag: { name: tag } } : {}) });
      ids[key] = r.body.id;
      if (tag) ids[tag] = r.body.tag.id;
      await svc.ctx.db.updateTable('packages').set(values).where('id', '=', r.body.id).execute();
    }
    // Elsewhere: not in this Teamspace.
    await api('POST', `/v1/teams/${owner.teamId}/packages`, owner, { name: 'Alpha elsewhere', description: '', recipients: [] });
  });
  const keys = async (q: string, who: Actor = member) => {
    const r = await api('GET', `/v1.1/spaces/${space}/packages${q ? `?${q}` : ''}`, who);
    expect(r.status, `${q} ${JSON.stringify(r.body)}`).toBe(200);
    expect(Array.isArray(r.body)).toBe(true);
    return r.body.map((p: { id: string }) => Object.keys(ids).find((k) => ids[k] === p.id));
  };

  it('answers an array of the Teamspace\'s finalized and expired Packages by default, newest first', async () => {
    expect(await keys('')).toEqual(['two', 'one']);
    expect(await keys('', owner)).toEqual(['two', 'one']);
  });

  it('pages from 0 with limit 1..100', async () => {
    expect(await keys('limit=1')).toEqual(['two']);
    expect(await keys('limit=1&page=1')).toEqual(['one']);
    expect(await keys('limit=1&page=2')).toEqual([]);
    expect(await keys('limit=100')).toEqual(['two', 'one']);
    for (const q of ['limit=0', 'limit=101', 'page=-1']) expect((await api('GET', `/v1.1/spaces/${space}/packages?${q}`)).status, q).toBe(400);
  });

  it('filters by status, name (partial), sender, tags and created_at dates (YYYY-MM-DD), and sorts', async () => {
    expect(await keys('status=new')).toEqual(['three']);
    expect(await keys('status=new,finalized,expired&name=alpha&sort=name')).toEqual(['one', 'three']);
    expect(await keys('sender=A@example.com&status=new,finalized')).toEqual(['three', 'one']);
    expect(await keys(`tags=${ids.red}&status=new,finalized,expired&sort=size`)).toEqual(['three', 'one']);
    expect(await keys('created_at_start=2024-01-02&created_at_end=2024-01-02&status=new,finalized,expired')).toEqual(['two']);
    expect(await keys('sort=-size')).toEqual(['one', 'two']);
    for (const q of ['created_at_start=2024-01-02T00:00:00Z', 'created_at_end=yesterday', 'sort=colour', 'status=gone']) {
      expect((await api('GET', `/v1.1/spaces/${space}/packages?${q}`)).status, q).toBe(400);
    }
  });
});
