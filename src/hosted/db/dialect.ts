// The few places where SQLite and PostgreSQL differ, kept in one module. A
// query builder (the database or a transaction of it) knows its dialect.
import { PostgresAdapter, sql, type Expression, type Kysely, type RawBuilder, type SelectQueryBuilder, type Transaction } from 'kysely';

export type DialectName = 'sqlite' | 'postgres';

type AnyDb = Kysely<any> | Transaction<any>;

export function dialectOf(db: AnyDb): DialectName {
  return db.getExecutor().adapter instanceof PostgresAdapter ? 'postgres' : 'sqlite';
}

export const isPostgres = (db: AnyDb) => dialectOf(db) === 'postgres';

/** LIKE pattern for a literal substring: `\` escapes %, _ and itself. */
export const likeContains = (s: string) => `%${s.replace(/[\\%_]/g, (c) => `\\${c}`)}%`;

/**
 * `column` contains `text`, letter case ignored: ILIKE on PostgreSQL, LIKE on
 * SQLite (case-insensitive for ASCII there); `\` escapes the wildcards on both.
 */
export function containsIgnoringCase(db: AnyDb, column: Expression<unknown>, text: string): RawBuilder<boolean> {
  const op = isPostgres(db) ? sql`ilike` : sql`like`;
  return sql<boolean>`${column} ${op} ${likeContains(text)} escape '\\'`;
}

/**
 * Locks the rows a select reads until the transaction ends, on PostgreSQL
 * (SELECT ... FOR UPDATE). SQLite needs nothing: a write transaction there holds
 * the whole database, so no other writer runs between its read and its write.
 * Callers on SQLite must begin with a write for that to hold (see lockRow).
 */
export function forUpdate<QB extends SelectQueryBuilder<any, any, any>>(db: AnyDb, qb: QB): QB {
  return isPostgres(db) ? (qb.forUpdate() as QB) : qb;
}
