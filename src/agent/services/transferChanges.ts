// The feed's changes (engine/feed.ts) as the event stream carries them: the
// wire's UploadChange and DownloadChange (src/api/agent/transfers.ts).
import type { DownloadSummary } from '../../api/agent/downloads.js';
import type { DownloadChange, IndexedDownloadItem, IndexedUploadItem, UploadChange } from '../../api/agent/transfers.js';
import type { UploadSummary } from '../../api/agent/uploads.js';
import type { FeedChange } from '../engine/feed.js';

export function uploadChange(upload_id: string, c: FeedChange<UploadSummary, IndexedUploadItem>): UploadChange {
  switch (c.change) {
    case 'record':
      return { change: 'record', upload: c.summary };
    case 'progress':
      return { change: 'progress', upload_id, ...c.totals };
    case 'files':
      return { change: 'files', upload_id, files: c.files };
    case 'removed':
      return { change: 'removed', upload_id };
  }
}

export function downloadChange(download_id: string, c: FeedChange<DownloadSummary, IndexedDownloadItem>): DownloadChange {
  switch (c.change) {
    case 'record':
      return { change: 'record', download: c.summary };
    case 'progress':
      return { change: 'progress', download_id, ...c.totals };
    case 'files':
      return { change: 'files', download_id, files: c.files };
    case 'removed':
      return { change: 'removed', download_id };
  }
}
