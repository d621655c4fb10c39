// A download as the REST API and the change feed show it.
import type { DownloadItemState, DownloadRecord } from '../../api/agent/downloads.js';
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

export function downloadRecord(row: DownloadRow, items: DownloadItem[], localPath: (item: DownloadItem) => string | null): DownloadRecord {
  let size = 0;
  let progress = 0;
  const out = items.map((item) => {
    const skipped = item.state === 'skipped';
    if (!skipped) {
      size += item.size;
      progress += item.progress;
    }
    return {
      file_id: item.fileId,
      path: item.relPath,
      size: item.size,
      progress: skipped ? 0 : item.progress,
      state: itemState(row.state, item),
      local_path: localPath(item),
      ...(item.error ? { error: item.error } : {}),
    };
  });
  return {
    download_id: row.id,
    package_id: row.package_id,
    package_name: row.package_name,
    dst_folder: row.dst_folder,
    size,
    progress,
    state: row.state,
    priority: row.priority,
    items: out,
    created_at: row.created_at,
    updated_at: row.updated_at,
    ...(row.error ? { error: row.error } : {}),
    ...(row.canceled_at ? { canceled_at: row.canceled_at } : {}),
  };
}
