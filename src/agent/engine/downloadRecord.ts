// A download as the REST API and the change feed show it. Its entries live in
// SQLite (download_items by seq); the job holds only those under way, whose
// progress moves, so each entry read is its row unless the job holds it.
import type { DownloadItemState, DownloadSummary } from '../../api/agent/downloads.js';
import type { DownloadFilesPage, IndexedDownloadItem } from '../../api/agent/transfers.js';
import type { AgentDb } from '../store/db.js';
import * as store from '../store/downloadStore.js';
import type { DownloadRow, ItemRow } from '../store/downloadStore.js';
import { DownloadItem } from './downloadItem.js';

/** What reads of a download need from its job. */
export interface DownloadView {
  db: AgentDb;
  row: DownloadRow;
  /** The entry the job holds at this place of the list, if it holds it. */
  held(seq: number): DownloadItem | undefined;
  localPath(item: DownloadItem): string | null;
}

/** The moving totals of a download (downloadJob.ts keeps them). */
export interface DownloadTotals {
  files: number;
  size: number;
  complete: number;
  progress: number;
}

/**
 * Entry states beyond the stored ones: a pending entry is `queued` until its
 * first byte, then `transferring`, or `paused` while its download is stopped.
 */
function itemState(download: DownloadRow['state'], item: DownloadItem): DownloadItemState {
  if (item.state !== 'pending') return item.state;
  const started = item.bytesDone > 0 || item.inFlight.size > 0 || item.finalizing;
  if (!started) return 'queued';
  return download === 'transferring' ? 'transferring' : 'paused';
}

function itemOf(v: DownloadView, item: DownloadItem): IndexedDownloadItem {
  return {
    index: item.index,
    file_id: item.fileId,
    path: item.relPath,
    size: item.size,
    progress: item.state === 'skipped' ? 0 : item.progress,
    state: itemState(v.row.state, item),
    local_path: v.localPath(item),
    ...(item.error ? { error: item.error } : {}),
  };
}

/** The download's rows in their order, `size` at a time (`open`: only those not complete). */
function* rowPages(v: DownloadView, size: number, open = false): Generator<ItemRow[]> {
  for (let after = -1; ; ) {
    const rows = store.itemsAfter(v.db, v.row.id, after, size, open);
    if (rows.length > 0) yield rows;
    if (rows.length < size) return;
    after = rows[rows.length - 1]!.seq;
  }
}

/** Every entry (held, or as its row says; no ranges), a batch at a time: the caller may wait between batches. */
export function* downloadEntryBatches(v: DownloadView, batch = 1000): Generator<DownloadItem[]> {
  for (const rows of rowPages(v, batch)) yield rows.map((r) => v.held(r.seq) ?? new DownloadItem(r, v.row.chunk_size, []));
}

/** Rows as entries: the job's own where it holds them, else made from the row and its recorded ranges. */
function entriesOf(v: DownloadView, rows: ItemRow[]): IndexedDownloadItem[] {
  const loose = rows.filter((r) => !v.held(r.seq) && r.state !== 'complete' && r.state !== 'skipped');
  const ranges = store.rangesOf(v.db, v.row.id, loose.map((r) => r.file_id));
  return rows.map((r) => itemOf(v, v.held(r.seq) ?? new DownloadItem(r, v.row.chunk_size, ranges.get(r.file_id) ?? [])));
}

export function downloadSummary(row: DownloadRow, t: DownloadTotals): DownloadSummary {
  return {
    download_id: row.id,
    package_id: row.package_id,
    package_name: row.package_name,
    dst_folder: row.dst_folder,
    size: t.size,
    progress: t.progress,
    state: row.state,
    priority: row.priority,
    file_count: t.files,
    files_done: t.complete,
    created_at: row.created_at,
    updated_at: row.updated_at,
    ...(row.error ? { error: row.error } : {}),
    ...(row.canceled_at ? { canceled_at: row.canceled_at } : {}),
  };
}

/** Every entry, a page at a time, read as they are taken (the spec's record: server/recordText.ts). */
export function* downloadFilePages(v: DownloadView, pageSize: number): Generator<IndexedDownloadItem[]> {
  for (const rows of rowPages(v, pageSize)) yield entriesOf(v, rows);
}

/** `limit` entries after the index `after` (-1: from the first). */
export function downloadFilesPage(v: DownloadView, files: number, after: number, limit: number): DownloadFilesPage {
  const from = Math.max(0, after + 1);
  const entries = entriesOf(v, store.itemsAfter(v.db, v.row.id, from - 1, limit));
  return { files: entries, next: from + limit < files ? from + limit - 1 : null };
}

/** The entries at these indexes (for the feed's file changes). */
export function downloadFilesAt(v: DownloadView, indexes: number[]): IndexedDownloadItem[] {
  return entriesOf(v, store.itemsAt(v.db, v.row.id, indexes));
}

/** Every entry not complete, a page at a time (the feed, when the download's state changed). */
export function* downloadOpenFiles(v: DownloadView, pageSize: number): Iterable<IndexedDownloadItem[]> {
  for (const rows of rowPages(v, pageSize, true)) yield entriesOf(v, rows);
}
