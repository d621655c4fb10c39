// The paged Team Package list (/v1.1): filters, sort and paging in one
// dialect-neutral Kysely query, plus a count of every match (kept counts for
// the unfiltered list: packageCounts.ts; the name filter's trigram index on
// SQLite: nameSearch.ts).
import { sql, type ExpressionBuilder, type SelectQueryBuilder } from 'kysely';
import type { HostedContext } from '../context.js';
import type { Db } from '../db/open.js';
import type { Database, PackageState } from '../db/schema.js';
import type { PackageListPage, PackageListQuery, SortField } from '../../api/hosted/packages.js';
import { badRequest } from '../errors.js';
import { pageRecords } from './packageRecords.js';
import { visiblePackages, type Viewer } from './visibility.js';
import { keptTotal } from './packageCounts.js';
import { nameMatches, planNameFilter, type NamePlan } from './nameSearch.js';

type Q = SelectQueryBuilder<Database, 'packages', object>;
type SortColumn = 'name' | 'created_at' | 'size' | 'expiry' | 'sender' | 'state' | 'teamspace_id';

const SORT_COLUMN: Record<SortField, SortColumn> = {
  name: 'name',
  created_at: 'created_at',
  size: 'size',
  usage_total_bytes: 'size',
  expiry: 'expiry',
  sender: 'sender',
  status: 'state',
  teamspace_id: 'teamspace_id',
};
const NULLABLE = new Set<SortColumn>(['expiry', 'teamspace_id']);
const TEXT = new Set<SortColumn>(['name', 'sender']);
const DEFAULT_STATES: PackageState[] = ['finalized', 'expired'];

const csv = (v: string | undefined) => (v ?? '').split(',').map((s) => s.trim()).filter(Boolean);
const isDate = (s: string) => /^\d{4}-\d{2}-\d{2}$/.test(s);
const DAY_MS = 24 * 3600 * 1000;

/** Start bound: a date means its first instant. End bound: a date means the whole day. */
function bounds(start: string | undefined, end: string | undefined, what: string) {
  const lo = start === undefined ? undefined : new Date(isDate(start) ? `${start}T00:00:00Z` : start).toISOString();
  let hi: { op: '<=' | '<'; at: string } | undefined;
  if (end !== undefined) {
    hi = isDate(end)
      ? { op: '<', at: new Date(Date.parse(`${end}T00:00:00Z`) + DAY_MS).toISOString() }
      : { op: '<=', at: new Date(end).toISOString() };
  }
  if (lo !== undefined && hi !== undefined && (hi.op === '<' ? lo >= hi.at : lo > hi.at)) {
    throw badRequest(`${what}_start must not be after ${what}_end`);
  }
  return { lo, hi };
}

export function statesOf(status: string[] | undefined): PackageState[] {
  if (!status || status.length === 0) return DEFAULT_STATES;
  return [...new Set(status.flatMap((s) => csv(s)))] as PackageState[];
}

/** Keeps SQLite's planner from walking an index on the column, so that the name's candidates lead (nameSearch.ts). */
const notIndexed = (column: 'team_id' | 'state') => sql<string>`+${sql.ref(`packages.${column}`)}`;

/**
 * The query's filters on the Team's Packages; `names` is how the name filter is
 * served (nameSearch.ts), and `fromCandidates` makes its candidates lead (a
 * count: each looked up by rowid) instead of the Team's index (a page, in order).
 */
export function applyFilters(q: Q, teamId: string, f: PackageListQuery, names?: NamePlan, fromCandidates = false): Q {
  const states = statesOf(f.status);
  q = names && fromCandidates
    ? q.where(notIndexed('team_id'), '=', teamId).where(notIndexed('state'), 'in', states)
    : q.where('team_id', '=', teamId).where('state', 'in', states);
  if (f.name) q = q.where((eb) => nameMatches(eb, f.name!, names));
  if (f.sender) q = q.where((eb) => eb(eb.fn('lower', ['sender']), '=', f.sender!.trim().toLowerCase()));
  const tags = csv(f.tags);
  if (tags.length) q = q.where('tag_id', 'in', tags);
  const spaces = csv(f.teamspaces);
  if (spaces.length) q = q.where('teamspace_id', 'in', spaces);
  const created = bounds(f.created_at_start, f.created_at_end, 'created_at');
  if (created.lo) q = q.where('created_at', '>=', created.lo);
  if (created.hi) q = q.where('created_at', created.hi.op, created.hi.at);
  const expiry = bounds(f.expiry_start, f.expiry_end, 'expiry');
  if (expiry.lo) q = q.where('expiry', '>=', expiry.lo);
  if (expiry.hi) q = q.where('expiry', expiry.hi.op, expiry.hi.at);
  if (f.extra_storage !== undefined) q = q.where('unlimited_storage', '=', f.extra_storage ? 1 : 0);
  return q;
}

/** The Team's Packages that match the query's filters, the name filter planned: one query to count them, one to page through them. */
export async function matchingPackages(db: Db, teamId: string, f: PackageListQuery): Promise<{ count: Q; rows: Q }> {
  const names = await planNameFilter(db, teamId, statesOf(f.status), f.name);
  const from = db.selectFrom('packages');
  return { count: applyFilters(from, teamId, f, names, true), rows: applyFilters(from, teamId, f, names) };
}

/**
 * Sort by one field (`-` for descending). Empty values sort last either way,
 * text sorts case-insensitively, and the id breaks ties so pages never overlap.
 */
export function applySort<O>(q: SelectQueryBuilder<Database, 'packages', O>, sort: string | undefined) {
  const desc = sort?.startsWith('-') ?? true;
  const field = (sort?.replace(/^-/, '') || 'created_at') as SortField;
  const column = SORT_COLUMN[field];
  const dir = desc ? 'desc' : 'asc';
  if (NULLABLE.has(column)) {
    q = q.orderBy((eb: ExpressionBuilder<Database, 'packages'>) => eb.case().when(column, 'is', null).then(1).else(0).end(), 'asc');
  }
  if (TEXT.has(column)) q = q.orderBy((eb: ExpressionBuilder<Database, 'packages'>) => eb.fn('lower', [column]), dir);
  return q.orderBy(column, dir).orderBy('id', dir);
}

/** The viewer's Team's Packages that the viewer may read (services/visibility.ts). */
export async function listTeamPackages(ctx: HostedContext, viewer: Viewer, query: PackageListQuery): Promise<PackageListPage> {
  const { page, limit } = query;
  const matching = await matchingPackages(ctx.db, viewer.teamId, query);
  const n = (await keptTotal(ctx, viewer, query, statesOf(query.status))) ??
    (await matching.count.where(visiblePackages(viewer)).select((eb) => eb.fn.countAll<number | string>().as('n')).executeTakeFirstOrThrow()).n;
  const rows = await applySort(matching.rows.where(visiblePackages(viewer)).selectAll(), query.sort)
    .limit(limit)
    .offset((page - 1) * limit)
    .execute();
  const records = await pageRecords(ctx, rows);
  return { metadata: { total: Number(n), page, limit }, records };
}
