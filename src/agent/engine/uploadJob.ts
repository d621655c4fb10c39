// One run of an upload, from start (or resume) until it stops, fails or goes
// idle. Its files are prepared ahead (uploadPrep.ts: register, start the
// multipart upload) and their blueprints fetched as parts use them up
// (uploadBlueprints.ts); the run hands parts to the scheduler, records every
// stored part in SQLite before counting it, finalizes each file once all its
// parts are in, and keeps the upload's state. A run is rebuilt from SQLite each
// time, so stopping one loses nothing.
import { setMaxListeners } from 'node:events';
import type { Logger } from 'pino';
import { HostedApiError, type HostedHttp } from '../../client/http.js';
import type { AgentDb } from '../store/db.js';
import { markFileDone, recordPart, resetFile, setUploadState, uploadBegun, type PartRow, type UploadRow } from '../store/uploadStore.js';
import type { PartTask, Scheduler, Transfer } from './scheduler.js';
import type { ObjectHttp } from './objectHttp.js';
import { backoffMs, describe, isRecoverable, retryAfterMs, type EngineTuning, type RetryScope } from './retry.js';
import type { Outages, Target } from './outages.js';
import { Trouble } from './trouble.js';
import type { Waiting } from '../../api/agent/waiting.js';
import type { FileTransfer, KnownBlueprint } from './uploadFile.js';
import { PendingFiles } from './pendingFiles.js';
import { uploadTotals } from '../store/uploadTotals.js';
import { checkUnchanged, sendPart } from './partUpload.js';
import { finalizeBody } from './uploadRegister.js';
import { FileCalls } from './fileCalls.js';
import { PrepPool } from './uploadPrep.js';
import { BlueprintFetcher } from './uploadBlueprints.js';
import { Growth } from './growingFile.js';

export interface UploadEngine {
  db: AgentDb;
  hosted: HostedHttp;
  objects: ObjectHttp;
  scheduler: Scheduler;
  tuning: EngineTuning;
  outages: Outages;
  log: Logger;
  concurrency: number;
  /** The upload's state or progress changed (for the event feed); `file`: the index of the file that did. */
  changed(id: string, kind: 'state' | 'progress', file?: number): void;
  /** The run ended by itself: it went idle or failed. */
  ended(run: UploadRun, outcome: 'idle' | 'error'): void;
}

/** What an upload's error says: what went wrong, and for a Package that is gone, what to do. */
export function uploadErrorMessage(err: unknown): string {
  if (err instanceof HostedApiError && (err.status === 404 || err.status === 410 || err.code === 'package_not_new')) {
    return `The Package can no longer take files on the service (it was deleted, has expired or was sent from elsewhere): start a new upload. ${describe(err)}`;
  }
  return describe(err);
}

/** File finalize answers that mean the parts on the store are not what we recorded: send the file again. */
const REDO_CODES = new Set(['part_missing', 'etag_mismatch', 'size_mismatch', 'part_too_small', 'unknown_upload']);
const MAX_FILE_RESETS = 2;

export class UploadRun implements Transfer {
  readonly lane = 'upload' as const;
  readonly id: string;
  readonly priority: number;
  readonly createdAt: string;
  /** Bytes of it were stored by an earlier run: it goes on rather than waiting in line. */
  readonly begun: boolean;
  private stopped = false;
  private readonly abort = new AbortController();
  private readonly pending = new Set<Promise<unknown>>();
  /** The one timer that wakes the scheduler when the earliest retry is due. */
  private wakeTimer: { at: number; t: NodeJS.Timeout } | undefined;
  private readonly prep: PrepPool;
  private readonly blueprints: BlueprintFetcher;
  /** Its files still being written (growingFile.ts). */
  private readonly growth: Growth;
  /** Files not yet done; a count, so that finishing each of 100,000 files does not scan them all. */
  private filesLeft: number;
  private readonly calls: FileCalls;
  private readonly service: Target;
  private readonly scope: RetryScope & { signal: AbortSignal };
  /** This run's waiting state; it ends the run once --retry-for passes without a success. */
  private readonly trouble: Trouble;

