// Upload progress as the embedded store sees it: every part stored into a
// Package file's multipart upload is reported (objectstore onPartStored), and
// turned into file.progress events, at most one per file per second, carrying
// the parts and bytes stored so far. A 10,000-part file thus writes a row a
// second at most, not a row a part. An external S3 store reports nothing.
import type { PartStored } from '../../objectstore/index.js';
import type { HostedContext } from '../context.js';
import { raiseEvent } from '../services/events.js';
import type { FileProgressPayload } from '../../api/hosted/events.js';

/** At most one progress event per file in this window. */
export const PROGRESS_INTERVAL_MS = 1000;

/** Object keys of Package files: packages/<package_id>/<file_id> (services/files.ts). */
const FILE_KEY = /^packages\/([^/]+)\/([^/]+)$/;

interface FileState {
  packageId: string;
  lastWrite: number;
  latest?: PartStored;
  timer?: NodeJS.Timeout;
}

export interface PartProgress {
  stored(p: PartStored): void;
  /** Drops what is pending; called before the database closes. */
  stop(): Promise<void>;
}

export function partProgress(ctx: HostedContext): PartProgress {
  const files = new Map<string, FileState>();
  let writing: Promise<unknown> = Promise.resolve();
  let stopped = false;

  const write = (fileId: string, s: FileState) => {
    const p = s.latest;
    s.latest = undefined;
    s.lastWrite = Date.now();
    if (!p) return;
    // One at a time: rows of one file go in in the order the parts were stored.
    writing = writing.then(() => record(ctx, s.packageId, fileId, p)).catch((err) => ctx.log.warn({ err, fileId }, 'upload progress event not written'));
  };

  const flush = (fileId: string) => {
    const s = files.get(fileId);
    if (!s) return;
    s.timer = undefined;
    if (stopped) return;
    write(fileId, s);
    // Nothing came within the window: forget the file (a map of every file ever uploaded would only grow).
    s.timer = setTimeout(() => {
      if (!s.latest) files.delete(fileId);
      else flush(fileId);
    }, PROGRESS_INTERVAL_MS);
    s.timer.unref();
  };

  return {
    stored(p) {
      if (stopped) return;
      const m = FILE_KEY.exec(p.key);
      if (!m || p.bucket !== ctx.storage.bucket) return;
      const fileId = m[2]!;
      let s = files.get(fileId);
      if (!s) {
        s = { packageId: m[1]!, lastWrite: 0 };
        files.set(fileId, s);
      }
      // Parts stored side by side finish out of order: keep the report that counts the most.
      if (!s.latest || s.latest.uploadId !== p.uploadId || p.parts >= s.latest.parts) s.latest = p;
      if (s.timer) return;
      const wait = s.lastWrite + PROGRESS_INTERVAL_MS - Date.now();
      if (wait <= 0) return flush(fileId);
      s.timer = setTimeout(() => flush(fileId), wait);
      s.timer.unref();
    },
    async stop() {
      stopped = true;
      for (const s of files.values()) clearTimeout(s.timer);
      files.clear();
      await writing;
    },
  };
}

/** The event, if the file is still a pending file of a live Package with that upload (a late report of a finished file says nothing new). */
async function record(ctx: HostedContext, packageId: string, fileId: string, p: PartStored): Promise<void> {
  await ctx.db.transaction().execute(async (trx) => {
    const row = await trx
      .selectFrom('files')
      .innerJoin('packages', 'packages.id', 'files.package_id')
      .select(['packages.id', 'packages.team_id', 'packages.portal_id'])
      .where('files.id', '=', fileId)
      .where('files.package_id', '=', packageId)
      .where('files.state', '=', 'pending')
      .where('packages.state', '=', 'new')
      .executeTakeFirst();
    if (!row) return;
    const payload: FileProgressPayload = { file_id: fileId, upload_id: p.uploadId, parts: p.parts, bytes: p.bytes };
    await raiseEvent(ctx, trx, 'file.progress', row, payload);
  });
}
