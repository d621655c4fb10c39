// One file of a running upload, in memory: which parts are still to send, which
// wait for a retry, which are in flight, and the blueprints known for them.
// Rebuilt from SQLite at every (re)start, so it holds nothing that must survive.
import type { Blueprint } from '../../api/hosted/blueprint.js';
import type { PartRow, UploadFileRow } from '../store/uploadStore.js';
import { PermanentError } from './retry.js';

export interface KnownBlueprint {
  bp: Blueprint;
  /** The file's blueprint generation it belongs to; a 403 starts a new one. */
  gen: number;
}

/** The chunk size a file uploads with: the wish, clamped to the store's limits, raised to fit max_chunk_count. */
export function chooseChunkSize(wish: number, fileSize: number, limits: { min: number; max: number; maxCount: number }): number {
  let size = Math.min(Math.max(wish, limits.min), limits.max);
  if (Math.ceil(fileSize / size) > limits.maxCount) size = Math.ceil(fileSize / limits.maxCount);
  if (size > limits.max) throw new PermanentError(`a file of ${fileSize} bytes does not fit in ${limits.maxCount} parts of at most ${limits.max} bytes`);
  return size;
}

export class FileTransfer {
  readonly done = new Map<number, PartRow>();
  readonly blueprints = new Map<number, KnownBlueprint>();
  /** Failed tries in a row, per part. */
  readonly attempts = new Map<number, number>();
  gen = 0;
  /** Bumped when the file starts over; answers that belong to an older epoch are dropped. */
  epoch = 0;
  /** 403s (expired blueprints) in a row. */
  expiredInRow = 0;
  /** Times this file was started over in this run (its upload vanished from the store). */
  resets = 0;
  fetching = false;
  finalizing = false;
  /** The file's one part was sent in this run from one read checked against the walk (wholeReads.ts). */
  readWhole = false;
  /** Parts of it being sent now. */
  inFlight = 0;
  /** No part of it is handed out: its growth is being checked before its size is fixed (growingFile.ts). */
  holding = false;
  /** A growing file: the highest part queued so far (each a full chunk written). */
  queuedUpTo = 0;
  private queue: number[] = [];
  private head = 0;
  private retries: { part: number; readyAt: number }[] = [];

  constructor(
    public row: UploadFileRow,
    parts: PartRow[] = [],
  ) {
    for (const p of parts) this.done.set(p.part_number, p);
  }

  get partCount(): number {
    return this.row.part_count ?? 0;
  }

  /** Still being written: its size, and so its part count, are not known yet. */
  get growing(): boolean {
    return this.row.growing_quiet_ms != null;
  }

  /** The last part number that may be sent now: of a growing file, the full parts written so far. */
  get lastPart(): number {
    return this.growing ? this.queuedUpTo : this.partCount;
  }

  /** Queues every part without a record; call once the file is registered. A growing file's parts are queued as they are written (extend). */
  plan(): void {
    this.queue = [];
    this.head = 0;
    this.retries = [];
    this.queuedUpTo = 0;
    if (!this.growing) this.extend(this.partCount);
  }

  /** Queues the parts up to `to` not queued yet and without a record. */
  extend(to: number): void {
    for (let n = this.queuedUpTo + 1; n <= to; n++) if (!this.done.has(n)) this.queue.push(n);
    this.queuedUpTo = Math.max(this.queuedUpTo, to);
  }

  /** Forgets everything but the file itself: it will be registered again. */
  forget(): void {
    this.done.clear();
    this.blueprints.clear();
    this.attempts.clear();
    this.queue = [];
    this.head = 0;
    this.retries = [];
    this.gen++;
    this.epoch++;
    this.fetching = false;
    this.finalizing = false;
    this.readWhole = false;
    this.holding = false;
    this.queuedUpTo = 0;
  }

  range(n: number): { start: number; length: number } {
    const chunk = this.row.chunk_size!;
    const start = (n - 1) * chunk;
    // A growing file's parts are queued only once they are whole.
    return { start, length: this.growing ? chunk : Math.min(chunk, this.row.size - start) };
  }

  allDone(): boolean {
    return !this.growing && this.done.size === this.partCount;
  }

  /** The next part ready to go (its blueprint known, its retry time come), taken out of the queue. */
  take(now: number): number | undefined {
    for (let i = 0; i < this.retries.length; i++) {
      const r = this.retries[i]!;
      if (r.readyAt <= now && this.blueprints.has(r.part)) {
        this.retries.splice(i, 1);
        return r.part;
      }
    }
    const n = this.queue[this.head];
    if (n !== undefined && this.blueprints.has(n)) {
      this.head++;
      return n;
    }
    return undefined;
  }

  /** When the first part still waiting out a back-off after `now` is due; Infinity when none waits. */
  nextRetryAt(now: number): number {
    let at = Infinity;
    for (const r of this.retries) if (r.readyAt > now && r.readyAt < at) at = r.readyAt;
    return at;
  }

  /** Parts waiting out a back-off are due now. */
  retryNow(): void {
    for (const r of this.retries) r.readyAt = 0;
  }

  /** Puts a part back: at once, or after its back-off (`readyAt` in performance.now() time). */
  requeue(part: number, readyAt: number): void {
    this.retries.push({ part, readyAt });
  }

  /**
   * The first part to ask blueprints from, or undefined when none is needed yet:
   * a waiting part without one, or the queue running short of `batch / 2` ahead.
   */
  needsBlueprintsFrom(batch: number): number | undefined {
    if (this.fetching) return undefined;
    let lowest: number | undefined;
    for (const r of this.retries) if (!this.blueprints.has(r.part) && (lowest === undefined || r.part < lowest)) lowest = r.part;
    const lookahead = Math.min(this.queue.length, this.head + Math.max(1, Math.floor(batch / 2)));
    for (let i = this.head; i < lookahead; i++) {
      const n = this.queue[i]!;
      if (!this.blueprints.has(n)) {
        if (lowest === undefined || n < lowest) lowest = n;
        break;
      }
    }
    return lowest;
  }
}