  constructor(
    private readonly e: UploadEngine,
    private readonly u: UploadRow,
  ) {
    this.id = u.id;
    this.priority = u.priority;
    setMaxListeners(0, this.abort.signal);
    this.service = e.outages.target('service', e.hosted.baseUrl);
    this.trouble = new Trouble(e.tuning.retry.retryForMs, { changed: () => e.changed(u.id, 'progress'), gaveUp: (err) => this.fail(err) });
    this.scope = { policy: e.tuning.retry, trouble: this.trouble, signal: this.abort.signal };
    this.calls = new FileCalls(e.hosted, u.package_id, u.package_token, this.service, this.scope);
    const totals = uploadTotals(e.db, u.id);
    this.filesLeft = totals.files - totals.files_done;
    const run = {
      running: () => !this.stopped,
      track: <T>(p: Promise<T>) => this.track(p),
      fail: (err: unknown) => this.fail(err),
      wake: () => this.wake(),
      restartFile: (f: FileTransfer, why: unknown) => this.restartFile(f, why),
      ready: (f: FileTransfer) => {
        if (f.growing) this.growth.add(f);
        if (f.allDone()) this.track(this.finishFile(f));
        else this.wake();
      },
    };
    this.growth = new Growth(e.db, u.id, {
      ...run,
      startOver: (f, why) => this.startOver(f, why),
      fixed: (f) => run.ready(f),
      grew: (f) => e.changed(u.id, 'progress', f.row.idx),
    });
    this.prep = new PrepPool(e, u, this.calls, this.scope, run, new PendingFiles(e.db, u.id, e.tuning.readAhead));
    this.blueprints = new BlueprintFetcher(e.hosted, e.tuning, u, this.service, this.scope, run);
    this.createdAt = u.created_at;
    this.begun = uploadBegun(e.db, u.id);
  }

  get running(): boolean {
    return !this.stopped;
  }

  waiting(): Waiting | undefined {
    return this.trouble.waiting();
  }

  start(): void {
    if (this.filesLeft === 0) return this.goIdle();
    this.e.scheduler.add(this);
    this.prep.ensureWorkers();
  }

  /** Stops handing out parts and aborts everything in flight; resolves once all of it has settled. States are not touched. */
  stop(): Promise<void> {
    if (!this.stopped) {
      this.stopped = true;
      this.e.scheduler.remove(this.id);
      this.abort.abort();
      clearTimeout(this.wakeTimer?.t);
      this.wakeTimer = undefined;
      this.trouble.clear();
      this.growth.stop();
      this.prep.wakeWorkers();
    }
    return Promise.allSettled([...this.pending]).then(() => undefined);
  }

  /** A target came back, or the machine woke: parts waiting out a back-off go now. */
  retryNow(): void {
    if (this.stopped) return;
    for (const f of this.prep.active) f.retryNow();
    clearTimeout(this.wakeTimer?.t);
    this.wakeTimer = undefined;
    this.wake();
  }

  nextPart(): PartTask | undefined {
    if (this.stopped) return undefined;
    const now = performance.now();
    let soonest = Infinity;
    for (const f of this.prep.active) {
      if (f.finalizing || f.holding) continue;
      const n = f.take(now);
      this.blueprints.maybeFetch(f);
      if (n !== undefined) {
        const entry = f.blueprints.get(n)!;
        // The store is down: nothing new goes to it until its probe answers (then retryNow).
        const store = this.storeOf(entry);
        if (store.down) {
          f.requeue(n, 0);
          this.trouble.blockedBy(store);
          return undefined;
        }
        const epoch = f.epoch;
        // In flight until its record is in the file's done parts (a growing file's check waits for them).
        f.inFlight++;
        const landed = () => void f.inFlight--;
        return { run: () => this.track(this.runPart(f, n, entry, epoch, landed).catch((err) => (landed(), Promise.reject(err)))) };
      }
      soonest = Math.min(soonest, f.nextRetryAt(now));
    }
    // Parts waiting out their back-off: come back when the first is due.
    if (soonest !== Infinity) this.wakeAt(soonest);
    return undefined;
  }

