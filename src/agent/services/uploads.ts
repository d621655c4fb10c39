// Uploads: start one (walk the paths, create the Package, record everything in
// SQLite, hand it to the engine), list, pause, resume, delete, finalize, link.
// Runs that were transferring when the agent stopped continue at resumeAll().
import { randomBytes } from 'node:crypto';
import type { AgentContext } from '../context.js';
import type { SessionService } from './session.js';
import { fromHosted } from './session.js';
import { AgentError, conflict, invalid, notFound } from '../errors.js';
import type { CreateUploadBody, PortalUploadBody, UploadRecord, UploadState, UploadSummary } from '../../api/agent/uploads.js';
import { HostedApiError, type Credentials } from '../../client/http.js';
import { AgentErrorCode } from '../../api/agent/errors.js';
import { createTeamPackage, type Package } from '../../client/uploads.js';
import { completeTeamUpload, createUploadLinks } from './uploadLinks.js';
import { createPortalPackage, getPortalBySubdomain } from '../../client/portals.js';
import { ObjectHttp } from '../engine/objectHttp.js';
import { describe, engineTuning, isRecoverable } from '../engine/retry.js';
import { Trouble } from '../engine/trouble.js';
import { checkPortalRestrictions, planUpload, type UploadPlan } from '../engine/uploadPlan.js';
import { UploadRun, uploadErrorMessage, type UploadEngine } from '../engine/uploadJob.js';
import { finalizeOnService } from '../engine/uploadFinalize.js';
import { TransferFeed } from '../engine/feed.js';
import { uploadChange } from './transferChanges.js';
import { QueueFeed } from '../engine/queueFeed.js';
import {
  deleteUpload,
  getUpload,
  insertUpload,
  listUploads,
  setUploadCanceled,
  setUploadState,
  
  type UploadRow,
} from '../store/uploadStore.js';
import { uploadFilesAt, uploadFilesPage, uploadRecord, uploadSummary } from '../store/uploadView.js';
import { FILES_PAGE_DEFAULT, FILES_PAGE_MAX, type IndexedUploadItem, type UploadFilesPage } from '../../api/agent/transfers.js';

/** An upload's id, as the service makes them (and an automation chooses them before it asks for one). */
export const newUploadId = () => `upl_${randomBytes(12).toString('hex')}`;

/**
 * What the agent's automations pass beside a body: the upload's id, chosen and
 * recorded before the upload is made, and the entries to send (a watch folder's
 * scan, its blacklist applied) instead of a walk of the body's paths.
 */
export interface MadeBy { id?: string; plan?: UploadPlan }

