// Downloads in SQLite: one row per download, one per Package entry, one per
// finished range. A range is inserted only once its bytes are on disk, so after
// a crash the engine re-fetches exactly the ranges that were not recorded.
import type { AgentDb } from './db.js';
import type { Migration } from './migrations.js';
import { CANCELED } from './canceledTransfers.js';
import { takeListing } from './downloadStage.js';

export const downloadsMigration: Migration = {
  version: 3,
  name: 'downloads',
  sql: `CREATE TABLE downloads (
    id TEXT PRIMARY KEY,
    api_base TEXT NOT NULL,
    link_id TEXT NOT NULL,
    link_secret TEXT NOT NULL,
    link_password TEXT,
    package_id TEXT NOT NULL,
    package_name TEXT NOT NULL,
    package_token TEXT NOT NULL,
    dst_folder TEXT NOT NULL,
    root_segments TEXT NOT NULL,
    chunk_size INTEGER NOT NULL,
    priority INTEGER NOT NULL,
    user_id INTEGER,
    group_id INTEGER,
    state TEXT NOT NULL CHECK (state IN ('transferring','paused','complete','error')),
    error TEXT,
    created_at TEXT NOT NULL,
    updated_at TEXT NOT NULL
  );
  CREATE TABLE download_items (
    download_id TEXT NOT NULL REFERENCES downloads(id) ON DELETE CASCADE,
    file_id TEXT NOT NULL,
    seq INTEGER NOT NULL,
    rel_path TEXT NOT NULL,
    segments TEXT,
    size INTEGER NOT NULL,
    last_modified TEXT,
    local_name TEXT,
    etag TEXT,
    state TEXT NOT NULL CHECK (state IN ('pending','complete','skipped','error')),
    error TEXT,
    PRIMARY KEY (download_id, file_id)
  );
  CREATE TABLE download_ranges (
    download_id TEXT NOT NULL,
    file_id TEXT NOT NULL,
    idx INTEGER NOT NULL,
    PRIMARY KEY (download_id, file_id, idx),
    FOREIGN KEY (download_id, file_id) REFERENCES download_items(download_id, file_id) ON DELETE CASCADE
  );
  CREATE TABLE download_dirs (
    download_id TEXT NOT NULL REFERENCES downloads(id) ON DELETE CASCADE,
    path TEXT NOT NULL,
    PRIMARY KEY (download_id, path)
  );`,
};

/**
 * Whether a download's error is one that resumes by itself (at start, and when the
 * service comes back). Rows in error from before the column: those that ran out of
 * retries, which the agent of then said as "gave up after N tries".
 */
export const downloadsRecoverableMigration: Migration = {
  version: 4,
  name: 'downloads_error_recoverable',
  sql: `ALTER TABLE downloads ADD COLUMN error_recoverable INTEGER NOT NULL DEFAULT 0;
  UPDATE downloads SET error_recoverable = 1 WHERE state = 'error' AND error LIKE '%gave up after % tries%';`,
};

/**
 * The engine reads a download's entries a window at a time in `seq` order, and
 * pages of them for the API: by (download_id, seq), not by the primary key's file_id.
 */
export const downloadSeqMigration: Migration = {
  version: 11,
  name: 'download_items_seq',
  sql: `CREATE INDEX download_items_seq ON download_items (download_id, seq);`,
};

export type DownloadState = 'transferring' | 'paused' | 'complete' | 'error';
export type ItemState = 'pending' | 'complete' | 'skipped' | 'error';

export interface DownloadRow {
  id: string;
  api_base: string;
  link_id: string;
  link_secret: string;
  link_password: string | null;
  package_id: string;
  package_name: string;
  package_token: string;
  dst_folder: string;
  /** JSON array: the folders between dst_folder and the Package root (the Package folder, or none). */
  root_segments: string;
  chunk_size: number;
  priority: number;
  user_id: number | null;
  group_id: number | null;
  state: DownloadState;
  error: string | null;
  /** 1 when the error resumes by itself (the network, the service or the store, after --retry-for). */
  error_recoverable?: number;
  /** Set once canceled (then state error, error "Canceled"). */
  canceled_at?: string | null;
  created_at: string;
  updated_at: string;
}

export interface ItemRow {
  download_id: string;
  file_id: string;
  seq: number;
  /** The sender's relative path, `folder/name`. */
  rel_path: string;
  /** JSON array of local folder segments below the root plus the file name; null when the path was refused. */
  segments: string | null;
  size: number;
  last_modified: string | null;
  /** The file name actually written (maybe `name (1).ext`), chosen once and kept for resumes. */
  local_name: string | null;
  etag: string | null;
  state: ItemState;
  error: string | null;
}

