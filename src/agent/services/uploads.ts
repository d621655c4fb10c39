// Uploads: start one (uploadCreate.ts makes it), list, pause, resume, delete,
// finalize (packageFinalize.ts), link (uploadLinks.ts); what they answer and
// the feed of their changes: uploadFeed.ts. Runs that were
// transferring when the agent stopped continue at resumeAll().
import type { AgentContext } from '../context.js';
import type { SessionService } from './session.js';
import { fromHosted } from './session.js';
import { conflict, notFound } from '../errors.js';
import type { UploadState, UploadSummary } from '../../api/agent/uploads.js';
import { completeTeamUpload, createUploadLinks } from './uploadLinks.js';
import { ObjectHttp } from '../engine/objectHttp.js';
import { engineTuning } from '../engine/retry.js';
import { UploadRun, type UploadEngine } from '../engine/uploadJob.js';
import { createUploadCreation } from './uploadCreate.js';
import { createPackageFinalize } from './packageFinalize.js';
import { createUploadFeed } from './uploadFeed.js';
import {
  deleteUpload,
  getUpload,
  listUploads,
  setUploadCanceled,
  setUploadState,
  type UploadRow,
} from '../store/uploadStore.js';
import { uploadFilesPage } from '../store/uploadView.js';
import { FILES_PAGE_DEFAULT, type KeepRecord, type StreamedRecord, type UploadFilesPage } from '../../api/agent/transfers.js';

