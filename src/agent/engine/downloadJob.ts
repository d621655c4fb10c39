// One download as a Transfer of the scheduler: it hands out ranges of its files
// (DownloadWriter writes and records them), retries failed ranges after a
// back-off without holding a slot (downloadRetries.ts keeps them waiting), and
// moves between transferring, paused, complete and error, telling the feed of
// each change (which throttles progress).
import type { Logger } from 'pino';
import type { PartTask, Scheduler, Transfer } from './scheduler.js';
import type { DownloadRecord, DownloadSummary } from '../../api/agent/downloads.js';
import { FILES_PAGE_MAX, type DownloadFilesPage, type IndexedDownloadItem } from '../../api/agent/transfers.js';
import type { DownloadItem } from './downloadItem.js';
import { targetOf, type DownloadWriter } from './downloadWriter.js';
import { retryAfterMs, type EngineTuning } from './retry.js';
import { Trouble } from './trouble.js';
import type { AgentDb } from '../store/db.js';
import * as store from '../store/downloadStore.js';
import { classify } from './downloadErrors.js';
import { RangeMismatchError } from './rangeFetch.js';
import { backoffMs } from './retry.js';
import { downloadFilesAt, downloadFilesPage, downloadRecord, downloadSummary } from './downloadRecord.js';
import { CANCELED } from '../store/canceledTransfers.js';
import { RangeRetries } from './downloadRetries.js';
import { MAX_FILES_PER_DOWNLOAD_URLS } from '../../api/hosted/files.js';

export interface JobDeps {
  db: AgentDb;
  scheduler: Scheduler;
  log: Logger;
  writer: DownloadWriter;
  tuning: EngineTuning;
  /** A change of this download, for the event feed (see feed.ts). */
  changed(id: string, kind: 'state' | 'progress', file?: number): void;
}

const FINALIZE = -1;
/** Entries ahead of the one handed out whose URLs are asked for early: a `download_urls` request's worth. */
const URLS_AHEAD = MAX_FILES_PER_DOWNLOAD_URLS;
/** Entries ahead whose folders and partial files are made early. */
const OPEN_AHEAD = 32;
/** Ranges received and being flushed, recorded and published after their slot was given back, at most. */
export const SETTLING_MAX = 128;

export class DownloadJob implements Transfer {
  readonly lane = 'download' as const;
  readonly id: string;
  readonly priority: number;
  readonly createdAt: string;
  private controller = new AbortController();
  /** Bumped by resume, so ranges aborted by an earlier pause know to queue themselves again. */
  private gen = 0;
  private cursor = 0;
  /** Entries before these indexes had their URL asked for, their partial file made (warm()). */
  private urlsTo = 0;
  private opensTo = 0;
  /** Ranges past their slot, still being flushed, recorded or published. */
  private settling = 0;
  /** Failed ranges waiting out their back-off, and their tries. */
  private readonly retries: RangeRetries;
  private readonly running = new Set<Promise<void>>();
  private closed = false;
  /** Waiting for the service or the store; gives up into a recoverable error after --retry-for. */
  private readonly trouble: Trouble;

  constructor(
    readonly row: store.DownloadRow,
    readonly items: DownloadItem[],
    private readonly deps: JobDeps,
  ) {
    this.id = row.id;
    this.priority = row.priority;
    this.createdAt = row.created_at;
    this.retries = new RangeRetries(() => deps.scheduler.wake());
    this.trouble = new Trouble(deps.tuning.retry.retryForMs, { changed: () => this.notify(false), gaveUp: (err) => this.fail(err.message, true) });
    items.forEach((item, i) => (item.index = i));
  }

  /** Whether a failure that needs no person (the network, the service, the store) stopped it: it resumes by itself. */
  get recoverable(): boolean {
    return this.row.state === 'error' && this.row.error_recoverable === 1;
  }

  /** Bytes of it were fetched before (a resume, a restart): it goes on rather than waiting in line. */
  get begun(): boolean {
    return this.items.some((i) => i.state === 'complete' || i.bytesDone > 0);
  }

  get state(): store.DownloadState {
    return this.row.state;
  }

  get writer(): DownloadWriter {
    return this.deps.writer;
  }

  /** Hands the job to the scheduler when it is transferring (new, or running when the agent stopped). */
  start(): void {
    if (this.row.state !== 'transferring' || this.closed) return;
    this.deps.scheduler.add(this);
    this.checkDone();
  }

