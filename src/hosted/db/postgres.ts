// Opens the hosted service's PostgreSQL database (pg's Pool under Kysely's
// PostgresDialect) and brings its schema up to date under the migration lock.
import pg from 'pg';
import { Kysely, PostgresDialect } from 'kysely';
import type { Database } from './schema.js';
import { migratePostgres } from './migrations.js';
import type { OpenedDb } from './open.js';

const INT8 = 20;
const NUMERIC = 1700;

/**
 * pg returns BIGINT (every integer column here, and count(*)) and NUMERIC
 * (sum()) as strings, for their range; every value the service stores is below
 * 2^53, so they come back as numbers, as on SQLite. Per pool, not pg's globals.
 */
const types = {
  getTypeParser(oid: number, format?: 'text' | 'binary') {
    if (oid === INT8 || oid === NUMERIC) return (v: string) => (v === null ? null : Number(v));
    return pg.types.getTypeParser(oid, format as 'text');
  },
} as pg.CustomTypesConfig;

export const isPostgresUrl = (url: string) => /^postgres(ql)?:\/\//i.test(url);

export interface PostgresOptions {
  /** Connections this process keeps at most (pg Pool's max). */
  poolSize?: number;
  /** Told when an idle connection fails (the server restarted, or ended it): the pool replaces it. */
  onIdleError?: (err: Error) => void;
}

export async function openPostgres(url: string, opts: PostgresOptions = {}): Promise<OpenedDb> {
  const pool = new pg.Pool({ connectionString: url, max: opts.poolSize ?? 10, types });
  // Without a listener, an idle connection the server ends would crash the process.
  pool.on('error', (err) => opts.onIdleError?.(err));
  const db = new Kysely<Database>({ dialect: new PostgresDialect({ pool }) });
  try {
    await migratePostgres(db);
  } catch (err) {
    await db.destroy();
    throw err;
  }
  return { db, close: () => db.destroy() };
}