export function createUploadsService(ctx: AgentContext, session: SessionService) {
  const { db } = ctx;
  const tuning = engineTuning(process.env, ctx.config.retryForMs);
  const objects = new ObjectHttp({ timeoutMs: tuning.timeoutMs, disks: ctx.disks, bucket: ctx.rates.upload });
  const service = ctx.outages.target('service', session.hosted.baseUrl);
  const runs = new Map<string, UploadRun>();
  /** Uploads being deleted: no run may start for them meanwhile. */
  const removing = new Set<string>();
  /** Uploads being canceled: likewise, and their finalize failing is no error of theirs. */
  const canceling = new Set<string>();
  const closing = new AbortController();
  let closed = false;

  const { recordOf, summaryOf, feed, changed, queue } = createUploadFeed(ctx, (r) =>
    r.state === 'transferring' ? runs.get(r.upload_id)?.waiting() : r.state === 'idle' ? finals.get(r.upload_id)?.trouble.waiting() : undefined,
  );

  const engine: UploadEngine = {
    db,
    hosted: session.hosted,
    objects,
    scheduler: ctx.scheduler,
    tuning,
    outages: ctx.outages,
    log: ctx.log,
    get concurrency() {
      return ctx.config.concurrency;
    },
    changed,
    ended(run, outcome) {
      if (runs.get(run.id) === run) runs.delete(run.id);
      const u = getUpload(db, run.id);
      if (outcome === 'idle' && u?.auto_finalize) finals.auto(run.id);
    },
  };

  function startRun(id: string): void {
    if (closed || removing.has(id) || canceling.has(id) || runs.get(id)?.running) return;
    const u = getUpload(db, id)!;
    const run = new UploadRun(engine, u);
    runs.set(id, run);
    run.start();
  }

  /** Stops the run at once (no more parts, in-flight ones aborted); resolves when it has settled. */
  function stopRun(id: string): Promise<void> {
    const run = runs.get(id);
    runs.delete(id);
    return run ? run.stop() : Promise.resolve();
  }

  function mustGet(id: string): UploadRow {
    const u = getUpload(db, id);
    if (!u) throw notFound(`upload ${id}`);
    return u;
  }
  const rec = (id: string) => recordOf(id)!;
  const sum = (id: string) => summaryOf(id)!;
  const links = createUploadLinks(ctx, session, (id) => completeTeamUpload(mustGet(id)));
  const finals = createPackageFinalize({
    db,
    hosted: session.hosted,
    service,
    tuning,
    log: ctx.log,
    closing: closing.signal,
    changed,
    failureIgnored: (id) => closed || canceling.has(id),
  });

  function pauseOne(u: UploadRow): Promise<void> {
    const settled = stopRun(u.id);
    setUploadState(db, u.id, 'paused');
    changed(u.id, 'state');
    return settled;
  }

  function resumeOne(u: UploadRow): void {
    setUploadState(db, u.id, 'transferring');
    changed(u.id, 'state');
    startRun(u.id);
  }

  /**
   * Stops and forgets the upload; answers its summary as it was, undefined when it was gone already (a concurrent delete).
   * `keep`: given its whole record once it has stopped, before its rows go.
   */
  async function removeOne(id: string, keep?: KeepRecord): Promise<UploadSummary | undefined> {
    const before = summaryOf(id);
    if (!before || removing.has(id)) return undefined;
    removing.add(id);
    try {
      await stopRun(id);
      if (keep) await keep(recordOf(id)!);
      deleteUpload(db, id);
    } finally {
      removing.delete(id);
    }
    feed.removed(id);
    return before;
  }

  const creation = createUploadCreation(ctx, session, (id) => {
    changed(id, 'state');
    startRun(id);
    return sum(id);
  });

  return {
    /** POST /uploads and POST /portals/uploads: uploadCreate.ts. */
    create: creation.create,
    createPortal: creation.createPortal,

    list: (): StreamedRecord[] => listUploads(db).map((u) => rec(u.id)),
    /** Every upload without its files (the window's snapshot, `GET /uploads?files=false`). */
    summaries: (): UploadSummary[] => listUploads(db).map((u) => summaryOf(u.id)!),

    get(id: string): StreamedRecord {
      mustGet(id);
      return rec(id);
    },
    summary(id: string): UploadSummary {
      mustGet(id);
      return summaryOf(id)!;
    },
    /** `limit` files after the index `after`: GET /uploads/{id}/files. */
    files(id: string, after = -1, limit = FILES_PAGE_DEFAULT): UploadFilesPage {
      const page = uploadFilesPage(db, id, after, limit);
      if (!page) throw notFound(`upload ${id}`);
      return page;
    },

    async pause(id: string): Promise<UploadSummary> {
      const u = mustGet(id);
      if (u.state !== 'paused') {
        if (u.state !== 'transferring') throw conflict(`the upload is ${u.state}; only a transferring upload can be paused`);
        await pauseOne(u);
      }
      return sum(id);
    },

    /** Pauses every transferring upload; answers those. */
    async pauseMany(): Promise<UploadSummary[]> {
      const hit = listUploads(db).filter((u) => u.state === 'transferring');
      await Promise.all(hit.map(pauseOne));
      return hit.map((u) => sum(u.id));
    },

    resume(id: string): UploadSummary {
      const u = mustGet(id);
      if (u.state === 'transferring') return sum(id);
      if (u.canceled_at) throw conflict('the upload was canceled, so it cannot be resumed: send the files again in a new upload');
      if (u.state === 'paused' || (u.state === 'error' && u.error_recoverable)) resumeOne(u);
      else if (u.state === 'error') throw conflict(`the upload cannot be resumed: ${u.error}`);
      else throw conflict(`the upload is ${u.state}; only a paused upload or one that failed can be resumed`);
      return sum(id);
    },

    /** Resumes every paused upload and every one that failed recoverably; answers those. */
    resumeMany(): UploadSummary[] {
      const hit = listUploads(db).filter((u) => u.state === 'paused' || (u.state === 'error' && u.error_recoverable));
      hit.forEach(resumeOne);
      return hit.map((u) => sum(u.id));
    },

    /** Resumes the uploads that failed recoverably (a paused one stays paused): at start, and when a target comes back. */
    resumeRecoverable(): void {
      if (closed) return;
      for (const u of listUploads(db)) {
        if (u.state !== 'error' || !u.error_recoverable) continue;
        ctx.log.info({ upload: u.id, error: u.error }, 'resuming an upload that failed recoverably');
        resumeOne(u);
      }
    },

    /** A target came back, or the machine woke: what waits out a back-off goes now. */
    retryNow(): void {
      for (const run of runs.values()) run.retryNow();
    },

    /** After a sleep of the machine: connections that may have died with it are dropped. */
    reconnect(): void {
      objects.reconnect();
    },

    /**
     * Stops the upload at once, as a delete does (its Package stays on the service as it is),
     * but keeps it in the history: state error, error "Canceled", canceled_at. Again: no change.
     */
    async cancel(id: string): Promise<UploadSummary> {
      const u = mustGet(id);
      if (u.canceled_at) return sum(id);
      if (u.state === 'complete') throw conflict('the upload is complete, so there is nothing to cancel: remove it from the list instead');
      canceling.add(id);
      try {
        const fin = finals.get(id);
        fin?.stop.abort(new Error('canceled'));
        await stopRun(id);
        await fin?.done.catch(() => {});
        const now = getUpload(db, id);
        if (!now) throw notFound(`upload ${id}`);
        // A finalize that got through meanwhile made it complete: that is what it is.
        if (now.state === 'complete') throw conflict('the upload completed before it could be canceled: remove it from the list instead');
        setUploadCanceled(db, id);
      } finally {
        canceling.delete(id);
      }
      changed(id, 'state');
      return sum(id);
    },

    /** Forgets the upload here; its Package stays on the service as it is. Answers its summary; `keep` is given its whole record. */
    async remove(id: string, keep?: KeepRecord): Promise<UploadSummary> {
      const gone = await removeOne(id, keep);
      if (!gone) throw notFound(`upload ${id}`);
      return gone;
    },

    async removeMany(states?: UploadState[], keep?: KeepRecord): Promise<UploadSummary[]> {
      const hit = listUploads(db).filter((u) => !states || states.includes(u.state));
      const out: UploadSummary[] = [];
      for (const u of hit) {
        const gone = await removeOne(u.id, keep);
        if (gone) out.push(gone);
      }
      return out;
    },

    /** POST /uploads/{id}/finalize: only from idle. */
    async finalize(id: string): Promise<{ code: number }> {
      const u = mustGet(id);
      if (u.state !== 'idle') throw conflict(`the upload is ${u.state}; only an idle upload can be finalized`);
      await finals.now(id).catch(fromHosted);
      return { code: 200 };
    },

    /** POST /uploads/{id}/link, the transfer's own Link, the list, revoking one: uploadLinks.ts. */
    link: links.link,
    transferLink: links.transferLink,
    links: (id: string) => links.links(id),
    revokeLink: (id: string, linkId: string) => links.revoke(id, linkId),

    /** At agent start: continue what was transferring, finalize what went idle under auto-finalize, resume what failed recoverably. */
    resumeAll(): void {
      for (const u of listUploads(db)) {
        if (u.state === 'transferring') startRun(u.id);
        else if (u.state === 'idle' && u.auto_finalize) finals.auto(u.id);
      }
      this.resumeRecoverable();
    },

    /** Stops every run without touching states, so that they continue at the next start. */
    async close(): Promise<void> {
      closed = true;
      closing.abort();
      feed.close();
      queue.close();
      await Promise.all([...runs.keys()].map(stopRun));
      await finals.settled();
      await objects.close();
    },
  };
}
export type UploadsService = ReturnType<typeof createUploadsService>;
