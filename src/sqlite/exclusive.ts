// Holding a SQLite file for one process: exclusive locking mode with the write
// lock taken at once. SQLite then keeps the lock until the connection closes,
// and the OS drops it whenever the process ends (kill -9 included), so unlike a
// PID file it is never left stale. The agent holds its own database this way;
// the service holds a small lock file beside its data (the admin commands must
// still open the service's database while it runs).
import Database from 'better-sqlite3';
import { sqliteOptions } from './binding.js';

/** Another process holds the file. */
export class HeldElsewhereError extends Error {}

/** How long taking the lock waits: a process killed a moment ago may still be letting go. */
const LOCK_WAIT_MS = 5000;

/**
 * Opens `file` in exclusive locking mode with its write lock taken, or throws
 * HeldElsewhereError when another process holds it. The lock is taken before
 * WAL is first used, so a WAL index then lives in memory (no -shm file).
 */
export function openExclusive(file: string, waitMs = LOCK_WAIT_MS): Database.Database {
  const db = new Database(file, { ...sqliteOptions(), timeout: waitMs });
  db.pragma('locking_mode = EXCLUSIVE');
  try {
    db.exec('BEGIN EXCLUSIVE; COMMIT');
  } catch (err) {
    db.close();
    if ((err as { code?: string }).code === 'SQLITE_BUSY') throw new HeldElsewhereError(`${file} is locked by another process`);
    throw err;
  }
  return db;
}

/** Holds `file` (a small SQLite file made for this) until release() or the process ends. */
export function holdLockFile(file: string, waitMs = LOCK_WAIT_MS): { release(): void } {
  const db = openExclusive(file, waitMs);
  return { release: () => db.close() };
}
