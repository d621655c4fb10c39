// One download as a Transfer of the scheduler: it hands out ranges of its files
// (DownloadWriter writes and records them), retries failed ranges after a
// back-off without holding a slot (downloadRetries.ts keeps them waiting), and
// moves between transferring, paused, complete and error, telling the feed of
// each change (which throttles progress). Its entries live in SQLite; it holds
// only those under way and a window ahead (downloadWindow.ts).
import type { Logger } from 'pino';
import type { PartTask, Scheduler, Transfer } from './scheduler.js';
import type { DownloadSummary } from '../../api/agent/downloads.js';
import { FILES_PAGE_MAX, RECORD_PAGE, type DownloadFilesPage, type IndexedDownloadItem, type StreamedRecord } from '../../api/agent/transfers.js';
import { setMaxListeners } from 'node:events';
import { DownloadItem } from './downloadItem.js';
import { targetOf, type DownloadWriter } from './downloadWriter.js';
import { backoffMs, retryAfterMs, type EngineTuning } from './retry.js';
import { Trouble } from './trouble.js';
import type { AgentDb } from '../store/db.js';
import * as store from '../store/downloadStore.js';
import { classify } from './downloadErrors.js';
import { RangeMismatchError } from './rangeFetch.js';
import { downloadEntryBatches, downloadFilesAt, downloadFilesPage, downloadFilePages, downloadOpenFiles, downloadSummary, type DownloadView } from './downloadRecord.js';
import { DownloadWindow } from './downloadWindow.js';
import { CANCELED } from '../store/canceledTransfers.js';
import { RangeRetries } from './downloadRetries.js';

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
/** Ranges received and being flushed, recorded and published after their slot was given back, at most. */
export const SETTLING_MAX = 128;

export class DownloadJob implements Transfer {
  readonly lane = 'download' as const;
  readonly id: string;
  readonly priority: number;
  readonly createdAt: string;
  private controller = newController();
  /** Bumped by resume, so ranges aborted by an earlier pause know to queue themselves again. */
  private gen = 0;
  /** The entries held in memory, and the totals of all. */
  private readonly window: DownloadWindow;
  /** Ranges past their slot, still being flushed, recorded or published. */
  private settling = 0;
  /** Failed ranges waiting out their back-off, and their tries. */
  private readonly retries: RangeRetries;
  private readonly running = new Set<Promise<void>>();
  private closed = false;
  /** Waiting for the service or the store; gives up into a recoverable error after --retry-for. */
  private readonly trouble: Trouble;

  /** What the record and page reads need. */
  private readonly view: DownloadView;

  constructor(
    readonly row: store.DownloadRow,
    private readonly deps: JobDeps,
  ) {
    this.id = row.id;
    this.priority = row.priority;
    this.createdAt = row.created_at;
    this.retries = new RangeRetries(() => deps.scheduler.wake());
    this.trouble = new Trouble(deps.tuning.retry.retryForMs, { changed: () => this.notify(false), gaveUp: (err) => this.fail(err.message, true) });
    this.window = new DownloadWindow(deps.db, row, deps.tuning.downloadWindow);
    this.view = { db: deps.db, row, held: (seq) => this.window.held(seq), localPath: (item) => deps.writer.localPath(item) };
  }

  /** Entries held in memory now. */
  get held(): number {
    return this.window.items.length;
  }

  /** Whether a failure that needs no person (the network, the service, the store) stopped it: it resumes by itself. */
  get recoverable(): boolean {
    return this.row.state === 'error' && this.row.error_recoverable === 1;
  }

  /** Bytes of it were fetched before (a resume, a restart): it goes on rather than waiting in line. */
  get begun(): boolean {
    return this.window.totals.complete > 0 || this.window.progress > 0;
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
    this.window.fill();
    const items = this.window.items;
    for (let i = 0; i < items.length; i++) {
      const item = items[i]!;
      const idx = item.take();
      if (idx !== undefined) {
        this.window.warm(i, this.deps.writer, this.controller.signal);
        return this.task(item, idx);
      }
      // Every range recorded but the file not yet published: a crash or pause came between the two.
      if (item.allDone && !item.finalizing && item.inFlight.size === 0) return this.task(item, FINALIZE);
    }
    return undefined;
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
      else {
        this.window.release(item);
        this.checkDone();
      }
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
    this.controller = newController();
    this.gen++;
    // What was warmed with the aborted signal is asked for again.
    this.window.coldAgain();
    this.retryNow();
  }

