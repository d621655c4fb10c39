// The feed's changes (engine/feed.ts) as the event stream carries them, the
// wire's UploadChange and DownloadChange (src/api/agent/transfers.ts), published
// on the agent's event bus: file changes to those who follow them only.
import type { DownloadSummary } from '../../api/agent/downloads.js';
import type { Direction, IndexedDownloadItem, IndexedUploadItem } from '../../api/agent/transfers.js';
import type { UploadSummary } from '../../api/agent/uploads.js';
import type { FeedChange } from '../engine/feed.js';
import type { EventBus } from '../events.js';

const ID_FIELD = { upload: 'upload_id', download: 'download_id' } as const;

export function publishChange(
  events: EventBus,
  direction: Direction,
  id: string,
  c: FeedChange<UploadSummary | DownloadSummary, IndexedUploadItem | IndexedDownloadItem>,
): void {
  const about = { [ID_FIELD[direction]]: id };
  const data =
    c.change === 'record' ? { change: 'record', [direction]: c.summary }
    : c.change === 'progress' ? { change: 'progress', ...about, ...c.totals }
    : c.change === 'files' ? { change: 'files', ...about, files: c.files }
    : { change: 'removed', ...about };
  // Built from the direction's own field names, so it is that direction's change.
  if (c.change === 'files') events.publishFiles(direction, id, data as never);
  else events.publish(direction, data as never);
}
