// An upload as the agent answers it (its stored record or summary, plus what
// only the running agent knows: its wait, its place in line) and the feed that
// sends its changes to the event stream. Apart from uploads.ts, which changes
// uploads; this only shows them.
import type { AgentContext } from '../context.js';
import type { UploadSummary } from '../../api/agent/uploads.js';
import type { Waiting } from '../../api/agent/waiting.js';
import { TransferFeed } from '../engine/feed.js';
import { QueueFeed } from '../engine/queueFeed.js';
import { publishChange } from './transferChanges.js';
import { uploadFilePages, uploadFilesAt, uploadRecord, uploadSummary } from '../store/uploadView.js';
import { FILES_PAGE_MAX, type IndexedUploadItem, type StreamedRecord } from '../../api/agent/transfers.js';

/** `waitingOf`: what the upload's run (or its Package finalize) waits for, if anything. */
export function createUploadFeed(ctx: AgentContext, waitingOf: (r: UploadSummary) => Waiting | undefined) {
  const { db } = ctx;

  /** What a summary or record adds to the stored upload: `waiting` while its run (or its Package finalize) waits for the service or the store, `queue_position` while it waits for its turn. */
  function live<R extends UploadSummary>(r: R): R {
    const waiting = waitingOf(r);
    const place = r.state === 'transferring' ? ctx.scheduler.queuePlace(r.upload_id) : undefined;
    return { ...r, ...(waiting ? { waiting } : {}), ...(place !== undefined ? { queue_position: place } : {}) };
  }
  /** The spec's record: its summary, its files read as they are sent. */
  const recordOf = (id: string): StreamedRecord | undefined => {
    const r = uploadRecord(db, id);
    return r && { summary: live(r.summary), items: r.items };
  };
  const summaryOf = (id: string): UploadSummary | undefined => {
    const r = uploadSummary(db, id);
    return r && live(r);
  };

  const feed = new TransferFeed<UploadSummary, IndexedUploadItem>({
    summary: summaryOf,
    totals: true,
    *files(id, indexes) {
      if (indexes !== 'all') return yield uploadFilesAt(db, id, indexes);
      for (const page of uploadFilePages(db, id, FILES_PAGE_MAX)) yield page.filter((f) => f.state !== 'complete');
    },
    followsFiles: (id) => ctx.events.followsFiles(id),
    send: (id, c) => publishChange(ctx.events, 'upload', id, c),
  });
  const changed = (id: string, kind: 'state' | 'progress', file?: number) => feed.changed(id, kind, file);
  const queue = new QueueFeed(ctx.scheduler, 'upload', (id) => changed(id, 'state'));

  return { recordOf, summaryOf, feed, changed, queue };
}
