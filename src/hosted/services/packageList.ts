// The paged Team Package list (/v1.1): filters, sort and paging in one
// dialect-neutral Kysely query, plus a count of every match (kept counts for
// the unfiltered list: packageCounts.ts).
import { sql, type ExpressionBuilder, type SelectQueryBuilder } from 'kysely';
import type { HostedContext } from '../context.js';
import { containsIgnoringCase } from '../db/dialect.js';
import type { Database, PackageState } from '../db/schema.js';
import type { PackageListPage, PackageListQuery, SortField } from '../../api/hosted/packages.js';
import { badRequest } from '../errors.js';
import { pageRecords } from './packageRecords.js';
import { visiblePackages, type Viewer } from './visibility.js';
import { keptTotal } from './packageCounts.js';

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

export function applyFilters(q: Q, teamId: string, f: PackageListQuery): Q {
  q = q.where('team_id', '=', teamId).where('state', 'in', statesOf(f.status));
  if (f.name) q = q.where((eb) => containsIgnoringCase(eb.ref('name'), f.name!));
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
  const base = applyFilters(ctx.db.selectFrom('packages'), viewer.teamId, query).where(visiblePackages(viewer));
  const n = (await keptTotal(ctx, viewer, query, statesOf(query.status))) ??
    (await base.select((eb) => eb.fn.countAll<number | string>().as('n')).executeTakeFirstOrThrow()).n;
  const rows = await applySort(base.selectAll(), query.sort)
    .limit(limit)
    .offset((page - 1) * limit)
    .execute();
  const records = await pageRecords(ctx, rows);
  return { metadata: { total: Number(n), page, limit }, records };
}