const now = () => new Date().toISOString();

/** The download and the files its plan staged, in one transaction (downloadStage.takeListing). */
export function insertDownload(db: AgentDb, row: DownloadRow, stage: string): void {
  const d = db.sql(
    `INSERT INTO downloads (id, api_base, link_id, link_secret, link_password, package_id, package_name, package_token, dst_folder,
       root_segments, chunk_size, priority, user_id, group_id, state, error, created_at, updated_at)
     VALUES (@id, @api_base, @link_id, @link_secret, @link_password, @package_id, @package_name, @package_token, @dst_folder,
       @root_segments, @chunk_size, @priority, @user_id, @group_id, @state, @error, @created_at, @updated_at)`,
  );
  db.transaction(() => {
    d.run(row);
    takeListing(db, stage, row.id);
  })();
}

export function loadDownloads(db: AgentDb): DownloadRow[] {
  return db.sql('SELECT * FROM downloads ORDER BY created_at, id').all() as DownloadRow[];
}

/** Up to `limit` pending entries after `afterSeq`, in order. */
export function pendingAfter(db: AgentDb, id: string, afterSeq: number, limit: number): ItemRow[] {
  return db.sql("SELECT * FROM download_items WHERE download_id = ? AND seq > ? AND state = 'pending' ORDER BY seq LIMIT ?").all(id, afterSeq, limit) as ItemRow[];
}

/** Up to `limit` entries after `afterSeq`, in order; `open`: only those not complete. */
export function itemsAfter(db: AgentDb, id: string, afterSeq: number, limit: number, open = false): ItemRow[] {
  const where = open ? "AND state != 'complete'" : '';
  return db.sql(`SELECT * FROM download_items WHERE download_id = ? AND seq > ? ${where} ORDER BY seq LIMIT ?`).all(id, afterSeq, limit) as ItemRow[];
}

/** The entries at these places of the list. */
export function itemsAt(db: AgentDb, id: string, seqs: number[]): ItemRow[] {
  return db.sql('SELECT * FROM download_items WHERE download_id = ? AND seq IN (SELECT value FROM json_each(?)) ORDER BY seq').all(id, JSON.stringify(seqs)) as ItemRow[];
}

/** The finished ranges of these entries: file_id -> range indexes. */
export function rangesOf(db: AgentDb, id: string, fileIds: string[]): Map<string, number[]> {
  const out = new Map<string, number[]>();
  if (fileIds.length === 0) return out;
  const rows = db.sql('SELECT file_id, idx FROM download_ranges WHERE download_id = ? AND file_id IN (SELECT value FROM json_each(?))').all(id, JSON.stringify(fileIds)) as { file_id: string; idx: number }[];
  for (const r of rows) {
    let list = out.get(r.file_id);
    if (!list) out.set(r.file_id, (list = []));
    list.push(r.idx);
  }
  return out;
}

export interface ItemCounts {
  files: number;
  /** Bytes of the entries not skipped. */
  size: number;
  complete: number;
  failed: number;
  /** Bytes of complete entries plus the recorded ranges of the others. */
  progress: number;
}

/**
 * A download's totals, from its rows (at load, resume and cancel; the job keeps
 * them up to date between); `progress` leaves out the entries at `heldSeqs`,
 * whose progress the job holds.
 */
export function itemCounts(db: AgentDb, id: string, chunkSize: number, heldSeqs: number[]): ItemCounts {
  const c = db
    .sql(
      `SELECT COUNT(*) AS files, COALESCE(SUM(CASE WHEN state != 'skipped' THEN size END), 0) AS size,
         COALESCE(SUM(state = 'complete'), 0) AS complete, COALESCE(SUM(state = 'error'), 0) AS failed,
         COALESCE(SUM(CASE WHEN state = 'complete' THEN size END), 0) AS progress
       FROM download_items WHERE download_id = ?`,
    )
    .get(id) as ItemCounts;
  const held = JSON.stringify(heldSeqs);
  // Complete entries' ranges are forgotten (setItemComplete), so these are the ranges of entries under way.
  const ranges = db
    .sql(
      `SELECT i.size, r.idx FROM download_ranges r JOIN download_items i USING (download_id, file_id)
       WHERE r.download_id = ? AND i.state IN ('pending', 'error') AND i.seq NOT IN (SELECT value FROM json_each(?))`,
    )
    .all(id, held) as { size: number; idx: number }[];
  for (const r of ranges) c.progress += Math.max(0, Math.min(r.size, (r.idx + 1) * chunkSize) - r.idx * chunkSize);
  return c;
}

