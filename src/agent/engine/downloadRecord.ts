// A download as the REST API and the change feed show it.
import type { DownloadItemState, DownloadRecord, DownloadSummary } from '../../api/agent/downloads.js';
import type { DownloadFilesPage, IndexedDownloadItem } from '../../api/agent/transfers.js';
import type { DownloadRow } from '../store/downloadStore.js';
import type { DownloadItem } from './downloadItem.js';

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

function itemOf(row: DownloadRow, item: DownloadItem, index: number, localPath: (item: DownloadItem) => string | null): IndexedDownloadItem {
  return {
    index,
    file_id: item.fileId,
    path: item.relPath,
    size: item.size,
    progress: item.state === 'skipped' ? 0 : item.progress,
    state: itemState(row.state, item),
    local_path: localPath(item),
    ...(item.error ? { error: item.error } : {}),
  };
}

export function downloadSummary(row: DownloadRow, items: DownloadItem[]): DownloadSummary {
  let size = 0;
  let progress = 0;
  let done = 0;
  for (const item of items) {
    if (item.state === 'complete') done++;
    if (item.state === 'skipped') continue;
    size += item.size;
    progress += item.progress;
  }
  return {
    download_id: row.id,
    package_id: row.package_id,
    package_name: row.package_name,
    dst_folder: row.dst_folder,
    size,
    progress,
    state: row.state,
    priority: row.priority,
    file_count: items.length,
    files_done: done,
    created_at: row.created_at,
    updated_at: row.updated_at,
    ...(row.error ? { error: row.error } : {}),
    ...(row.canceled_at ? { canceled_at: row.canceled_at } : {}),
  };
}

export function downloadRecord(row: DownloadRow, items: DownloadItem[], localPath: (item: DownloadItem) => string | null): DownloadRecord {
  return { ...downloadSummary(row, items), items: items.map((item, i) => itemOf(row, item, i, localPath)).map(({ index: _, ...rest }) => rest) };
}

/** `limit` entries after the index `after` (-1: from the first). */
export function downloadFilesPage(row: DownloadRow, items: DownloadItem[], after: number, limit: number, localPath: (item: DownloadItem) => string | null): DownloadFilesPage {
  const from = Math.max(0, after + 1);
  const files = items.slice(from, from + limit).map((item, i) => itemOf(row, item, from + i, localPath));
  return { files, next: from + limit < items.length ? from + limit - 1 : null };
}

/** The entries at these indexes (for the feed's file changes). */
export function downloadFilesAt(row: DownloadRow, items: DownloadItem[], indexes: number[], localPath: (item: DownloadItem) => string | null): IndexedDownloadItem[] {
  return [...indexes].sort((a, b) => a - b).filter((i) => i < items.length).map((i) => itemOf(row, items[i]!, i, localPath));
}
