// The Package lists' name filter (services/nameSearch.ts, migration 17): the
// name contains the text in any ASCII letter case, wildcards and quotes taken
// literally, the same answers whether SQLite starts from the trigram table or
// checks every name, kept through renames and deletes; on PostgreSQL the pg_trgm
// index serves the very condition the service sends.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sql } from 'kysely';
import { call, startTestService, type TestService } from '../../helpers/hosted.js';
import { teamActors, type Actor } from '../../helpers/auth.js';
import { isPostgres } from '../../../src/hosted/db/dialect.js';
import { planNameFilter, type NamePlan } from '../../../src/hosted/services/nameSearch.js';
import { seededPackage } from '../../bench/lib/hostedSeed.js';
import { applyFilters } from '../../../src/hosted/services/packageList.js';
import { containsIgnoringCase } from '../../../src/hosted/db/dialect.js';
import { POSTGRES_ONLY, skipBecause } from '../../helpers/skip.js';

let svc: TestService;
let owner: Actor;
const FINAL = ['finalized', 'expired'] as const;

/** 300 numbered dailies ("reel K", K = i mod 50: 2% each), and names that try the edges. */
const SPECIAL = ['Budget 100% final_v2', 'Budget 100x finalXv2', 'Quote "the" cut', 'ÉCOLE de nuit', 'MiXeD CaSe Reel', 'back\\slash cut'];
const names = [...Array.from({ length: 300 }, (_, i) => `Dailies ${i} reel ${i % 50}`), ...SPECIAL];
/** What the filter must answer: SQLite's and PostgreSQL's (C locale) lower() fold ASCII letters only. */
const asciiLower = (s: string) => s.replace(/[A-Z]/g, (c) => c.toLowerCase());
const expected = (text: string) => names.filter((n) => asciiLower(n).includes(asciiLower(text))).sort();

const ids = new Map<string, string>();

beforeAll(async () => {
  svc = await startTestService();
  ({ owner } = await teamActors(svc, 'names'));
  const now = Date.now();
  const plan = { teamId: owner.teamId, userId: owner.userId, portalId: '', teamspaceId: '', count: names.length };
  const rows = names.map((name, i) => {
    const id = `pkg_names${String(i).padStart(4, '0')}`;
    ids.set(name, id);
    return { ...seededPackage(plan, i, now), id, name, state: 'finalized' as const, portal_id: null, teamspace_id: null };
  });
  for (let i = 0; i < rows.length; i += 100) await svc.ctx.db.insertInto('packages').values(rows.slice(i, i + 100)).execute();
});
afterAll(async () => svc?.close());

/** Every name the Team list answers for the filter (all pages), and its metadata.total. */
async function listed(text: string): Promise<{ total: number; names: string[] }> {
  const found: string[] = [];
  let total = -1;
  for (let page = 1; page <= 20; page++) {
    const r = await call(svc.url, 'GET', `/v1.1/teams/${owner.teamId}/packages?name=${encodeURIComponent(text)}&page=${page}`, { headers: owner.h });
    expect(r.status, JSON.stringify(r.body)).toBe(200);
    total = r.body.metadata.total;
    found.push(...r.body.records.map((p: { name: string }) => p.name));
    if (found.length >= total) break;
  }
  return { total, names: found.sort() };
}

/** The names matching with a given plan, straight from the service's query. */
async function matching(text: string, plan: NamePlan, fromCandidates = false): Promise<string[]> {
  const rows = await applyFilters(svc.ctx.db.selectFrom('packages'), owner.teamId, { page: 1, limit: 50, name: text }, plan, fromCandidates).select('name').execute();
  return rows.map((r) => r.name).sort();
}

const TEXTS = ['reel 7', 'REEL 7', 'Reel 49', 'ies 29', '100%', 'final_v2', '"the"', 'ÉCOLE', 'École', 'mixed case', 'k\\sl', 'Dailies 2', 'no such name', 'el'];

