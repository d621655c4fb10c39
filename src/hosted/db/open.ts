// Opens the hosted service's SQLite database (WAL) and wraps it in Kysely.
import SQLite from 'better-sqlite3';
import { Kysely, SqliteDialect, type SqliteDatabase } from 'kysely';
import type { Database } from './schema.js';
import { migrate } from './migrations.js';

export type Db = Kysely<Database>;

export interface OpenedDb {
  db: Db;
  close(): Promise<void>;
}

export function openDatabase(file: string): OpenedDb {
  const sqlite = new SQLite(file);
  sqlite.pragma('journal_mode = WAL');
  sqlite.pragma('synchronous = NORMAL');
  sqlite.pragma('foreign_keys = ON');
  sqlite.pragma('busy_timeout = 5000');
  migrate(sqlite);
  const db = new Kysely<Database>({ dialect: new SqliteDialect({ database: withStatementCache(sqlite) }) });
  return { db, close: () => db.destroy() };
}

/**
 * Kysely prepares every query anew; compiling the SQL costs more than running it
 * for the small queries of a request. Queries built by the same code have the
 * same text, so statements are kept by text (bounded: text with inlined values
 * would otherwise grow the cache without end). Nothing here streams results and
 * every use is synchronous, so a cached statement is never busy when reused.
 */
function withStatementCache(sqlite: SQLite.Database, limit = 500): SqliteDatabase {
  const cache = new Map<string, SQLite.Statement>();
  return {
    prepare(sql: string) {
      let stmt = cache.get(sql);
      if (!stmt) {
        if (cache.size >= limit) cache.clear();
        cache.set(sql, (stmt = sqlite.prepare(sql)));
      }
      return stmt;
    },
    close: () => void sqlite.close(),
  };
}