export function createUploadsService(ctx: AgentContext, session: SessionService) {
  const { db } = ctx;
  const tuning = engineTuning(process.env, ctx.config.retryForMs);
  const objects = new ObjectHttp({ timeoutMs: tuning.timeoutMs });
  const service = ctx.outages.target('service', session.hosted.baseUrl);
  const runs = new Map<string, UploadRun>();
  const finalizing = new Map<string, { done: Promise<void>; trouble: Trouble; stop: AbortController }>();
  /** Uploads being deleted: no run may start for them meanwhile. */
  const removing = new Set<string>();
  /** Uploads being canceled: likewise, and their finalize failing is no error of theirs. */
  const canceling = new Set<string>();
  const closing = new AbortController();
  let closed = false;

  /** What a summary or record adds to the stored upload: `waiting` while its run (or its Package finalize) waits for the service or the store, `queue_position` while it waits for its turn. */
  function live<R extends UploadSummary>(r: R): R {
    const waiting = r.state === 'transferring' ? runs.get(r.upload_id)?.waiting() : r.state === 'idle' ? finalizing.get(r.upload_id)?.trouble.waiting() : undefined;
    const place = r.state === 'transferring' ? ctx.scheduler.queuePlace(r.upload_id) : undefined;
    return { ...r, ...(waiting ? { waiting } : {}), ...(place !== undefined ? { queue_position: place } : {}) };
  }
  const recordOf = (id: string): UploadRecord | undefined => {
    const r = uploadRecord(db, id);
    return r && live(r);
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
      for (let after = -1, page; (page = uploadFilesPage(db, id, after, FILES_PAGE_MAX)); after = page.next) {
        yield page.files.filter((f) => f.state !== 'complete');
        if (page.next === null) return;
      }
    },
    followsFiles: (id) => ctx.events.followsFiles(id),
    send(id, c) {
      if (c.change === 'files') ctx.events.publishFiles('upload', id, { change: 'files', upload_id: id, files: c.files });
      else ctx.events.publish('upload', uploadChange(id, c));
    },
  });
  const changed = (id: string, kind: 'state' | 'progress', file?: number) => feed.changed(id, kind, file);
  const queue = new QueueFeed(ctx.scheduler, 'upload', (id) => changed(id, 'state'));

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
      if (outcome === 'idle' && u?.auto_finalize) autoFinalize(run.id);
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

  /** Package finalize (and expiry); one at a time per upload. */
  function finalizeNow(id: string): Promise<void> {
    const running = finalizing.get(id);
    if (running) return running.done;
    const stop = new AbortController();
    const onClose = () => stop.abort(closing.signal.reason);
    if (closing.signal.aborted) onClose();
    closing.signal.addEventListener('abort', onClose, { once: true });
    const trouble = new Trouble(tuning.retry.retryForMs, { changed: () => changed(id, 'progress'), gaveUp: (err) => stop.abort(err) });
    const done = (async () => {
      // Every file marked done is on disk before the service closes the package to changes.
      await db.synced();
      await finalizeOnService(session.hosted, mustGet(id), service, { policy: tuning.retry, trouble, signal: stop.signal });
      if (getUpload(db, id)?.state !== 'idle') return; // deleted or canceled meanwhile
      setUploadState(db, id, 'complete');
      changed(id, 'state');
    })().finally(() => {
      trouble.clear();
      closing.signal.removeEventListener('abort', onClose);
      finalizing.delete(id);
    });
    finalizing.set(id, { done, trouble, stop });
    return done;
  }

  function autoFinalize(id: string): void {
    finalizeNow(id).catch((err) => {
      if (closed || canceling.has(id) || getUpload(db, id)?.state !== 'idle') return; // finalized at the next start, or deleted or canceled
      ctx.log.warn({ err, upload: id }, 'finalizing the package failed');
      setUploadState(db, id, 'error', { message: uploadErrorMessage(err), recoverable: isRecoverable(err) });
      changed(id, 'state');
    });
  }

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

  /** Stops and forgets the upload; undefined when it was gone already (a concurrent delete). */
  async function removeOne(id: string): Promise<UploadRecord | undefined> {
    const before = uploadRecord(db, id);
    if (!before || removing.has(id)) return undefined;
    removing.add(id);
    try {
      await stopRun(id);
      deleteUpload(db, id);
    } finally {
      removing.delete(id);
    }
    feed.removed(id);
    return before;
  }

  /** Records a new upload (its Package exists) and starts it. */
  function begin(
    type: UploadRow['type'],
    pkg: Package,
    plan: UploadPlan,
    o: { chunk_size?: number; priority?: number; delete_after?: number; id?: string; recipients?: string[] },
  ): UploadSummary {
    const id = o.id ?? newUploadId();
    insertUpload(
      db,
      {
        id,
        type,
        state: 'transferring',
        package_id: pkg.id,
        package_token: pkg.access_token,
        name: plan.name,
        package_name: pkg.name,
        priority: o.priority ?? 0,
        chunk_size: o.chunk_size ?? ctx.config.chunkSize,
        auto_finalize: ctx.config.autoFinalize ? 1 : 0,
        delete_after: o.delete_after ?? null,
        size: plan.size,
        recipients: o.recipients?.length ? JSON.stringify(o.recipients) : null,
      },
      plan.entries.map((e) => ({ kind: e.kind, local_path: e.localPath, rel_dir: e.relDir, name: e.name, size: e.size, mtime_ms: e.mtimeMs })),
    );
    changed(id, 'state');
    startRun(id);
    return sum(id);
  }

  return {
    /** POST /uploads: a Team upload (needs the session). The Package is created before the answer. */
    async create(body: CreateUploadBody, made: MadeBy = {}): Promise<UploadSummary> {
      const auth = session.credentials();
      const plan = made.plan ?? (await planUpload(body.paths));
      if (body.delete_after !== undefined && body.unlimited_storage) throw invalid('delete_after and unlimited_storage exclude each other');
      if (body.delete_after !== undefined) {
        const team = (await session.teams()).find((t) => t.id === body.team_id);
        if (team && !team.custom_expiry_enabled) throw invalid('this Team does not allow a custom expiry, so delete_after cannot be used');
      }
      const pkg = await createTeamPackage(
        session.hosted,
        body.team_id,
        {
          name: body.package_name ?? plan.name,
          description: body.package_description ?? '',
          recipients: body.recipients ?? [],
          access_limit: body.download_limit,
          password: body.password,
          tag: body.tag,
          unlimited_storage: body.unlimited_storage,
          teamspace_id: body.teamspace_id,
        },
        { auth },
      ).catch(fromHosted);
      return begin('team', pkg, plan, { chunk_size: body.chunk_size, priority: body.priority, delete_after: body.delete_after, id: made.id, recipients: body.recipients });
    },

    /**
     * POST /portals/uploads: no session needed. The Portal is looked up by subdomain and
     * the paths checked against its restrictions before its Package is created.
     */
    async createPortal(body: PortalUploadBody, made: MadeBy = {}): Promise<UploadSummary> {
      const plan = made.plan ?? (await planUpload(body.paths));
      const portal = await getPortalBySubdomain(session.hosted, body.subdomain).catch(fromHosted);
      if (portal.custom_metadata_required) throw invalid('this Portal asks for a metadata form, which the agent cannot fill in');
      if (portal.terms_of_service_enabled && body.accept_terms !== true) {
        throw invalid(`this Portal asks the sender to accept its terms of service ("${portal.terms_of_service?.title ?? 'terms'}", shown on its page): send accept_terms: true`);
      }
      const name = body.package_name ?? plan.name;
      checkPortalRestrictions(plan, portal.restrictions, name);
      // A Portal for signed-in members takes the session; otherwise the access code is the credential.
      const auth: Credentials = portal.user_authentication_required ? session.credentials() : {};
      if (body.access_code !== undefined) auth.accessCode = body.access_code;
      const pkg = await createPortalPackage(
        session.hosted,
        portal.id,
        { name, description: body.package_description ?? '', sender: body.sender_email, ...(portal.terms_of_service_enabled ? { terms_accepted: true } : {}) },
        { auth },
      ).catch((err) => {
        // A wrong or missing access code is not the session's fault: it must not read as "session is nil".
        if (err instanceof HostedApiError && err.status === 401 && !portal.user_authentication_required) {
          throw new AgentError(403, AgentErrorCode.forbidden, `the Portal refused the access code: ${err.message}`);
        }
        return fromHosted(err);
      });
      return begin('portal', pkg, plan, { chunk_size: body.chunk_size, priority: body.priority, id: made.id });
    },

    list: (): UploadRecord[] => listUploads(db).map((u) => rec(u.id)),
    /** Every upload without its files (the window's snapshot, `GET /uploads?files=false`). */
    summaries: (): UploadSummary[] => listUploads(db).map((u) => summaryOf(u.id)!),

    get(id: string): UploadRecord {
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
        const fin = finalizing.get(id);
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

    /** Forgets the upload here; its Package stays on the service as it is. */
    async remove(id: string): Promise<UploadRecord> {
      const gone = await removeOne(id);
      if (!gone) throw notFound(`upload ${id}`);
      return gone;
    },

    async removeMany(states?: UploadState[]): Promise<UploadRecord[]> {
      const hit = listUploads(db).filter((u) => !states || states.includes(u.state));
      const out: UploadRecord[] = [];
      for (const u of hit) {
        const gone = await removeOne(u.id);
        if (gone) out.push(gone);
      }
      return out;
    },

    /** POST /uploads/{id}/finalize: only from idle. */
    async finalize(id: string): Promise<{ code: number }> {
      const u = mustGet(id);
      if (u.state !== 'idle') throw conflict(`the upload is ${u.state}; only an idle upload can be finalized`);
      await finalizeNow(id).catch(fromHosted);
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
        else if (u.state === 'idle' && u.auto_finalize) autoFinalize(u.id);
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
      await Promise.allSettled([...finalizing.values()].map((f) => f.done));
      await objects.close();
    },
  };
}
export type UploadsService = ReturnType<typeof createUploadsService>;
