// An upload as the REST API and the event feed show it, read from SQLite: the
// summary is two rows whatever the file count (its totals are kept:
// uploadTotals.ts); the files are read a page at a time, for the spec's record too.
import type { AgentDb } from './db.js';
import { getUpload, type UploadRow } from './uploadStore.js';
import { uploadTotals } from './uploadTotals.js';
import type { UploadItemState, UploadSummary } from '../../api/agent/uploads.js';
import { RECORD_PAGE, type IndexedUploadItem, type UploadFilesPage } from '../../api/agent/transfers.js';

function itemState(u: UploadRow, done: number, registered: boolean, progress: number): UploadItemState {
  if (done) return 'complete';
  if (u.state === 'paused' || u.state === 'error') return u.state;
  return registered || progress > 0 ? 'transferring' : 'queued';
}

/** What an item shows, as rows of values (a million of them must stay cheap). */
type ItemRow = [idx: number, localPath: string, relDir: string, name: string, size: number, done: number, fileId: string | null, bytes: number | null];

const ITEMS = `SELECT f.idx, f.local_path, f.rel_dir, f.name, f.size, f.done, f.file_id,
    (SELECT SUM(p.size) FROM upload_parts p WHERE p.upload_id = f.upload_id AND p.file_idx = f.idx AND f.done = 0)
  FROM upload_files f WHERE f.upload_id = ?`;

function items(u: UploadRow, rows: ItemRow[]): IndexedUploadItem[] {
  return rows.map(([idx, localPath, relDir, name, size, done, fileId, bytes]) => {
    const progress = done ? size : (bytes ?? 0);
    return { index: idx, path: relDir ? `${relDir}/${name}` : name, local_path: localPath, size, progress, state: itemState(u, done, fileId !== null, progress) };
  });
}

export function uploadSummary(db: AgentDb, id: string): UploadSummary | undefined {
  const u = getUpload(db, id);
  return u && summaryOf(db, u);
}

function summaryOf(db: AgentDb, u: UploadRow): UploadSummary {
  const totals = uploadTotals(db, u.id);
  return {
    upload_id: u.id,
    package_id: u.package_id,
    name: u.name,
    package_name: u.package_name,
    progress: totals.progress,
    size: u.size,
    state: u.state,
    type: u.type,
    file_count: totals.files,
    files_done: totals.files_done,
    ...(u.recipients ? { recipients: JSON.parse(u.recipients) as string[] } : {}),
    created_at: u.created_at,
    updated_at: u.updated_at,
    ...(u.error ? { error: u.error } : {}),
    ...(u.canceled_at ? { canceled_at: u.canceled_at } : {}),
  };
}

/** The spec's record: the summary now, and every file read a page at a time as it is taken (server/recordText.ts). */
export function uploadRecord(db: AgentDb, id: string): { summary: UploadSummary; items: Iterable<IndexedUploadItem[]> } | undefined {
  const u = getUpload(db, id);
  return u && { summary: summaryOf(db, u), items: uploadFilePages(db, id, RECORD_PAGE) };
}

/** Every file, `size` at a time, each page read when it is reached. */
export function* uploadFilePages(db: AgentDb, id: string, size: number): Generator<IndexedUploadItem[]> {
  for (let after = -1, page; (page = uploadFilesPage(db, id, after, size)); after = page.next) {
    yield page.files;
    if (page.next === null) return;
  }
}

/** `limit` files after the index `after` (-1 or absent: from the first). */
export function uploadFilesPage(db: AgentDb, id: string, after: number, limit: number): UploadFilesPage | undefined {
  const u = getUpload(db, id);
  if (!u) return undefined;
  const rows = db.sql(`${ITEMS} AND f.idx > ? ORDER BY f.idx LIMIT ?`).raw(true).all(id, after, limit + 1) as ItemRow[];
  const more = rows.length > limit;
  const files = items(u, more ? rows.slice(0, limit) : rows);
  return { files, next: more ? files[files.length - 1]!.index : null };
}

/** The files at these indexes, as a page shows them (for the feed's file changes). */
export function uploadFilesAt(db: AgentDb, id: string, indexes: number[]): IndexedUploadItem[] {
  const u = getUpload(db, id);
  if (!u || indexes.length === 0) return [];
  const rows = db.sql(`${ITEMS} AND f.idx IN (SELECT value FROM json_each(?)) ORDER BY f.idx`).raw(true).all(id, JSON.stringify(indexes)) as ItemRow[];
  return items(u, rows);
}
