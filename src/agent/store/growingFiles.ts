// Files of an upload still being written when it was made (a watch folder's
// `growing_files`): their row keeps the quiet time after which a still file is
// complete, until the engine fixes its final size (growingFile.ts). Their part
// count stays null meanwhile: the service registered them without a size.
import type { AgentDb } from './db.js';
import type { Migration } from './migrations.js';

export const growingFilesMigration: Migration = {
  version: 13,
  name: 'growing_files',
  /** Milliseconds a growing file's size must hold still before it is finalized; null for every other file. */
  sql: 'ALTER TABLE upload_files ADD COLUMN growing_quiet_ms INTEGER;',
};

/** Marks the files at these local paths of a new upload as growing, before its run starts. */
export function markGrowing(db: AgentDb, uploadId: string, localPaths: Iterable<string>, quietMs: number): void {
  const stmt = db.sql("UPDATE upload_files SET growing_quiet_ms = ? WHERE upload_id = ? AND local_path = ? AND kind = 'file'");
  db.transaction(() => {
    for (const p of localPaths) stmt.run(quietMs, uploadId, p);
  })();
}

/** The file grew (or shrank) to `size` so far: the upload's size follows, so its progress reads true while it grows. */
export function growTo(db: AgentDb, uploadId: string, idx: number, size: number): void {
  db.transaction(() => {
    const old = db.sql('SELECT size FROM upload_files WHERE upload_id = ? AND idx = ?').get(uploadId, idx) as { size: number } | undefined;
    if (!old || old.size === size) return;
    db.sql('UPDATE upload_files SET size = ? WHERE upload_id = ? AND idx = ?').run(size, uploadId, idx);
    db.sql('UPDATE uploads SET size = size + ? WHERE id = ?').run(size - old.size, uploadId);
  })();
}

/**
 * The file stopped growing: its final size, time and part count, and the
 * upload's total moves by what it grew since the walk. Parts recorded beyond
 * the final count (none unless the file shrank and was not restarted) go.
 */
export function fixGrowingFile(db: AgentDb, uploadId: string, idx: number, f: { size: number; mtime_ms: number; part_count: number }): void {
  db.transaction(() => {
    const old = db.sql('SELECT size FROM upload_files WHERE upload_id = ? AND idx = ?').get(uploadId, idx) as { size: number } | undefined;
    if (!old) return;
    db.sql('DELETE FROM upload_parts WHERE upload_id = ? AND file_idx = ? AND part_number > ?').run(uploadId, idx, f.part_count);
    db.sql('UPDATE upload_files SET size = ?, mtime_ms = ?, part_count = ?, growing_quiet_ms = NULL WHERE upload_id = ? AND idx = ?').run(
      f.size, f.mtime_ms, f.part_count, uploadId, idx,
    );
    db.sql('UPDATE uploads SET size = size + ? WHERE id = ?').run(f.size - old.size, uploadId);
  })();
}

/** A part recorded while the file grew no longer holds what the file now holds there: it is sent again. */
export const forgetPart = (db: AgentDb, uploadId: string, idx: number, part: number) =>
  void db.sql('DELETE FROM upload_parts WHERE upload_id = ? AND file_idx = ? AND part_number = ?').run(uploadId, idx, part);