  nextPart(): PartTask | undefined {
    if (this.row.state !== 'transferring' || this.closed || this.settling >= SETTLING_MAX) return undefined;
    // While the service or the store is down nothing starts: its probe brings it back (then retryNow).
    const blocker = this.deps.writer.blocker();
    if (blocker) {
      this.trouble.blockedBy(blocker);
      return undefined;
    }
    const due = this.retries.nextDue();
    if (due) return this.task(due.item, due.idx);
    for (let i = this.cursor; i < this.items.length; i++) {
      const item = this.items[i]!;
      if (item.state !== 'pending') {
        if (i === this.cursor) this.cursor++;
        continue;
      }
      const idx = item.take();
      if (idx !== undefined) {
        this.warm(i);
        return this.task(item, idx);
      }
      // Every range recorded but the file not yet published: a crash or pause came between the two.
      if (item.allDone && !item.finalizing && item.inFlight.size === 0) return this.task(item, FINALIZE);
    }
    return undefined;
  }

  /**
   * Small files wait on the service for their URL and on the disk for their
   * folder and partial file: the entries ahead of `i` get those started now
   * (their URLs gathered into full requests), so that a slot finds them ready.
   */
  private warm(i: number): void {
    const signal = this.controller.signal;
    const n = this.items.length;
    if (this.urlsTo < i + URLS_AHEAD / 2) {
      const to = Math.min(n, Math.max(this.urlsTo, i) + URLS_AHEAD);
      for (let j = Math.max(this.urlsTo, i + 1); j < to; j++) this.deps.writer.warm(this.items[j]!, signal, false);
      this.urlsTo = to;
    }
    const to = Math.min(n, i + 1 + OPEN_AHEAD);
    for (let j = Math.max(this.opensTo, i + 1); j < to; j++) this.deps.writer.warm(this.items[j]!, signal, true);
    this.opensTo = Math.max(this.opensTo, to);
  }

  /**
   * The slot is given back once the range's bytes are received: flushing,
   * recording and publishing go on after it (at most SETTLING_MAX at once), so
   * the store always has the scheduler's number of requests to answer.
   */
  private task(item: DownloadItem, idx: number): PartTask {
    const gen = this.gen;
    const signal = this.controller.signal;
    if (idx === FINALIZE) item.finalizing = true;
    else item.inFlight.set(idx, 0);
    return {
      run: () => {
        let release!: () => void;
        const slot = new Promise<void>((ok) => (release = ok));
        const p = this.runTask(item, idx, gen, signal, release);
        this.running.add(p);
        void p.finally(() => {
          this.running.delete(p);
          release();
        });
        return slot;
      },
    };
  }

  private async runTask(item: DownloadItem, idx: number, gen: number, signal: AbortSignal, release: () => void): Promise<void> {
    // A finalize task claimed the entry in task(); a range task claims it below when it finished the last range.
    let finalizing = idx === FINALIZE;
    let settling = false;
    try {
      if (idx !== FINALIZE) {
        const received = await this.deps.writer.receive(item, idx, signal, (n) => {
          item.inFlight.set(idx, (item.inFlight.get(idx) ?? 0) + n);
          this.notify(false, item);
        });
        settling = true;
        this.settling++;
        release();
        await this.deps.writer.commit(item, idx, received, signal);
        item.inFlight.delete(idx);
        this.retries.succeeded(item, idx);
        this.trouble.succeeded();
        if (!item.allDone || item.finalizing || item.state !== 'pending') return;
        item.finalizing = finalizing = true;
      }
      if ((await this.deps.writer.finalize(item, signal)) === 'restart') this.retries.wakeAfter(0);
      else this.checkDone();
    } catch (err) {
      item.inFlight.delete(idx);
      if (signal.aborted) {
        // Paused or stopped meanwhile; after a quick pause and resume the range is due again.
        if (idx !== FINALIZE && !this.closed && this.row.state === 'transferring' && this.gen !== gen) this.retries.requeue(item, idx, 0);
        return;
      }
      // A failed finalize is not a range to fetch again.
      this.onFailure(item, finalizing ? FINALIZE : idx, err);
    } finally {
      if (finalizing) item.finalizing = false;
      item.inFlight.delete(idx);
      this.notify(false, item);
      if (settling) {
        this.settling--;
        this.deps.scheduler.wake();
      }
    }
  }

