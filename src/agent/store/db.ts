// The agent's durable state: one SQLite file (WAL) in the config dir. Writes
// are synchronous calls that survive a crash as soon as they return; what must
// also survive power loss before the engine goes on is awaited with synced()
// (see walSync.ts: one flush, off the event loop, for many writes).
import path from 'node:path';
import Database from 'better-sqlite3';
import { migrations } from './migrations.js';
import { WalSync } from './walSync.js';
import { statementCache } from '../../sqlite/statements.js';
import { HeldElsewhereError, openExclusive } from '../../sqlite/exclusive.js';

export interface AgentDb extends Database.Database {
  /** The statement for `sql`, compiled once: progress reads run many times a second. */
  sql(sql: string): Database.Statement;
  /** Resolves once every commit made so far is on disk. */
  synced(): Promise<void>;
  /** Closes the database, after the flush under way. */
  shut(): Promise<void>;
}

/** Another agent holds the config dir's database. */
export class ConfigDirInUseError extends Error {}

export function openAgentDb(file: string): AgentDb {
  // One agent per config dir: two would both resume the same transfers. Held
  // from here until the agent stops (src/sqlite/exclusive.ts), which also
  // spares each transaction its file-lock calls.
  let db: Database.Database;
  try {
    db = openExclusive(file);
  } catch (err) {
    if (!(err instanceof HeldElsewhereError)) throw err;
    throw new ConfigDirInUseError(`another ferry agent is using ${path.dirname(file)} (its agent.db is locked); stop it, or give this one another --config-dir`);
  }
  db.pragma('journal_mode = WAL');
  // NORMAL: no fsync in each commit; synced() flushes the WAL for those that must survive power loss.
  db.pragma('synchronous = NORMAL');
  db.pragma('foreign_keys = ON');
  migrate(db);
  const wal = new WalSync(`${file}-wal`);
  return Object.assign(db, {
    sql: statementCache(db),
    synced: () => wal.synced(),
    async shut() {
      await wal.close();
      db.close();
    },
  });
}

function migrate(db: Database.Database): void {
  db.exec('CREATE TABLE IF NOT EXISTS schema_migrations (version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at TEXT NOT NULL)');
  const done = new Set((db.prepare('SELECT version FROM schema_migrations').all() as { version: number }[]).map((r) => r.version));
  for (const m of [...migrations].sort((a, b) => a.version - b.version)) {
    if (done.has(m.version)) continue;
    db.transaction(() => {
      db.exec(m.sql);
      db.prepare('INSERT INTO schema_migrations (version, name, applied_at) VALUES (?, ?, ?)').run(m.version, m.name, new Date().toISOString());
    })();
  }
}
