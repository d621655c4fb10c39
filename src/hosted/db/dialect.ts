// The few places where SQLite and PostgreSQL differ, kept in one module. A
// query builder (the database or a transaction of it) knows its dialect.
import { PostgresAdapter, sql, type Expression, type Kysely, type RawBuilder, type Transaction } from 'kysely';

export type DialectName = 'sqlite' | 'postgres';

type AnyDb = Kysely<any> | Transaction<any>;

export function dialectOf(db: AnyDb): DialectName {
  return db.getExecutor().adapter instanceof PostgresAdapter ? 'postgres' : 'sqlite';
}

export const isPostgres = (db: AnyDb) => dialectOf(db) === 'postgres';

/** LIKE pattern for a literal substring: `\` escapes %, _ and itself. */
export const likeContains = (s: string) => `%${s.replace(/[\\%_]/g, (c) => `\\${c}`)}%`;

/**
 * `column` contains `text`, letter case ignored, alike on both: the database's
 * lower() on both sides of LIKE (one folding for the name and the text: SQLite's
 * folds ASCII only), because LIKE ignores ASCII case on SQLite but not on
 * PostgreSQL (whose ILIKE SQLite lacks). `\` escapes the wildcards.
 */
export function containsIgnoringCase(column: Expression<unknown>, text: string): RawBuilder<boolean> {
  return sql<boolean>`lower(${column}) like lower(${likeContains(text)}) escape '\\'`;
}

/**
 * Holds a row (by id) until the transaction ends, so that what the transaction
 * reads next (a Package's files against a Portal limit, say) cannot change under
 * it: SELECT ... FOR UPDATE on PostgreSQL, whose READ COMMITTED lets other writers
 * in between. Nothing on SQLite: one writer at a time holds the whole database, and
 * Kysely's SQLite driver runs one transaction at a time on its one connection.
 */
export async function lockRow(db: AnyDb, table: 'packages' | 'portals' | 'links' | 'teams', id: string): Promise<void> {
  if (!isPostgres(db)) return;
  await sql`SELECT id FROM ${sql.table(table)} WHERE id = ${id} FOR UPDATE`.execute(db);
}

/** Any constant: the advisory lock that orders the writers of realtime events. */
const EVENTS_LOCK = 0x6576656e7473; // "events"

/**
 * Event ids must become visible in id order, or a stream reading "after id N"
 * could pass an id whose transaction commits later and never see it. SQLite
 * commits one writer at a time; on PostgreSQL a transaction that writes events
 * takes this lock first and holds it to its commit, so the next writer's ids
 * come after. Call it in the transaction, before its first event insert.
 */
export async function orderEventWriters(trx: AnyDb): Promise<void> {
  if (isPostgres(trx)) await sql`SELECT pg_advisory_xact_lock(${EVENTS_LOCK})`.execute(trx);
}

/**
 * Runs an events read after every event writer in flight has committed or rolled
 * back (PostgreSQL: a shared hold of the writers' lock), as a read on SQLite's one
 * connection waits for the writing transaction: a stream told of an id then finds it.
 */
export async function afterEventWriters<T>(db: Kysely<any>, read: (db: AnyDb) => Promise<T>): Promise<T> {
  if (!isPostgres(db)) return read(db);
  return db.transaction().execute(async (trx) => {
    await sql`SELECT pg_advisory_xact_lock_shared(${EVENTS_LOCK})`.execute(trx);
    return read(trx);
  });
}
