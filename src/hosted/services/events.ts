// Realtime events (docs/hosted-api-notes/events.md): written in the transaction
// of the change they tell of, so an event exists if and only if the change
// committed, read back by the streams in id order, and swept after a day.
import { sql, type Kysely, type Selectable, type Transaction } from 'kysely';
import type { HostedContext } from '../context.js';
import type { Database, EventsTable, PackagesTable } from '../db/schema.js';
import { visiblePackages, type Viewer } from './visibility.js';
import type { FilePayload, PackageStatePayload, StreamEvent, StreamEventType } from '../../api/hosted/events.js';
import { nowIso } from '../ids.js';
import { afterEventWriters, isPostgres, orderEventWriters } from '../db/dialect.js';
import { compiledOnce } from '../db/compiled.js';

type Conn = Kysely<Database> | Transaction<Database>;

/** How long events are kept for a replay (Last-Event-ID). */
export const EVENT_RETENTION_MS = 24 * 3600 * 1000;

export type EventPackageRef = Pick<PackagesTable, 'id' | 'team_id' | 'portal_id'>;

// Two for each file uploaded (registered, finalized).
const insertEvent = compiledOnce((db: Kysely<Database>, team_id: string, package_id: string, portal_id: string | null, type: StreamEventType, payload: string, created_at: string) =>
  db.insertInto('events').values({ team_id, package_id, portal_id, type, payload, created_at }).returning('id'));

/** Writes one event in `trx` (the change's transaction) and tells the streams; answers its id. */
export async function raiseEvent(
  ctx: Pick<HostedContext, 'events'>,
  trx: Conn,
  type: StreamEventType,
  pkg: EventPackageRef,
  payload: object,
  at = nowIso(),
): Promise<number> {
  // On PostgreSQL the id order must be the commit order (db/dialect.ts): alone, the insert gets a transaction of its own.
  if (!trx.isTransaction && isPostgres(trx)) return trx.transaction().execute((t) => raiseEvent(ctx, t, type, pkg, payload, at));
  await orderEventWriters(trx);
  const [row] = await insertEvent(trx, pkg.team_id, pkg.id, pkg.portal_id, type, JSON.stringify(payload), at);
  if (!row) throw new Error('the event insert answered no id');
  await ctx.events.raised(trx, row.id);
  return row.id;
}

export const packagePayload = (
  pkg: Pick<PackagesTable, 'state' | 'name' | 'size' | 'total_files'>,
  reason?: PackageStatePayload['reason'],
): PackageStatePayload => ({ state: pkg.state, name: pkg.name, size: pkg.size, total_files: pkg.total_files, ...(reason ? { reason } : {}) });

export const filePayload = (f: { id: string; kind?: 'file' | 'directory'; name: string; path: string; size: number | null }): FilePayload => ({
  file_id: f.id,
  ...(f.kind ? { kind: f.kind } : {}),
  name: f.name,
  path: f.path,
  size: f.size,
});

/** A Package state change of each of `ids` (read in `trx` as they are now). */
export async function raisePackageStates(ctx: Pick<HostedContext, 'events'>, trx: Conn, type: StreamEventType, ids: string[], reason?: PackageStatePayload['reason']): Promise<void> {
  if (ids.length === 0) return;
  const at = nowIso();
  for (let i = 0; i < ids.length; i += 500) {
    const rows = await trx.selectFrom('packages').selectAll().where('id', 'in', ids.slice(i, i + 500)).execute();
    for (const pkg of rows) await raiseEvent(ctx, trx, type, pkg, packagePayload(pkg, reason), at);
  }
}

export function toStreamEvent(row: Selectable<EventsTable>): StreamEvent {
  return {
    id: row.id,
    type: row.type as StreamEventType,
    team_id: row.team_id,
    package_id: row.package_id,
    portal_id: row.portal_id,
    created_at: row.created_at,
    payload: JSON.parse(row.payload) as Record<string, unknown>,
  };
}

export type EventScope = ({ packageId: string } | { teamId: string; viewer: Viewer }) & {
  /** Only these types; all when absent. */
  types?: StreamEventType[];
};

/** Events of the scope after `after`, oldest first, at most `limit`. */
export async function eventsAfter(ctx: HostedContext, scope: EventScope, after: number, limit = 500): Promise<StreamEvent[]> {
  return afterEventWriters(ctx.db, (db) => readEventsAfter(db as Conn, scope, after, limit));
}

async function readEventsAfter(db: Conn, scope: EventScope, after: number, limit: number): Promise<StreamEvent[]> {
  let q = db.selectFrom('events').selectAll().where('id', '>', after);
  if ('packageId' in scope) {
    q = q.where('package_id', '=', scope.packageId);
  } else {
    const readable = db
      .selectFrom('packages')
      .select('packages.id')
      .where('packages.id', '=', sql.ref<string>('events.package_id'))
      // The rule of every Package read (services/visibility.ts), as of each event read.
      .where(visiblePackages(scope.viewer));
    q = q.where('team_id', '=', scope.teamId).where((eb) => eb.exists(readable));
  }
  if (scope.types) q = q.where('type', 'in', scope.types);
  const rows = await q.orderBy('id').limit(limit).execute();
  return rows.map(toStreamEvent);
}

/** The oldest and newest event ids kept (null when there is none yet). */
export async function eventBounds(ctx: HostedContext): Promise<{ oldest: number | null; newest: number | null }> {
  const r = await ctx.db
    .selectFrom('events')
    .select((eb) => [eb.fn.min('id').as('oldest'), eb.fn.max('id').as('newest')])
    .executeTakeFirstOrThrow();
  return { oldest: r.oldest === null ? null : Number(r.oldest), newest: r.newest === null ? null : Number(r.newest) };
}

/**
 * Deletes events older than the retention, but never the newest one: the table
 * then always tells how far ids went, so a replay from an id that was swept is
 * known as such (streams answer it with `reset`).
 */
export async function sweepEvents(ctx: HostedContext, now = Date.now()): Promise<number> {
  const cutoff = new Date(now - EVENT_RETENTION_MS).toISOString();
  const { newest } = await eventBounds(ctx);
  if (newest === null) return 0;
  const r = await ctx.db.deleteFrom('events').where('created_at', '<', cutoff).where('id', '<', newest).executeTakeFirst();
  return Number(r.numDeletedRows);
}
