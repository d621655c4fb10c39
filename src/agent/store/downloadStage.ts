// Where a download-to-be keeps its Package's listing while the pages come in,
// before the download exists: a TEMP table of this connection (as walkStage.ts
// for uploads), so a Package of a million files costs a page of entries in
// memory, not the whole list. What only the whole list can say (a `file_ids`
// selection whose folder comes after its files, a flagged file that refuses the
// Package) is asked of the table once it is whole; the download takes its rows
// in one statement.
import type Database from 'better-sqlite3';
import type { AgentDb } from './db.js';

/** One entry of the listing as planned: where it goes (null: refused) and whether it is fetched. */
export interface StagedEntry {
  file_id: string;
  kind: 'file' | 'directory';
  rel_path: string;
  /** JSON of the local segments, null when refused. */
  segments: string | null;
  size: number;
  last_modified: string | null;
  flagged: 0 | 1;
  /** Why it is skipped (a refused path, malware), null when it is fetched. */
  problem: string | null;
}

/** Made at open, before any statement names it (they are compiled once and cached). */
export function createDownloadStage(db: Database.Database): void {
  db.exec(`CREATE TEMP TABLE download_listing (
    stage TEXT NOT NULL,
    seq INTEGER NOT NULL,
    file_id TEXT NOT NULL,
    kind TEXT NOT NULL,
    rel_path TEXT NOT NULL,
    segments TEXT,
    size INTEGER NOT NULL,
    last_modified TEXT,
    flagged INTEGER NOT NULL,
    problem TEXT,
    PRIMARY KEY (stage, seq)
  );
  CREATE INDEX temp.download_listing_ids ON download_listing (stage, file_id);`);
}

/** Adds a page of entries from `first` on, in listing order. */
export function stageListing(db: AgentDb, stage: string, first: number, entries: StagedEntry[]): void {
  const add = db.sql(
    `INSERT INTO download_listing (stage, seq, file_id, kind, rel_path, segments, size, last_modified, flagged, problem)
     VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
  );
  db.transaction(() => {
    for (const [i, e] of entries.entries()) add.run(stage, first + i, e.file_id, e.kind, e.rel_path, e.segments, e.size, e.last_modified, e.flagged, e.problem);
  })();
}

/** The staged entries among these ids: what a `file_ids` selection names. */
export const stagedByIds = (db: AgentDb, stage: string, ids: string[]) =>
  db
    .sql('SELECT file_id, kind, rel_path FROM download_listing WHERE stage = ? AND file_id IN (SELECT value FROM json_each(?))')
    .all(stage, JSON.stringify(ids)) as Pick<StagedEntry, 'file_id' | 'kind' | 'rel_path'>[];

/** Keeps only the entries named, and those beneath the named folders (`prefixes` end with "/"). */
export function keepSelected(db: AgentDb, stage: string, ids: string[], prefixes: string[]): void {
  db.sql(
    `DELETE FROM download_listing WHERE stage = ? AND file_id NOT IN (SELECT value FROM json_each(?))
       AND NOT EXISTS (SELECT 1 FROM json_each(?) p WHERE substr(rel_path, 1, length(p.value)) = p.value)`,
  ).run(stage, JSON.stringify(ids), JSON.stringify(prefixes));
}

export const flaggedFiles = (db: AgentDb, stage: string) =>
  (db.sql("SELECT count(*) AS n FROM download_listing WHERE stage = ? AND kind = 'file' AND flagged = 1").get(stage) as { n: number }).n;

/** Up to `limit` folders after `afterSeq` with a place of their own (JSON segments): made before the transfer. */
export const stagedDirs = (db: AgentDb, stage: string, afterSeq: number, limit: number) =>
  db
    .sql("SELECT seq, segments FROM download_listing WHERE stage = ? AND kind = 'directory' AND segments IS NOT NULL AND seq > ? ORDER BY seq LIMIT ?")
    .all(stage, afterSeq, limit) as { seq: number; segments: string }[];

/** Copies the staged files into the download's entries, numbered from 0 in listing order (in the caller's transaction). */
export function takeListing(db: AgentDb, stage: string, downloadId: string): void {
  db.sql(
    `INSERT INTO download_items (download_id, file_id, seq, rel_path, segments, size, last_modified, local_name, etag, state, error)
     SELECT ?, file_id, ROW_NUMBER() OVER (ORDER BY seq) - 1, rel_path, segments, size, last_modified, NULL, NULL,
       CASE WHEN problem IS NULL THEN 'pending' ELSE 'skipped' END, problem
     FROM download_listing WHERE stage = ? AND kind = 'file' ORDER BY seq`,
  ).run(downloadId, stage);
}

export const dropListing = (db: AgentDb, stage: string) => void db.sql('DELETE FROM download_listing WHERE stage = ?').run(stage);
