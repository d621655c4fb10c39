// Uploads as SQLite keeps them: the upload, its files (what was walked, and how
// far registration got) and every part the store confirmed. A part row is
// written before the part counts in progress, so a restart re-sends only parts
// that have no row.
import type { AgentDb } from './db.js';
import type { Migration } from './migrations.js';
import { CANCELED } from './canceledTransfers.js';
import { dropStage, takeStage } from './walkStage.js';
import { countTotals } from './uploadTotals.js';
import type { UploadState } from '../../api/agent/uploads.js';

export const uploadsMigration: Migration = {
  version: 2,
  name: 'uploads',
  sql: `CREATE TABLE uploads (
    id TEXT PRIMARY KEY,
    type TEXT NOT NULL CHECK (type IN ('team','portal')),
    state TEXT NOT NULL CHECK (state IN ('transferring','paused','idle','complete','error')),
    package_id TEXT NOT NULL,
    package_token TEXT NOT NULL,
    name TEXT NOT NULL,
    package_name TEXT NOT NULL,
    priority INTEGER NOT NULL DEFAULT 0,
    chunk_size INTEGER NOT NULL,
    auto_finalize INTEGER NOT NULL,
    delete_after INTEGER,
    size INTEGER NOT NULL,
    error TEXT,
    error_recoverable INTEGER NOT NULL DEFAULT 1,
    created_at TEXT NOT NULL,
    updated_at TEXT NOT NULL
  );
  CREATE TABLE upload_files (
    upload_id TEXT NOT NULL REFERENCES uploads(id) ON DELETE CASCADE,
    idx INTEGER NOT NULL,
    kind TEXT NOT NULL CHECK (kind IN ('file','directory')),
    local_path TEXT NOT NULL,
    rel_dir TEXT NOT NULL,
    name TEXT NOT NULL,
    size INTEGER NOT NULL,
    mtime_ms REAL NOT NULL,
    file_id TEXT,
    s3_upload_id TEXT,
    chunk_size INTEGER,
    part_count INTEGER,
    done INTEGER NOT NULL DEFAULT 0,
    PRIMARY KEY (upload_id, idx)
  );
  CREATE TABLE upload_parts (
    upload_id TEXT NOT NULL,
    file_idx INTEGER NOT NULL,
    part_number INTEGER NOT NULL,
    etag TEXT NOT NULL,
    size INTEGER NOT NULL,
    PRIMARY KEY (upload_id, file_idx, part_number),
    FOREIGN KEY (upload_id, file_idx) REFERENCES upload_files(upload_id, idx) ON DELETE CASCADE
  );`,
};

/** An e-mailed upload keeps its recipients, so that Transfers shows and finds them (the service has them too, but the list reads the agent's records only). */
export const uploadRecipientsMigration: Migration = {
  version: 9,
  name: 'upload_recipients',
  /** A JSON array of addresses; null for a link-type or Portal upload. */
  sql: 'ALTER TABLE uploads ADD COLUMN recipients TEXT;',
};

export interface UploadRow {
  id: string;
  type: 'team' | 'portal';
  state: UploadState;
  package_id: string;
  package_token: string;
  name: string;
  package_name: string;
  priority: number;
  chunk_size: number;
  auto_finalize: number;
  delete_after: number | null;
  size: number;
  /** An e-mailed upload's recipients as a JSON array; null otherwise (and in rows made before the column). */
  recipients?: string | null;
  error: string | null;
  error_recoverable: number;
  /** Set once canceled (then state error, error "Canceled"). */
  canceled_at: string | null;
  created_at: string;
  updated_at: string;
}

export interface UploadFileRow {
  upload_id: string;
  idx: number;
  kind: 'file' | 'directory';
  local_path: string;
  rel_dir: string;
  name: string;
  size: number;
  mtime_ms: number;
  file_id: string | null;
  s3_upload_id: string | null;
  chunk_size: number | null;
  part_count: number | null;
  done: number;
  /** A file still being written when the upload was made: the quiet time that ends it (growingFiles.ts); null (or absent) otherwise. */
  growing_quiet_ms?: number | null;
}

export interface PartRow { part_number: number; etag: string; size: number }

export type NewUpload = Omit<UploadRow, 'error' | 'error_recoverable' | 'canceled_at' | 'created_at' | 'updated_at'>;
export type NewUploadFile = Pick<UploadFileRow, 'kind' | 'local_path' | 'rel_dir' | 'name' | 'size' | 'mtime_ms'>;

const now = () => new Date().toISOString();

function insertUploadRow(db: AgentDb, u: NewUpload): void {
  const at = now();
  db.sql(
    `INSERT INTO uploads (id, type, state, package_id, package_token, name, package_name, priority, chunk_size, auto_finalize, delete_after, size, recipients, created_at, updated_at)
     VALUES (@id, @type, @state, @package_id, @package_token, @name, @package_name, @priority, @chunk_size, @auto_finalize, @delete_after, @size, @recipients, @at, @at)`,
  ).run({ ...u, recipients: u.recipients ?? null, at });
}

