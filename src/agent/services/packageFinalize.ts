// The Package finalize of uploads: one at a time per upload, waiting out the
// service like a run does, and the auto-finalize of an upload that went idle.
// Apart from uploads.ts because it outlives the upload's run (an idle upload has
// none) and has its own waiting state, shown on the upload while it lasts.
import type { Logger } from 'pino';
import type { HostedHttp } from '../../client/http.js';
import type { AgentDb } from '../store/db.js';
import { getUpload, setUploadState, type UploadRow } from '../store/uploadStore.js';
import { notFound } from '../errors.js';
import { isRecoverable, type EngineTuning } from '../engine/retry.js';
import type { Target } from '../engine/outages.js';
import { Trouble } from '../engine/trouble.js';
import { finalizeOnService } from '../engine/uploadFinalize.js';
import { uploadErrorMessage } from '../engine/uploadJob.js';

export interface PackageFinalizeDeps {
  db: AgentDb;
  hosted: HostedHttp;
  service: Target;
  tuning: EngineTuning;
  log: Logger;
  /** Aborted when the agent closes: finalizes under way stop, and are done at the next start. */
  closing: AbortSignal;
  changed(id: string, kind: 'state' | 'progress'): void;
  /** A failed auto-finalize is no error of the upload's: the agent closes, or the upload is being canceled. */
  failureIgnored(id: string): boolean;
}

export function createPackageFinalize(d: PackageFinalizeDeps) {
  const { db, closing, changed } = d;
  const finalizing = new Map<string, { done: Promise<void>; trouble: Trouble; stop: AbortController }>();

  function mustGet(id: string): UploadRow {
    const u = getUpload(db, id);
    if (!u) throw notFound(`upload ${id}`);
    return u;
  }

  /** Package finalize (and expiry); one at a time per upload. */
  function finalizeNow(id: string): Promise<void> {
    const running = finalizing.get(id);
    if (running) return running.done;
    const stop = new AbortController();
    const onClose = () => stop.abort(closing.reason);
    if (closing.aborted) onClose();
    closing.addEventListener('abort', onClose, { once: true });
    const trouble = new Trouble(d.tuning.retry.retryForMs, { changed: () => changed(id, 'progress'), gaveUp: (err) => stop.abort(err) });
    const done = (async () => {
      // Every file marked done is on disk before the service closes the package to changes.
      await db.synced();
      await finalizeOnService(d.hosted, mustGet(id), d.service, { policy: d.tuning.retry, trouble, signal: stop.signal });
      if (getUpload(db, id)?.state !== 'idle') return; // deleted or canceled meanwhile
      setUploadState(db, id, 'complete');
      changed(id, 'state');
    })().finally(() => {
      trouble.clear();
      closing.removeEventListener('abort', onClose);
      finalizing.delete(id);
    });
    finalizing.set(id, { done, trouble, stop });
    return done;
  }

  function autoFinalize(id: string): void {
    finalizeNow(id).catch((err) => {
      if (d.failureIgnored(id) || getUpload(db, id)?.state !== 'idle') return; // finalized at the next start, or deleted or canceled
      d.log.warn({ err, upload: id }, 'finalizing the package failed');
      setUploadState(db, id, 'error', { message: uploadErrorMessage(err), recoverable: isRecoverable(err) });
      changed(id, 'state');
    });
  }

  return {
    now: finalizeNow,
    auto: autoFinalize,
    /** The finalize under way for the upload, if any. */
    get: (id: string) => finalizing.get(id),
    /** Resolves once every finalize under way has settled. */
    settled: () => Promise.allSettled([...finalizing.values()].map((f) => f.done)),
  };
}