  private storeOf(entry: KnownBlueprint): Target {
    return this.e.outages.target('store', entry.bp.url);
  }

  private get policy() {
    return this.e.tuning.retry;
  }

  /** Keeps the promise until it settles; one that fails unexpectedly (a bug, a full disk) fails the upload rather than stalling it. */
  private track<T>(p: Promise<T>): Promise<T> {
    this.pending.add(p);
    void p.then(
      () => this.pending.delete(p),
      (err) => {
        this.pending.delete(p);
        this.fail(err);
      },
    );
    return p;
  }

  private wake(): void {
    if (!this.stopped) this.e.scheduler.wake();
  }

  /** Wakes the scheduler at `at` (performance.now() time), unless a wake-up is due before. */
  private wakeAt(at: number): void {
    if (this.stopped || (this.wakeTimer && this.wakeTimer.at <= at)) return;
    clearTimeout(this.wakeTimer?.t);
    const t = setTimeout(() => {
      this.wakeTimer = undefined;
      this.wake();
    }, Math.max(0, Math.ceil(at - performance.now())) + 1);
    this.wakeTimer = { at, t };
  }

  private fail(err: unknown): void {
    if (this.stopped) return;
    void this.stop();
    const recoverable = isRecoverable(err);
    this.e.log.warn({ err, upload: this.id, recoverable }, 'upload failed');
    setUploadState(this.e.db, this.id, 'error', { message: uploadErrorMessage(err), recoverable });
    this.e.changed(this.id, 'state');
    this.e.ended(this, 'error');
  }

  private goIdle(): void {
    if (this.stopped) return;
    void this.stop();
    setUploadState(this.e.db, this.id, 'idle');
    this.e.changed(this.id, 'state');
    this.e.ended(this, 'idle');
  }

  // ---- parts ----

  /** A stored part is done in this run, and its file finished if it was the last, once its record is on disk. A run stopped meanwhile finds the record at its next start. */
  private async partDone(f: FileTransfer, part: PartRow, epoch: number, whole: boolean, flushed: Promise<void>): Promise<void> {
    await flushed;
    if (this.stopped || epoch !== f.epoch) return;
    f.done.set(part.part_number, part);
    f.readWhole = whole;
    this.e.changed(this.id, 'progress', f.row.idx);
    if (f.allDone()) this.track(this.finishFile(f));
  }

