// Versioned schema migrations, one set for SQLite and PostgreSQL, and how they
// run. The data access elsewhere goes through Kysely; dialect differences in DDL
// live in the migrations (migrations/*.ts, grouped by the capability that brought them).
import type Database from 'better-sqlite3';
import { sql, type Kysely } from 'kysely';
import type { DialectName } from './dialect.js';
import { postgresTypes, type Migration } from './migrations/ddl.js';
import { coreMigrations } from './migrations/core.js';
import { integrationMigrations } from './migrations/integrations.js';
import { teamspacesFormsMigrations } from './migrations/teamspacesForms.js';
import { protectionMigrations } from './migrations/protection.js';
import { realtimeMigrations } from './migrations/realtime.js';
import { packageListMigrations } from './migrations/packageLists.js';
import { sessionMigrations } from './migrations/sessions.js';
import { fileListMigrations } from './migrations/fileLists.js';

export { postgresTypes, type Migration } from './migrations/ddl.js';

/** Every migration, in the order of their versions (the files group them by what they hold). */
export const migrations: Migration[] = [
  ...coreMigrations,
  ...integrationMigrations,
  ...teamspacesFormsMigrations,
  ...protectionMigrations,
  ...realtimeMigrations,
  ...packageListMigrations,
  ...sessionMigrations,
  ...fileListMigrations,
].sort((a, b) => a.version - b.version);

export function migrationSql(m: Migration, dialect: DialectName): string {
  return dialect === 'postgres' ? (m.postgres ?? postgresTypes(m.sql)) : m.sql;
}

const CREATE_VERSIONS = `CREATE TABLE IF NOT EXISTS schema_migrations (
    version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at TEXT NOT NULL)`;

/** Applies every migration newer than the SQLite database, each in its own transaction. */
export function migrate(sqlite: Database.Database): number[] {
  sqlite.exec(CREATE_VERSIONS);
  const done = new Set(
    (sqlite.prepare('SELECT version FROM schema_migrations').all() as { version: number }[]).map((r) => r.version),
  );
  const applied: number[] = [];
  for (const m of migrations) {
    if (done.has(m.version)) continue;
    sqlite.transaction(() => {
      sqlite.exec(migrationSql(m, 'sqlite'));
      sqlite
        .prepare('INSERT INTO schema_migrations (version, name, applied_at) VALUES (?, ?, ?)')
        .run(m.version, m.name, new Date().toISOString());
    })();
    applied.push(m.version);
  }
  return applied;
}

/** Any constant: the advisory lock that instances migrating one database take in turn. */
const MIGRATION_LOCK = 0x6665727279; // "ferry"

/**
 * Applies every migration newer than the PostgreSQL database, all in one
 * transaction under a transaction-scoped advisory lock: instances starting
 * together wait for each other, and the later ones find nothing left to do.
 * PostgreSQL's DDL is transactional, so a failed migration leaves no trace.
 */
export async function migratePostgres(db: Kysely<any>): Promise<number[]> {
  return db.transaction().execute(async (trx) => {
    await sql`SELECT pg_advisory_xact_lock(${MIGRATION_LOCK})`.execute(trx);
    await sql.raw(postgresTypes(CREATE_VERSIONS)).execute(trx);
    const rows = await sql<{ version: number }>`SELECT version FROM schema_migrations`.execute(trx);
    const done = new Set(rows.rows.map((r) => Number(r.version)));
    const applied: number[] = [];
    for (const m of migrations) {
      if (done.has(m.version)) continue;
      // No parameters: pg sends it as a simple query, which may hold several statements.
      await sql.raw(migrationSql(m, 'postgres')).execute(trx);
      await sql`INSERT INTO schema_migrations (version, name, applied_at) VALUES (${m.version}, ${m.name}, ${new Date().toISOString()})`.execute(trx);
      applied.push(m.version);
    }
    return applied;
  });
}