  private onFailure(item: DownloadItem, idx: number, err: unknown): void {
    const f = classify(err);
    if (f.kind === 'item') {
      // Bytes from another version of the object (or another range) must not stay recorded.
      if (err instanceof RangeMismatchError) this.deps.writer.reset(item);
      return this.failItem(item, f.message);
    }
    // Flagged after the download was planned (its scan ended later): skipped, never written.
    if (f.kind === 'withheld') return this.skipItem(item, f.message);
    if (f.kind === 'fatal' || idx === FINALIZE) return this.fail(`${item.relPath}: ${f.message}`);
    const n = this.retries.failed(item, idx);
    // Something unforeseen is bounded by tries; the network, the service and the store failing, by --retry-for.
    if (f.cause === 'suspect' && n >= this.deps.tuning.retry.attempts) return this.fail(`${item.relPath}: gave up after ${n} tries: ${f.message}`, true);
    const delay = retryAfterMs(f.retryAfter) ?? backoffMs(n, this.deps.tuning.retry);
    this.trouble.failed(targetOf(err) ?? this.deps.writer.service, f.message, Date.now() + delay);
    this.deps.log.debug({ download: this.id, file: item.fileId, range: idx, attempt: n, err: f.message }, 'range failed, retrying');
    this.retries.requeue(item, idx, delay);
  }

  /** A target came back: ranges waiting out a back-off go now. */
  retryNow(): void {
    if (this.row.state !== 'transferring' || this.closed) return;
    this.retries.allDue();
    this.deps.scheduler.wake();
  }

  /** After a sleep of the machine: ranges in flight may sit on dead connections; they start again at once. */
  kick(): void {
    if (this.row.state !== 'transferring' || this.closed) return;
    this.controller.abort();
    this.controller = new AbortController();
    this.gen++;
    // What was warmed with the aborted signal is asked for again.
    this.urlsTo = this.opensTo = 0;
    this.retryNow();
  }

  /** One entry fails; the others go on, and the download ends in error once they are done. */
  private failItem(item: DownloadItem, message: string): void {
    if (item.state !== 'pending') return;
    item.state = 'error';
    item.error = message;
    store.setItemState(this.deps.db, this.id, item.fileId, 'error', message);
    this.checkDone();
  }

  /** One entry is skipped (the service withholds it); its empty partial file is removed. */
  private skipItem(item: DownloadItem, message: string): void {
    if (item.state !== 'pending') return;
    item.state = 'skipped';
    item.error = message;
    store.setItemState(this.deps.db, this.id, item.fileId, 'skipped', message);
    void this.deps.writer.discard(item).catch((err) => this.deps.log.warn({ err, download: this.id, file: item.fileId }, 'a partial file could not be removed'));
    this.checkDone();
  }

  /** Complete once no entry is pending; error when some failed. */
  private checkDone(): void {
    if (this.row.state !== 'transferring' || this.closed || this.anyPending()) return;
    const failed = this.items.filter((i) => i.state === 'error');
    if (failed.length > 0) this.fail(`${failed.length} file(s) failed; ${failed[0]!.relPath}: ${failed[0]!.error}`);
    else this.setState('complete', null);
  }

  /**
   * Entries before the cursor are settled (nextPart moves it only past those, and
   * resume sets it back), so the look starts there: each finished file of a
   * 100,000-file download must not scan all the others.
   */
  private anyPending(): boolean {
    for (let i = this.cursor; i < this.items.length; i++) if (this.items[i]!.state === 'pending') return true;
    return false;
  }

  private setState(state: store.DownloadState, error: string | null, recoverable = false): void {
    this.row.state = state;
    this.row.error = error;
    this.row.error_recoverable = recoverable ? 1 : 0;
    this.row.updated_at = store.setDownloadState(this.deps.db, this.id, state, error, recoverable);
    this.afterState(state);
  }

  private afterState(state: store.DownloadState): void {
    if (state !== 'transferring') {
      this.trouble.clear();
      this.deps.scheduler.remove(this.id);
      this.retries.clear();
      void this.settle().then(() => this.releaseFiles());
    }
    this.notify(true);
  }

  /** Stops in `error` (resume tries again; a `recoverable` one resumes by itself); ranges in flight are aborted. */
  fail(message: string, recoverable = false): void {
    if (this.row.state !== 'transferring' || this.closed) return;
    this.deps.log.warn({ download: this.id, err: message, recoverable }, 'download failed');
    this.setState('error', message, recoverable);
    this.controller.abort();
  }

