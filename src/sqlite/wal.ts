// The journal of the agent's and the service's SQLite files: a write-ahead log,
// without an fsync in each commit (what must survive power loss is flushed by
// its caller: the agent's synced(), walSync.ts), and given back to the disk
// after a checkpoint: a transaction of a million rows (the walk of a dataset)
// grows the log past 200 MB, and SQLite otherwise keeps a log's size for reuse.
import type Database from 'better-sqlite3';

/** What the log keeps of its size once checkpointed. */
export const WAL_SIZE_LIMIT = 64 << 20;

export function useWal(db: Database.Database): void {
  db.pragma('journal_mode = WAL');
  db.pragma('synchronous = NORMAL');
  db.pragma(`journal_size_limit = ${WAL_SIZE_LIMIT}`);
}