  /** One entry fails; the others go on, and the download ends in error once they are done. */
  private failItem(item: DownloadItem, message: string): void {
    if (item.state !== 'pending') return;
    item.state = 'error';
    item.error = message;
    store.setItemState(this.deps.db, this.id, item.fileId, 'error', message);
    this.window.release(item);
    this.checkDone();
  }

  /** One entry is skipped (the service withholds it); its empty partial file is removed. */
  private skipItem(item: DownloadItem, message: string): void {
    if (item.state !== 'pending') return;
    item.state = 'skipped';
    item.error = message;
    store.setItemState(this.deps.db, this.id, item.fileId, 'skipped', message);
    this.window.release(item);
    void this.deps.writer.discard(item).catch((err) => this.deps.log.warn({ err, download: this.id, file: item.fileId }, 'a partial file could not be removed'));
    this.checkDone();
  }

  /** Complete once no entry is pending; error when some failed. */
  private checkDone(): void {
    if (this.row.state !== 'transferring' || this.closed) return;
    this.window.fill();
    if (this.window.anyPending) return;
    const failed = this.window.totals.failed;
    const first = failed > 0 ? store.firstFailed(this.deps.db, this.id) : undefined;
    if (first) this.fail(`${failed} file(s) failed; ${first.rel_path}: ${first.error}`);
    else this.setState('complete', null);
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
    const warn = (err: unknown, file: string) => this.deps.log.warn({ err, download: this.id, file }, 'a partial file could not be removed');
    await this.window.cancel(CANCELED, (r) => this.deps.writer.removePart(r).catch((err) => warn(err, r.file_id)));
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
    this.controller = newController();
    this.gen++;
    this.retries.forgetTries();
    this.window.coldAgain();
    for (const item of this.window.items) item.next = 0;
    store.retryFailed(this.deps.db, this.id);
    this.window.recount();
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
    await this.window.closeFiles();
  }

  private notify(immediate: boolean, item?: DownloadItem): void {
    if (!this.closed) this.deps.changed(this.id, immediate ? 'state' : 'progress', item?.index);
  }

  /** What the stored state gains while it transfers: `waiting` for the service or the store, `queue_position` in line. */
  private live<R extends DownloadSummary>(r: R): R {
    if (this.row.state !== 'transferring') return r;
    const waiting = this.trouble.waiting();
    const place = this.deps.scheduler.queuePlace(this.id);
    return { ...r, ...(waiting ? { waiting } : {}), ...(place !== undefined ? { queue_position: place } : {}) };
  }

  /** The spec's record: its summary now, its entries read as they are sent. */
  record(): StreamedRecord {
    return { summary: this.summary(), items: downloadFilePages(this.view, RECORD_PAGE) };
  }

  summary(): DownloadSummary {
    return this.live(downloadSummary(this.row, this.totals()));
  }

  private totals() {
    const t = this.window.totals;
    return { files: t.files, size: t.size, complete: t.complete, progress: this.window.progress };
  }

  /** `limit` entries after the index `after`. */
  files(after: number, limit: number): DownloadFilesPage {
    return downloadFilesPage(this.view, this.window.totals.files, after, limit);
  }

  /** The entries at these indexes; `all`: those not complete, a page at a time. */
  filesAt(indexes: number[] | 'all'): Iterable<IndexedDownloadItem[]> {
    return indexes === 'all' ? downloadOpenFiles(this.view, FILES_PAGE_MAX) : [downloadFilesAt(this.view, indexes)];
  }

  /** Every entry as its row says (the files a removal takes away), a batch at a time: downloadRecord.ts. */
  entryBatches = () => downloadEntryBatches(this.view);
}

/** Every range of a download shares its signal (and the URLs asked for ahead listen to it too). */
function newController(): AbortController {
  const c = new AbortController();
  setMaxListeners(0, c.signal);
  return c;
}