  /**
   * Stops for good (resume refuses it) and stays listed as canceled: ranges in flight are
   * aborted; finished files stay, partial ones go, as a browser does with a canceled download.
   */
  async cancel(): Promise<void> {
    if (this.closed || this.row.canceled_at || this.row.state === 'complete') return;
    this.controller.abort();
    const at = store.setDownloadCanceled(this.deps.db, this.id);
    Object.assign(this.row, { state: 'error', error: CANCELED, error_recoverable: 0, canceled_at: at, updated_at: at });
    this.afterState('error');
    await this.settle();
    for (const item of this.items) {
      if (item.state !== 'pending') continue;
      item.state = 'error';
      item.error = CANCELED;
      store.setItemState(this.deps.db, this.id, item.fileId, 'error', CANCELED);
      this.deps.writer.reset(item);
      await this.deps.writer.discard(item).catch((err) => this.deps.log.warn({ err, download: this.id, file: item.fileId }, 'a partial file could not be removed'));
    }
    this.notify(true);
  }

  /** transferring -> paused: no new ranges, those in flight are aborted (and fetched again on resume). */
  async pause(): Promise<void> {
    if (this.row.state !== 'transferring') return;
    this.setState('paused', null);
    this.controller.abort();
    await this.settle();
  }

  /** paused or error -> transferring, from the recorded ranges. */
  resume(): void {
    if (this.row.state === 'transferring' || this.row.state === 'complete' || this.row.canceled_at || this.closed) return;
    this.controller = new AbortController();
    this.gen++;
    this.retries.forgetTries();
    this.cursor = this.urlsTo = this.opensTo = 0;
    for (const item of this.items) {
      item.next = 0;
      if (item.state === 'error') {
        item.state = 'pending';
        item.error = null;
        store.setItemState(this.deps.db, this.id, item.fileId, 'pending', null);
      }
    }
    this.setState('transferring', null);
    this.start();
  }

  /** Aborts what is in flight and waits for it, without changing the state (agent shutdown, delete). */
  async stop(): Promise<void> {
    this.closed = true;
    this.trouble.clear();
    this.deps.scheduler.remove(this.id);
    this.controller.abort();
    this.retries.clearTimers();
    await this.settle();
    await this.releaseFiles();
  }

  private async settle(): Promise<void> {
    while (this.running.size > 0) await Promise.allSettled([...this.running]);
  }

  private async releaseFiles(): Promise<void> {
    if (this.row.state === 'transferring' && !this.closed) return;
    await Promise.all(this.items.map((i) => i.closeFile()));
  }

  private notify(immediate: boolean, item?: DownloadItem): void {
    if (!this.closed) this.deps.changed(this.id, immediate ? 'state' : 'progress', item?.index);
  }

  private readonly localPath = (item: DownloadItem) => this.deps.writer.localPath(item);

  /** What the stored state gains while it transfers: `waiting` for the service or the store, `queue_position` in line. */
  private live<R extends DownloadSummary>(r: R): R {
    if (this.row.state !== 'transferring') return r;
    const waiting = this.trouble.waiting();
    const place = this.deps.scheduler.queuePlace(this.id);
    return { ...r, ...(waiting ? { waiting } : {}), ...(place !== undefined ? { queue_position: place } : {}) };
  }

  record(): DownloadRecord {
    return this.live(downloadRecord(this.row, this.items, this.localPath));
  }

  summary(): DownloadSummary {
    return this.live(downloadSummary(this.row, this.items));
  }

  /** `limit` entries after the index `after`. */
  files(after: number, limit: number): DownloadFilesPage {
    return downloadFilesPage(this.row, this.items, after, limit, this.localPath);
  }

  /** The entries at these indexes; `all`: those not complete, a page at a time. */
  *filesAt(indexes: number[] | 'all'): Iterable<IndexedDownloadItem[]> {
    if (indexes !== 'all') return yield downloadFilesAt(this.row, this.items, indexes, this.localPath);
    const open = this.items.filter((i) => i.state !== 'complete').map((i) => i.index);
    for (let i = 0; i < open.length; i += FILES_PAGE_MAX) yield downloadFilesAt(this.row, this.items, open.slice(i, i + FILES_PAGE_MAX), this.localPath);
  }
}
