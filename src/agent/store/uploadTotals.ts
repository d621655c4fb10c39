// An upload's totals kept beside it (files, files done, bytes stored), so that
// its summary is one row read whatever its file count: counted, a million files
// took the summary (every progress event, every GET) hundreds of milliseconds.
// Triggers keep them as the engine writes its rows; the rows of files are only
// ever inserted with the upload, which counts them then (countTotals).
import type { AgentDb } from './db.js';
import type { Migration } from './migrations.js';

export const uploadTotalsMigration: Migration = {
  version: 10,
  name: 'upload_totals',
  sql: `CREATE TABLE upload_totals (
    upload_id TEXT PRIMARY KEY REFERENCES uploads(id) ON DELETE CASCADE,
    files INTEGER NOT NULL,
    files_done INTEGER NOT NULL,
    /** Sizes of the files done. */
    done_bytes INTEGER NOT NULL,
    /** Parts recorded of the files not done. */
    part_bytes INTEGER NOT NULL
  );
  INSERT INTO upload_totals (upload_id, files, files_done, done_bytes, part_bytes)
    SELECT u.id,
      (SELECT COUNT(*) FROM upload_files f WHERE f.upload_id = u.id),
      (SELECT COALESCE(SUM(done), 0) FROM upload_files f WHERE f.upload_id = u.id),
      (SELECT COALESCE(SUM(size), 0) FROM upload_files f WHERE f.upload_id = u.id AND f.done = 1),
      (SELECT COALESCE(SUM(p.size), 0) FROM upload_parts p JOIN upload_files f ON f.upload_id = p.upload_id AND f.idx = p.file_idx WHERE p.upload_id = u.id AND f.done = 0)
    FROM uploads u;
  CREATE TRIGGER upload_file_done AFTER UPDATE OF done ON upload_files WHEN NEW.done <> OLD.done BEGIN
    UPDATE upload_totals SET
      files_done = files_done + (CASE WHEN NEW.done THEN 1 ELSE -1 END),
      done_bytes = done_bytes + (CASE WHEN NEW.done THEN NEW.size ELSE -NEW.size END),
      part_bytes = part_bytes + (CASE WHEN NEW.done THEN -1 ELSE 1 END)
        * (SELECT COALESCE(SUM(size), 0) FROM upload_parts WHERE upload_id = NEW.upload_id AND file_idx = NEW.idx)
    WHERE upload_id = NEW.upload_id;
  END;
  CREATE TRIGGER upload_part_added AFTER INSERT ON upload_parts
    WHEN (SELECT done FROM upload_files WHERE upload_id = NEW.upload_id AND idx = NEW.file_idx) = 0 BEGIN
    UPDATE upload_totals SET part_bytes = part_bytes + NEW.size WHERE upload_id = NEW.upload_id;
  END;
  CREATE TRIGGER upload_part_resized AFTER UPDATE OF size ON upload_parts
    WHEN (SELECT done FROM upload_files WHERE upload_id = NEW.upload_id AND idx = NEW.file_idx) = 0 BEGIN
    UPDATE upload_totals SET part_bytes = part_bytes + NEW.size - OLD.size WHERE upload_id = NEW.upload_id;
  END;
  CREATE TRIGGER upload_part_removed AFTER DELETE ON upload_parts
    WHEN (SELECT done FROM upload_files WHERE upload_id = OLD.upload_id AND idx = OLD.file_idx) = 0 BEGIN
    UPDATE upload_totals SET part_bytes = part_bytes - OLD.size WHERE upload_id = OLD.upload_id;
  END;`,
};

export interface UploadTotals {
  files: number;
  files_done: number;
  /** Bytes stored: the files done whole, and the recorded parts of the others. */
  progress: number;
}

/** Counts the files of a new upload, in the transaction that inserted them. */
export function countTotals(db: AgentDb, id: string): void {
  db.sql(
    `INSERT INTO upload_totals (upload_id, files, files_done, done_bytes, part_bytes)
     SELECT ?, COUNT(*), COALESCE(SUM(done), 0), COALESCE(SUM(CASE WHEN done THEN size ELSE 0 END), 0), 0 FROM upload_files WHERE upload_id = ?`,
  ).run(id, id);
}

export function uploadTotals(db: AgentDb, id: string): UploadTotals {
  const row = db.sql('SELECT files, files_done, done_bytes + part_bytes AS progress FROM upload_totals WHERE upload_id = ?').get(id) as UploadTotals | undefined;
  return row ?? { files: 0, files_done: 0, progress: 0 };
}
