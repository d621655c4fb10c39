// The Team Package list's metadata.total without a filter comes from the
// Package counts that triggers keep (migration 16, services/packageCounts.ts):
// it must always equal the counted total, through every change of a Package's
// state, deletion, and the deletion of another Team.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, startTestService, type TestService } from '../../helpers/hosted.js';
import { newActor, teamActors, type Actor } from '../../helpers/auth.js';

let svc: TestService;
let owner: Actor;
let member: Actor;

beforeAll(async () => {
  svc = await startTestService();
  ({ owner, member } = await teamActors(svc, 'counts'));
});
afterAll(async () => svc?.close());

const ALL = ['new', 'finalized', 'expired', 'archived'];
/** The kept total (no filter) and the counted one (a filter that matches everything) for the same statuses. */
async function totals(status: string, who: Actor = owner): Promise<{ kept: number; counted: number }> {
  const q = status ? `status=${status}` : '';
  const kept = await call(svc.url, 'GET', `/v1.1/teams/${owner.teamId}/packages?${q}`, { headers: who.h });
  const counted = await call(svc.url, 'GET', `/v1.1/teams/${owner.teamId}/packages?${q}&created_at_start=2000-01-01`, { headers: who.h });
  expect(kept.status).toBe(200);
  expect(counted.status).toBe(200);
  return { kept: kept.body.metadata.total, counted: counted.body.metadata.total };
}
async function expectTotals(expected: Record<string, number>): Promise<void> {
  for (const status of ['', ...ALL, 'new,archived']) {
    const { kept, counted } = await totals(status);
    const want = status === '' ? expected.finalized! + expected.expired! : status.split(',').reduce((s, k) => s + expected[k]!, 0);
    expect({ status, kept, counted }).toEqual({ status, kept: want, counted: want });
  }
}

async function create(name: string, who: Actor = owner): Promise<string> {
  const r = await call(svc.url, 'POST', `/v1/teams/${who.teamId}/packages`, { headers: who.h, body: { name, description: '', recipients: [] } });
  expect(r.status).toBe(201);
  return r.body.id as string;
}
const setState = (id: string, state: 'new' | 'finalized' | 'expired' | 'archived') =>
  svc.ctx.db.updateTable('packages').set({ state }).where('id', '=', id).execute();

describe('Team Package list: metadata.total from kept counts', () => {
  it('equals the counted total through creates, state changes, other updates and deletes', async () => {
    await expectTotals({ new: 0, finalized: 0, expired: 0, archived: 0 });
    const [a, b, c, d] = [await create('a'), await create('b'), await create('c'), await create('d')];
    await expectTotals({ new: 4, finalized: 0, expired: 0, archived: 0 });
    await setState(a, 'finalized');
    await setState(b, 'finalized');
    await setState(c, 'expired');
    await expectTotals({ new: 1, finalized: 2, expired: 1, archived: 0 });
    // An update that leaves the state alone changes no count.
    await svc.ctx.db.updateTable('packages').set({ name: 'renamed', size: 7 }).where('id', '=', a).execute();
    await setState(c, 'archived');
    await expectTotals({ new: 1, finalized: 2, expired: 0, archived: 1 });
    // DELETE /v1/packages/{id} expires the Package; a row deleted outright leaves its count too.
    const del = await call(svc.url, 'DELETE', `/v1/packages/${d}`, { headers: owner.h });
    expect(del.status).toBe(204);
    await expectTotals({ new: 0, finalized: 2, expired: 1, archived: 1 });
    await svc.ctx.db.deleteFrom('packages').where('id', '=', b).execute();
    await expectTotals({ new: 0, finalized: 1, expired: 1, archived: 1 });
  });

  it('counts only the Team\'s own Packages, drops a deleted Team\'s counts, and counts a member\'s list under the visibility rule', async () => {
    const other = await newActor(svc, 'counts-other@example.com');
    await create('elsewhere', other);
    const before = await totals('new');
    expect(before.kept).toBe(before.counted);
    await svc.ctx.db.deleteFrom('teams').where('id', '=', other.teamId).execute();
    expect(await svc.ctx.db.selectFrom('package_counts').selectAll().where('team_id', '=', other.teamId).execute()).toEqual([]);
    expect(await totals('new')).toEqual(before);
    // A member's list is counted under the visibility rule, not taken from the Team's counts.
    const mine = await totals('', member);
    expect(mine.kept).toBe(mine.counted);
  });
});
