// The preparation pool of one upload run: a few workers register files on the
// service (and start their multipart uploads) ahead of the parts, keeping a
// window of files prepared and no more. Apart from the run (uploadJob.ts) because
// it is its own flow: workers that wait for room in the window, while the run
// hands out the parts of the files already in it.
import type { AgentDb } from '../store/db.js';
import { setFileRegistration, type UploadRow } from '../store/uploadStore.js';
import type { RetryScope } from './retry.js';
import type { FileTransfer } from './uploadFile.js';
import { registerOnService, type ServiceSide } from './uploadRegister.js';
import type { FileCalls } from './fileCalls.js';
import type { PendingFiles } from './pendingFiles.js';

/**
 * Files registered at once. A small file is mostly round trips (register, PUT,
 * finalize), so many of them must be on their way together for the service and
 * the store, not the latency, to set the pace; and registrations that come
 * together go in one request (fileCalls.ts), at most one every
 * PACKAGE_CALL_GAP_MS, so a batch must find many files waiting.
 */
const PREP_WORKERS = 64;

export interface PrepSide extends ServiceSide {
  db: AgentDb;
  concurrency: number;
  changed(id: string, kind: 'state' | 'progress', file?: number): void;
}

/** What the pool needs of its run. */
export interface PrepRun {
  /** False once the run stopped: nothing more is started, and answers are dropped. */
  running(): boolean;
  track<T>(p: Promise<T>): Promise<T>;
  fail(err: unknown): void;
  /** The file is prepared and in the window: its parts may go (or it is finished at once). */
  ready(f: FileTransfer): void;
}

export class PrepPool {
  /** The files prepared and not yet finished: the ones whose parts the run hands out. */
  readonly active: FileTransfer[] = [];
  private workers = 0;
  private slotWaiters: (() => void)[] = [];

  constructor(
    private readonly e: PrepSide,
    private readonly u: UploadRow,
    private readonly calls: FileCalls,
    private readonly scope: RetryScope & { signal: AbortSignal },
    private readonly run: PrepRun,
    /** Files still to prepare, in order, read from SQLite as the window moves. */
    private readonly queue: PendingFiles,
  ) {}

  private get window(): number {
    // A file stays in the window until its finalize, which waits for its gathered request.
    return Math.max(PREP_WORKERS, this.e.concurrency * 8);
  }

  /** Lets waiting workers look again: the window has room, or the run stopped. */
  wakeWorkers(): void {
    const waiters = this.slotWaiters;
    this.slotWaiters = [];
    for (const w of waiters) w();
  }

  ensureWorkers(): void {
    while (this.run.running() && this.workers < PREP_WORKERS && !this.queue.empty) {
      this.workers++;
      this.run.track(this.prepWorker().finally(() => this.workers--));
    }
  }

  /** The file is finished: it leaves the window. */
  finished(f: FileTransfer): void {
    this.active.splice(this.active.indexOf(f), 1);
    this.wakeWorkers();
  }

  /** The file starts over: it leaves the window and is prepared again first. */
  again(f: FileTransfer): void {
    const i = this.active.indexOf(f);
    if (i >= 0) this.active.splice(i, 1);
    this.queue.putBack(f);
    this.ensureWorkers();
    this.wakeWorkers();
  }

  private async prepWorker(): Promise<void> {
    while (this.run.running()) {
      if (this.active.length >= this.window) {
        await new Promise<void>((r) => this.slotWaiters.push(r));
        continue;
      }
      const f = this.queue.next();
      if (!f) return;
      try {
        await this.prepare(f);
      } catch (err) {
        return this.run.fail(err);
      }
    }
  }

  private async prepare(f: FileTransfer): Promise<void> {
    const epoch = f.epoch;
    if (!f.row.file_id || (f.row.kind === 'file' && !f.row.s3_upload_id)) await this.register(f);
    if (!this.run.running() || epoch !== f.epoch) return;
    f.plan();
    this.active.push(f);
    this.run.ready(f);
  }

  private async register(f: FileTransfer): Promise<void> {
    const { registration: reg, blueprints } = await registerOnService(this.e, this.calls, this.u, f.row, this.scope);
    if (!this.run.running()) return;
    setFileRegistration(this.e.db, this.u.id, f.row.idx, reg);
    f.row = { ...f.row, ...reg };
    this.e.changed(this.u.id, 'progress', f.row.idx);
    blueprints.slice(0, f.growing ? blueprints.length : f.partCount).forEach((bp, i) => f.blueprints.set(i + 1, { bp, gen: f.gen }));
    // Lost to power loss, a registration is only made again (the service lets a pending entry
    // give way), and a file's first part flushes it anyway. An entry without parts is finalized
    // on the service next (a folder already is): that one must be on disk before.
    if (!reg.part_count) await this.e.db.synced();
  }
}
