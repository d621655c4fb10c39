// Where a walk puts the entries of an upload-to-be while it goes, before the
// upload exists: a TEMP table of this connection (a file SQLite keeps aside and
// drops at close), so a folder of a million files costs the walk a batch of
// entries in memory, not the whole tree, and nothing of it outlives the process.
// The upload takes its stage's rows in one statement (uploadStore.insertUpload).
import { randomBytes } from 'node:crypto';
import type Database from 'better-sqlite3';
import type { AgentDb } from './db.js';
import type { NewUploadFile } from './uploadStore.js';

/** Made at open, before any statement names it (they are compiled once and cached). */
export function createWalkStage(db: Database.Database): void {
  db.exec(`CREATE TEMP TABLE walk_entries (
    stage TEXT NOT NULL,
    idx INTEGER NOT NULL,
    kind TEXT NOT NULL,
    local_path TEXT NOT NULL,
    rel_dir TEXT NOT NULL,
    name TEXT NOT NULL,
    size INTEGER NOT NULL,
    mtime_ms REAL NOT NULL,
    PRIMARY KEY (stage, idx)
  );
  CREATE UNIQUE INDEX temp.walk_places ON walk_entries (stage, rel_dir, name);`);
}

export const newStage = () => `stage_${randomBytes(8).toString('hex')}`;

/**
 * Adds entries from `first` on. Answers the first entry whose place (folder and
 * name) is already staged, if any: two given paths would put two things there.
 */
export function stageEntries(db: AgentDb, stage: string, first: number, entries: NewUploadFile[]): NewUploadFile | undefined {
  const add = db.sql(
    'INSERT OR IGNORE INTO walk_entries (stage, idx, kind, local_path, rel_dir, name, size, mtime_ms) VALUES (?, ?, ?, ?, ?, ?, ?, ?)',
  );
  let clash: NewUploadFile | undefined;
  db.transaction(() => {
    for (const [i, e] of entries.entries()) {
      if (add.run(stage, first + i, e.kind, e.local_path, e.rel_dir, e.name, e.size, e.mtime_ms).changes === 0) {
        clash = e;
        return;
      }
    }
  })();
  return clash;
}

/** The staged files, one at a time in walk order (a Portal's restrictions look at each). */
export const stagedFiles = (db: AgentDb, stage: string) =>
  db.sql("SELECT local_path, name, size FROM walk_entries WHERE stage = ? AND kind = 'file' ORDER BY idx").iterate(stage) as IterableIterator<
    Pick<NewUploadFile, 'local_path' | 'name' | 'size'>
  >;

/** Copies the stage into the upload's files (in the caller's transaction). */
export function takeStage(db: AgentDb, stage: string, uploadId: string): void {
  db.sql(
    `INSERT INTO upload_files (upload_id, idx, kind, local_path, rel_dir, name, size, mtime_ms)
     SELECT ?, idx, kind, local_path, rel_dir, name, size, mtime_ms FROM walk_entries WHERE stage = ? ORDER BY idx`,
  ).run(uploadId, stage);
}

export const dropStage = (db: AgentDb, stage: string) => void db.sql('DELETE FROM walk_entries WHERE stage = ?').run(stage);