  /** `landed` is called once the part is settled: counted done, or not stored. */
  private async runPart(f: FileTransfer, n: number, entry: KnownBlueprint, epoch: number, landed: () => void): Promise<void> {
    const range = f.range(n);
    const outcome = await sendPart(this.e.objects, entry.bp, f.row, range, this.abort.signal, f.growing ? { ino: this.growth.inoOf(f) } : undefined);
    if (outcome.kind !== 'stored' || this.stopped || epoch !== f.epoch) landed();
    if (this.stopped || epoch !== f.epoch) return;
    switch (outcome.kind) {
      case 'aborted':
        return;
      case 'stale':
        // The growth watch sees the shrink or the new file and starts it over; if it was a passing state, the part goes again.
        f.requeue(n, performance.now() + 250);
        return this.wakeAt(performance.now() + 250);
      case 'stored': {
        // synced() commits the record at once, so a crash or kill -9 from here on keeps it, and
        // the slot goes to the next part now; the flush that makes the record survive power
        // loss waits 5-15 ms behind the store's writes on a shared disk (docs/agent-api.md).
        const part = { part_number: n, etag: outcome.etag, size: range.length };
        recordPart(this.e.db, this.id, f.row.idx, part);
        this.storeOf(entry).ok();
        this.trouble.succeeded();
        f.blueprints.delete(n);
        f.attempts.delete(n);
        f.expiredInRow = 0;
        this.track(this.partDone(f, part, epoch, outcome.whole, this.e.db.synced()).finally(landed));
        return;
      }
      case 'expired': {
        if (entry.gen === f.gen) {
          f.gen++;
          f.blueprints.clear();
          if (++f.expiredInRow > this.e.tuning.maxExpiredRefreshes) {
            return this.fail(new Error(`the store kept refusing the part URLs of ${f.row.local_path} (403) even when fresh`));
          }
        }
        f.requeue(n, 0);
        return this.wake();
      }
      case 'upload_gone':
        return this.restartFile(f, new Error(`the store no longer knows the upload of ${f.row.local_path}`));
      case 'fatal':
        return this.fail(outcome.error);
      case 'retry': {
        const tries = (f.attempts.get(n) ?? 0) + 1;
        f.attempts.set(n, tries);
        // The store mangling or refusing this very part is bounded by tries; the store or the network failing, by --retry-for.
        if (outcome.cause === 'suspect' && tries >= this.policy.attempts) {
          return this.fail(new Error(`part ${n} of ${f.row.local_path} failed ${tries} times; last: ${outcome.reason}`));
        }
        const store = this.storeOf(entry);
        const after = retryAfterMs(outcome.retryAfter);
        if (outcome.cause === 'outage') store.report(outcome.reason, after);
        const delay = after ?? backoffMs(tries, this.policy);
        this.trouble.failed(store, outcome.reason, Date.now() + delay);
        this.e.log.debug({ upload: this.id, part: n, tries, delay, reason: outcome.reason }, 'part will be retried');
        f.requeue(n, performance.now() + delay);
        return this.wakeAt(performance.now() + delay);
      }
    }
  }

  // ---- finishing files ----

  private async finishFile(f: FileTransfer): Promise<void> {
    if (f.finalizing) return;
    f.finalizing = true;
    const epoch = f.epoch;
    const r = f.row;
    try {
      if (r.kind === 'file') {
        // Bytes read whole were checked against the walk around their read: they are the file as walked.
        if (!f.readWhole) await checkUnchanged(r);
        await this.calls.finalize(r.file_id!, finalizeBody(r, [...f.done.values()]));
      }
    } catch (err) {
      if (this.stopped || epoch !== f.epoch) return;
      if (err instanceof HostedApiError && err.status === 409 && REDO_CODES.has(err.code)) return this.restartFile(f, err);
      return this.fail(err);
    }
    if (this.stopped || epoch !== f.epoch) return;
    // Not flushed here: lost, it is only finalized again, which the service takes as done.
    // The package finalize flushes first (services/uploads.ts).
    markFileDone(this.e.db, this.id, r.idx);
    if (!f.row.done) this.filesLeft--;
    f.row = { ...f.row, done: 1 };
    this.prep.finished(f);
    this.e.changed(this.id, 'progress', r.idx);
    if (this.filesLeft === 0) this.goIdle();
  }

  /** The store lost the file's upload or holds other parts than recorded: register it again and send it whole. */
  private restartFile(f: FileTransfer, why: unknown): void {
    if (this.stopped) return;
    if (++f.resets > MAX_FILE_RESETS) return this.fail(why);
    this.e.log.warn({ upload: this.id, file: f.row.local_path, why: describe(why) }, 'starting the file over');
    this.again(f);
  }

  /** A growing file shrank or was replaced: it starts from zero, however often its writer does that. */
  private startOver(f: FileTransfer, why: string): void {
    if (this.stopped) return;
    this.e.log.info({ upload: this.id, file: f.row.local_path, why }, 'a growing file starts over');
    this.again(f);
  }

  private again(f: FileTransfer): void {
    this.growth.forget(f);
    resetFile(this.e.db, this.id, f.row.idx);
    f.row = { ...f.row, file_id: null, s3_upload_id: null, chunk_size: null, part_count: null };
    f.forget();
    this.prep.again(f);
    this.e.changed(this.id, 'progress', f.row.idx);
  }
}