describe('the name filter', () => {
  it('answers every Package whose name contains the text, ASCII case ignored, % _ " and \\ taken literally', async () => {
    for (const text of TEXTS) {
      const want = expected(text);
      expect(want.length > 0 || text === 'no such name', text).toBe(true);
      expect(await listed(text), text).toEqual({ total: want.length, names: want });
    }
  });

  it('leads with a trigram on SQLite only for a text of 3 or more characters with a trigram in few names', async () => {
    const plan = (text: string) => planNameFilter(svc.ctx.db, owner.teamId, [...FINAL], text);
    if (isPostgres(svc.ctx.db)) {
      // PostgreSQL's planner picks its index from statistics: the query is the same either way.
      for (const text of ['reel 7', 'Dailies', 'el']) expect(await plan(text)).toBeUndefined();
      return;
    }
    // "l 7" is in 6 of 306 names ("ree", "eel" and "el " in nearly all).
    expect(await plan('reel 7')).toEqual({ trigram: 'l 7' });
    expect((await plan('Budget 100%'))?.trigram).toMatch(/^(bud|udg|dge|get)$/i);
    expect(await plan('Dailies')).toBeUndefined(); // in nearly every name: checking each costs less
    expect(await plan('el')).toBeUndefined(); // under three characters, no trigram
  });

  it('gives the same answers led by any trigram of the text as from checking every name', async (ctx) => {
    if (isPostgres(svc.ctx.db)) skipBecause(ctx, 'SQLite only: PostgreSQL has one plan, its pg_trgm index');
    for (const text of TEXTS.filter((t) => [...t].length >= 3)) {
      const want = await matching(text, undefined);
      const chars = [...text];
      for (let i = 0; i + 3 <= chars.length; i++) {
        const trigram = chars.slice(i, i + 3).join('');
        expect(await matching(text, { trigram }, true), `${text} by ${trigram}, counted`).toEqual(want);
        expect(await matching(text, { trigram }), `${text} by ${trigram}, paged`).toEqual(want);
      }
    }
  });

  it('follows renames and deletes', async () => {
    const id = ids.get('MiXeD CaSe Reel')!;
    await svc.ctx.db.updateTable('packages').set({ name: 'Harbour timelapse' }).where('id', '=', id).execute();
    expect((await listed('mixed case')).names).toEqual([]);
    expect((await listed('HARBOUR')).names).toEqual(['Harbour timelapse']);
    if (!isPostgres(svc.ctx.db)) expect(await matching('harbour', { trigram: 'bou' }, true)).toEqual(['Harbour timelapse']);
    await svc.ctx.db.deleteFrom('packages').where('id', '=', id).execute();
    expect(await listed('harbour')).toEqual({ total: 0, names: [] });
    if (!isPostgres(svc.ctx.db)) expect(await matching('harbour', { trigram: 'bou' }, true)).toEqual([]);
  });

  it('on PostgreSQL, is served by the pg_trgm index of lower(name)', async (ctx) => {
    if (!isPostgres(svc.ctx.db)) skipBecause(ctx, POSTGRES_ONLY);
    let plan = '';
    // Rolled back: a table this small is read whole, or from the (team_id, lower(name)) index, by choice;
    // without those choices the trigram index must serve the service's own condition.
    await svc.ctx.db.transaction().execute(async (trx) => {
      await sql`ANALYZE packages`.execute(trx);
      await sql`SET LOCAL enable_seqscan = off`.execute(trx);
      await sql`DROP INDEX packages_team_lname`.execute(trx);
      const where = containsIgnoringCase(sql.ref('name'), 'reel 7');
      const r = await sql<{ 'QUERY PLAN': string }>`EXPLAIN SELECT count(*) FROM packages WHERE ${where}`.execute(trx);
      plan = r.rows.map((x) => x['QUERY PLAN']).join('\n');
      throw new Error('rolled back');
    }).catch((err: Error) => expect(err.message).toBe('rolled back'));
    expect(plan).toContain('packages_lname_trigram');
  });
});
