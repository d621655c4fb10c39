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
 * `column` contains `text`, letter case ignored, alike on both: lower() on both
 * sides of LIKE, because LIKE ignores ASCII case on SQLite but not on PostgreSQL
 * (whose ILIKE SQLite lacks). `\` escapes the wildcards.
 */
export function containsIgnoringCase(column: Expression<unknown>, text: string): RawBuilder<boolean> {
  return sql<boolean>`lower(${column}) like ${likeContains(text.toLowerCase())} escape '\\'`;
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
