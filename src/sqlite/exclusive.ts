// Holding a SQLite file for one process: exclusive locking mode with the write
// lock taken at once. SQLite then keeps the lock until the connection closes,
// and the OS drops it whenever the process ends (kill -9 included), so unlike a
// PID file it is never left stale. The agent holds its own database this way;
// the service holds a small lock file beside its data (the admin commands must
// still open the service's database while it runs).
import Database from 'better-sqlite3';

/** Another process holds the file. */
export class HeldElsewhereError extends Error {}

/** How long taking the lock waits: a process killed a moment ago may still be letting go. */
export const LOCK_WAIT_MS = 5000;

/**
 * Puts `db` in exclusive locking mode and takes its write lock; closes it and
 * throws HeldElsewhereError when another process holds it. Call it before WAL
 * is first used: the WAL index then lives in memory (no -shm file).
 */
export function holdExclusive(db: Database.Database): void {
  db.pragma('locking_mode = EXCLUSIVE');
  try {
    db.exec('BEGIN EXCLUSIVE; COMMIT');
  } catch (err) {
    db.close();
    if ((err as { code?: string }).code === 'SQLITE_BUSY') throw new HeldElsewhereError(`${db.name} is locked by another process`);
    throw err;
  }
}

/** Holds `file` (a small SQLite file made for this) until release() or the process ends. */
export function holdLockFile(file: string, waitMs = LOCK_WAIT_MS): { release(): void } {
  const db = new Database(file, { timeout: waitMs });
  holdExclusive(db);
  return { release: () => db.close() };
}