/** An upload and its files, given in memory (tests and benchmarks seed with it). */
export function insertUpload(db: AgentDb, u: NewUpload, files: NewUploadFile[]): void {
  const addFile = db.sql(
    `INSERT INTO upload_files (upload_id, idx, kind, local_path, rel_dir, name, size, mtime_ms) VALUES (?, ?, ?, ?, ?, ?, ?, ?)`,
  );
  db.transaction(() => {
    insertUploadRow(db, u);
    files.forEach((f, i) => addFile.run(u.id, i, f.kind, f.local_path, f.rel_dir, f.name, f.size, f.mtime_ms));
    countTotals(db, u.id);
  })();
}

/** An upload whose files are a walk's stage (walkStage.ts): they move in one statement, and the stage is gone. */
export function insertStagedUpload(db: AgentDb, u: NewUpload, stage: string): void {
  db.transaction(() => {
    insertUploadRow(db, u);
    takeStage(db, stage, u.id);
    dropStage(db, stage);
    countTotals(db, u.id);
  })();
}

export const getUpload = (db: AgentDb, id: string) => db.sql('SELECT * FROM uploads WHERE id = ?').get(id) as UploadRow | undefined;

export const listUploads = (db: AgentDb) => db.sql('SELECT * FROM uploads ORDER BY created_at, id').all() as UploadRow[];

export const uploadsInState = (db: AgentDb, states: UploadState[]) =>
  listUploads(db).filter((u) => states.includes(u.state));

export function setUploadState(db: AgentDb, id: string, state: UploadState, error?: { message: string; recoverable: boolean }): void {
  db.sql('UPDATE uploads SET state = ?, error = ?, error_recoverable = ?, updated_at = ? WHERE id = ?').run(
    state,
    error?.message ?? null,
    error && !error.recoverable ? 0 : 1,
    now(),
    id,
  );
}

/** Canceled: in error for good (never resumed), with the time. */
export function setUploadCanceled(db: AgentDb, id: string): void {
  const at = now();
  db.sql('UPDATE uploads SET state = ?, error = ?, error_recoverable = 0, canceled_at = ?, updated_at = ? WHERE id = ?').run('error', CANCELED, at, at, id);
}

export const deleteUpload = (db: AgentDb, id: string) => void db.sql('DELETE FROM uploads WHERE id = ?').run(id);

/**
 * The next files not done, after index `after`, in order: a run reads what is
 * left a window at a time (pendingFiles.ts) rather than every file at once.
 */
export const filesLeftAfter = (db: AgentDb, id: string, after: number, limit: number) =>
  db.sql('SELECT * FROM upload_files WHERE upload_id = ? AND done = 0 AND idx > ? ORDER BY idx LIMIT ?').all(id, after, limit) as UploadFileRow[];

/** The recorded parts of the files not done from index `from` to `to`. */
export const partsOfFilesLeft = (db: AgentDb, id: string, from: number, to: number) =>
  db
    .sql(
      `SELECT p.file_idx, p.part_number, p.etag, p.size FROM upload_parts p
       JOIN upload_files f ON f.upload_id = p.upload_id AND f.idx = p.file_idx
       WHERE p.upload_id = ? AND p.file_idx BETWEEN ? AND ? AND f.done = 0 ORDER BY p.file_idx, p.part_number`,
    )
    .all(id, from, to) as (PartRow & { file_idx: number })[];

/** Whether anything of the upload reached the store: a part recorded, or a file (even an empty one) finalized. */
export const uploadBegun = (db: AgentDb, id: string) =>
  (db.sql(`SELECT EXISTS (SELECT 1 FROM upload_parts WHERE upload_id = ?) OR EXISTS (SELECT 1 FROM upload_files WHERE upload_id = ? AND done = 1 AND kind = 'file') AS begun`).get(id, id) as { begun: number }).begun === 1;

/** The file's place on the service: after registration and after its multipart upload began. */
export function setFileRegistration(
  db: AgentDb,
  id: string,
  idx: number,
  r: { file_id: string | null; s3_upload_id: string | null; chunk_size: number | null; part_count: number | null },
): void {
  const stmt = db.sql('UPDATE upload_files SET file_id = ?, s3_upload_id = ?, chunk_size = ?, part_count = ? WHERE upload_id = ? AND idx = ?');
  db.soon(() => stmt.run(r.file_id, r.s3_upload_id, r.chunk_size, r.part_count, id, idx));
}

/** Starts a file over: forgets its registration and every recorded part. */
export function resetFile(db: AgentDb, id: string, idx: number): void {
  db.transaction(() => {
    db.sql('DELETE FROM upload_parts WHERE upload_id = ? AND file_idx = ?').run(id, idx);
    setFileRegistration(db, id, idx, { file_id: null, s3_upload_id: null, chunk_size: null, part_count: null });
  })();
}

export function recordPart(db: AgentDb, id: string, idx: number, p: PartRow): void {
  // An upsert, not OR REPLACE: a replaced row fires no delete trigger, and the kept totals (uploadTotals.ts) would count it twice.
  const stmt = db.sql(
    `INSERT INTO upload_parts (upload_id, file_idx, part_number, etag, size) VALUES (?, ?, ?, ?, ?)
     ON CONFLICT (upload_id, file_idx, part_number) DO UPDATE SET etag = excluded.etag, size = excluded.size`,
  );
  db.soon(() => stmt.run(id, idx, p.part_number, p.etag, p.size));
}

export function markFileDone(db: AgentDb, id: string, idx: number): void {
  const stmt = db.sql('UPDATE upload_files SET done = 1 WHERE upload_id = ? AND idx = ?');
  db.soon(() => stmt.run(id, idx));
}
