// The agent's durable state: one SQLite file (WAL) in the config dir. Writes
// are synchronous calls that survive a crash as soon as they return, except the
// engine's per-file writes made with soon(), which are committed together at the
// end of the event loop's turn; what must also survive power loss before the
// engine goes on is awaited with synced() (see walSync.ts: one flush, off the
// event loop, for many writes).
import path from 'node:path';
import Database from 'better-sqlite3';
import { migrations } from './migrations.js';
import { createWalkStage } from './walkStage.js';
import { createDownloadStage } from './downloadStage.js';
import { WalSync } from './walSync.js';
import { useWal } from '../../sqlite/wal.js';
import { statementCache } from '../../sqlite/statements.js';
import { HeldElsewhereError, openExclusive } from '../../sqlite/exclusive.js';

export interface AgentDb extends Database.Database {
  /** The statement for `sql`, compiled once: progress reads run many times a second. */
  sql(sql: string): Database.Statement;
  /**
   * Runs `write` in a transaction left open until this turn of the event loop
   * ends, or until synced(): the engine's writes for the many small files whose
   * answers arrive together share one commit. Such a write is lost to a crash
   * only within that turn; whatever must not be lost awaits synced().
   */
  soon(write: () => void): void;
  /**
   * soon(), then resolves once that turn's commit is made (not flushed): for a
   * write that must be in the database before what the caller does next (a
   * crash then finds it), sharing its commit with the others of the turn.
   */
  committed(write: () => void): Promise<void>;
  /** Commits what soon() left open, then resolves once every commit made so far is on disk. */
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
  // No fsync in each commit; synced() flushes the WAL for those that must survive power loss.
  useWal(db);
  db.pragma('foreign_keys = ON');
  migrate(db);
  createWalkStage(db);
  createDownloadStage(db);
  const wal = new WalSync(`${file}-wal`);
  const later = laterCommits(db);
  return Object.assign(db, {
    sql: statementCache(db),
    soon: later.soon,
    committed: later.committed,
    synced: async () => {
      later.commit();
      await wal.synced();
    },
    async shut() {
      try {
        later.commit();
      } finally {
        await wal.close();
        db.close();
      }
    },
  });
}

/**
 * One transaction for the writes of a turn of the event loop (AgentDb.soon):
 * a commit costs ~35 µs here (its WAL frames), more than a small write.
 */
function laterCommits(db: Database.Database): { soon(write: () => void): void; committed(write: () => void): Promise<void>; commit(): void } {
  let open = false;
  /** A commit that failed at the end of a turn, for the next synced() to report. */
  let failed: unknown;
  /** Callers of committed() waiting for the open transaction's commit. */
  let waiting: { done(): void; failed(err: unknown): void }[] = [];
  const commitNow = (): void => {
    if (!open) return;
    open = false;
    const told = waiting;
    waiting = [];
    try {
      db.exec('COMMIT');
    } catch (err) {
      if (db.inTransaction) db.exec('ROLLBACK');
      for (const w of told) w.failed(err);
      throw err;
    }
    for (const w of told) w.done();
  };
  const soon = (write: () => void): void => {
    // Inside a transaction already (one of db.transaction's): the write joins it.
    if (!open && !db.inTransaction) {
      db.exec('BEGIN');
      open = true;
      setImmediate(() => {
        try {
          commitNow();
        } catch (err) {
          failed ??= err;
        }
      });
    }
    write();
  };
  return {
    soon,
    committed(write) {
      soon(write);
      // Joined a transaction of db.transaction's, which commits before this turn ends: nothing to wait for.
      if (!open) return Promise.resolve();
      return new Promise((done, failed) => waiting.push({ done, failed }));
    },
    commit() {
      commitNow();
      if (failed === undefined) return;
      const err = failed;
      failed = undefined;
      throw err;
    },
  };
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
