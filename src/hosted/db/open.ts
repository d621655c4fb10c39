// Opens the hosted service's database: SQLite (WAL) in the data dir by default,
// PostgreSQL when a postgres:// URL is configured (db/postgres.ts).
import SQLite from 'better-sqlite3';
import { Kysely, SqliteDialect, type SqliteDatabase } from 'kysely';
import type { Database } from './schema.js';
import { migrate } from './migrations.js';
import { statementCache } from '../../sqlite/statements.js';
import { sqliteOptions } from '../../sqlite/binding.js';
import { useWal } from '../../sqlite/wal.js';

export type Db = Kysely<Database>;

export interface OpenedDb {
  db: Db;
  close(): Promise<void>;
}

export function openDatabase(file: string): OpenedDb {
  const sqlite = new SQLite(file, sqliteOptions());
  useWal(sqlite);
  sqlite.pragma('foreign_keys = ON');
  sqlite.pragma('busy_timeout = 5000');
  migrate(sqlite);
  const db = new Kysely<Database>({ dialect: new SqliteDialect({ database: withStatementCache(sqlite) }) });
  return { db, close: () => db.destroy() };
}

/** Kysely prepares every query anew; statements are kept by their text instead (src/sqlite/statements.ts). */
function withStatementCache(sqlite: SQLite.Database): SqliteDatabase {
  return { prepare: statementCache(sqlite), close: () => void sqlite.close() };
}

/** The configured database: PostgreSQL for a postgres:// URL, else SQLite's ferry.db in the data dir. */
export async function openConfiguredDatabase(opts: { database?: string; sqliteFile: string; onIdleError?: (err: Error) => void }): Promise<OpenedDb> {
  if (opts.database) {
    const { openPostgres } = await import('./postgres.js');
    return openPostgres(opts.database, { onIdleError: opts.onIdleError });
  }
  return openDatabase(opts.sqliteFile);
}