/** The first entry in error, for the download's message. */
export function firstFailed(db: AgentDb, id: string): ItemRow | undefined {
  return db.sql("SELECT * FROM download_items WHERE download_id = ? AND state = 'error' ORDER BY seq LIMIT 1").get(id) as ItemRow | undefined;
}

/** Entries in error go back to pending (a resume); answers how many. */
export function retryFailed(db: AgentDb, id: string): number {
  return db.sql("UPDATE download_items SET state = 'pending', error = NULL WHERE download_id = ? AND state = 'error'").run(id).changes;
}

/** Every pending entry ends in error (a cancel): their ranges are forgotten and their partial files' names cleared; answers the rows as they were. */
export function failPending(db: AgentDb, id: string, error: string): ItemRow[] {
  return db.transaction(() => {
    const rows = db.sql("SELECT * FROM download_items WHERE download_id = ? AND state = 'pending'").all(id) as ItemRow[];
    db.sql("DELETE FROM download_ranges WHERE download_id = ? AND file_id IN (SELECT file_id FROM download_items WHERE download_id = ? AND state = 'pending')").run(id, id);
    db.sql("UPDATE download_items SET state = 'error', error = ?, local_name = NULL WHERE download_id = ? AND state = 'pending'").run(error, id);
    return rows;
  })();
}

/** The entry is complete: its ranges are no longer needed (a resume skips it whole). */
export function setItemComplete(db: AgentDb, id: string, fileId: string): void {
  db.sql("UPDATE download_items SET state = 'complete', error = NULL WHERE download_id = ? AND file_id = ?").run(id, fileId);
  db.sql('DELETE FROM download_ranges WHERE download_id = ? AND file_id = ?').run(id, fileId);
}

export function setDownloadState(db: AgentDb, id: string, state: DownloadState, error: string | null, recoverable = false): string {
  const at = now();
  db.sql('UPDATE downloads SET state = ?, error = ?, error_recoverable = ?, updated_at = ? WHERE id = ?').run(state, error, recoverable ? 1 : 0, at, id);
  return at;
}

/** Canceled: in error for good (never resumed), with the time; answers it. */
export function setDownloadCanceled(db: AgentDb, id: string): string {
  const at = now();
  db.sql('UPDATE downloads SET state = ?, error = ?, error_recoverable = 0, canceled_at = ?, updated_at = ? WHERE id = ?').run('error', CANCELED, at, at, id);
  return at;
}

export function setPackageToken(db: AgentDb, id: string, token: string): void {
  db.sql('UPDATE downloads SET package_token = ? WHERE id = ?').run(token, id);
}

export function setItemLocalName(db: AgentDb, id: string, fileId: string, localName: string | null): void {
  db.sql('UPDATE download_items SET local_name = ? WHERE download_id = ? AND file_id = ?').run(localName, id, fileId);
}

export function setItemState(db: AgentDb, id: string, fileId: string, state: ItemState, error: string | null): void {
  db.sql('UPDATE download_items SET state = ?, error = ? WHERE download_id = ? AND file_id = ?').run(state, error, id, fileId);
}

/**
 * Called only after the range's bytes were written and flushed. `etag`: the
 * object's ETag the range was fetched under, kept with it (in the same commit)
 * for a resume's If-Match and MD5 check; an ETag no range was recorded under
 * is never needed.
 */
export function recordRange(db: AgentDb, id: string, fileId: string, idx: number, etag: string | null): void {
  db.sql('INSERT OR IGNORE INTO download_ranges (download_id, file_id, idx) VALUES (?, ?, ?)').run(id, fileId, idx);
  if (etag !== null) db.sql('UPDATE download_items SET etag = ? WHERE download_id = ? AND file_id = ? AND etag IS NOT ?').run(etag, id, fileId, etag);
}

/** Forgets an entry's ranges (its partial file is gone or failed its check), so they are fetched again. */
export function clearRanges(db: AgentDb, id: string, fileId: string): void {
  db.sql('DELETE FROM download_ranges WHERE download_id = ? AND file_id = ?').run(id, fileId);
}

/** Remembers a folder this download created, so `remove_files` can take it away again when empty. */
export function recordCreatedDir(db: AgentDb, id: string, dir: string): void {
  db.sql('INSERT OR IGNORE INTO download_dirs (download_id, path) VALUES (?, ?)').run(id, dir);
}

export function createdDirs(db: AgentDb, id: string): string[] {
  return (db.sql('SELECT path FROM download_dirs WHERE download_id = ?').all(id) as { path: string }[]).map((r) => r.path);
}

export function deleteDownload(db: AgentDb, id: string): void {
  db.sql('DELETE FROM downloads WHERE id = ?').run(id);
}
