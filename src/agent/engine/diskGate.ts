// One disk's reader and writer slots. Every read of a file being sent and every
// write of a file being received takes a slot of its disk for that one operation
// (a chunk read, a batch written), never across a network wait: so a read can
// never wait on a write that waits on a read, and a wait lasts a few operations.
//
// - max_concurrent_readers / max_concurrent_writers: slots of each kind (0: no limit).
// - prioritize_writes: a read starts only while no write runs or waits; writes go
//   as their own limit allows. prioritize_reads is the reverse. mixed_read_writes
//   lets both kinds go side by side, each within its own limit.
// - Waiters of a kind start in the order they came (FIFO).
// - A waiter held back by the other kind's priority (not by its own limit) for
//   longer than `maxHoldMs` goes anyway, once: a steady stream of the favoured
//   kind slows the other down, it does not stop it.
import type { DiskPriority } from '../../api/agent/disks.js';

export type DiskOp = 'read' | 'write';

export interface DiskLimits {
  priority: DiskPriority;
  /** 0: no limit. */
  max_concurrent_readers: number;
  max_concurrent_writers: number;
}

export const NO_LIMITS: DiskLimits = { priority: 'mixed_read_writes', max_concurrent_readers: 0, max_concurrent_writers: 0 };

/** What a gate holds now, and what it has counted since the agent started. */
export interface GateCounts {
  readers: number;
  writers: number;
  waiting_readers: number;
  waiting_writers: number;
  /** Reads and writes that took a slot. */
  reads: number;
  writes: number;
  /** Reads that started while a write ran or waited on the disk; writes that started while a read ran or waited. */
  reads_beside_writes: number;
  writes_beside_reads: number;
  /** Reads that waited because writes ran or waited and the disk favours writes; writes held back for reads likewise. */
  reads_held_for_writes: number;
  writes_held_for_reads: number;
  /** The most readers and writers at once. */
  peak_readers: number;
  peak_writers: number;
}

interface Waiter {
  since: number;
  go(): void;
}

export class DiskGate {
  private limits: DiskLimits;
  private readonly waiting: Record<DiskOp, Waiter[]> = { read: [], write: [] };
  private readonly running: Record<DiskOp, number> = { read: 0, write: 0 };
  private readonly counted = { reads: 0, writes: 0, reads_beside_writes: 0, writes_beside_reads: 0, reads_held_for_writes: 0, writes_held_for_reads: 0, peak_readers: 0, peak_writers: 0 };
  private holdTimer: NodeJS.Timeout | undefined;

  constructor(
    limits: DiskLimits = NO_LIMITS,
    private readonly maxHoldMs = 2000,
    private readonly now: () => number = Date.now,
  ) {
    this.limits = { ...limits };
  }

  get settings(): DiskLimits {
    return { ...this.limits };
  }

  /** New limits apply at once, to those waiting too. */
  configure(limits: DiskLimits): void {
    this.limits = { ...limits };
    this.admit();
  }

  /** Runs `fn` in a slot of kind `op`; the slot is free again once its promise settles. */
  run<T>(op: DiskOp, fn: () => Promise<T>): Promise<T> {
    // The common case, a free slot: one `then` more than the operation alone (docs/benchmarks.md, "Disk gates").
    if (this.waiting[op].length === 0 && this.room(op, false)) {
      this.enter(op);
      return this.inSlot(op, fn);
    }
    // Held by the other kind's priority, not by its own queue or limit.
    if (this.waiting[op].length === 0 && this.room(op, true)) this.counted[op === 'read' ? 'reads_held_for_writes' : 'writes_held_for_reads']++;
    return new Promise<void>((go) => this.waiting[op].push({ since: this.now(), go })).then(() => this.inSlot(op, fn));
  }

  private inSlot<T>(op: DiskOp, fn: () => Promise<T>): Promise<T> {
    let p: Promise<T>;
    try {
      p = fn();
    } catch (err) {
      this.leave(op);
      return Promise.reject(err);
    }
    return p.then(
      (v) => (this.leave(op), v),
      (err: unknown) => {
        this.leave(op);
        throw err;
      },
    );
  }

  counts(): GateCounts {
    return {
      readers: this.running.read,
      writers: this.running.write,
      waiting_readers: this.waiting.read.length,
      waiting_writers: this.waiting.write.length,
      ...this.counted,
    };
  }

  /** Whether an `op` may start now; `overdue` lifts the other kind's priority (not the limit). */
  private room(op: DiskOp, overdue: boolean): boolean {
    const max = op === 'read' ? this.limits.max_concurrent_readers : this.limits.max_concurrent_writers;
    if (max > 0 && this.running[op] >= max) return false;
    if (overdue) return true;
    const other: DiskOp = op === 'read' ? 'write' : 'read';
    const yields = (op === 'read' && this.limits.priority === 'prioritize_writes') || (op === 'write' && this.limits.priority === 'prioritize_reads');
    return !yields || (this.running[other] === 0 && this.waiting[other].length === 0);
  }

  private enter(op: DiskOp): void {
    const other: DiskOp = op === 'read' ? 'write' : 'read';
    const beside = this.running[other] > 0 || this.waiting[other].length > 0;
    const n = ++this.running[op];
    if (op === 'read') {
      this.counted.reads++;
      if (beside) this.counted.reads_beside_writes++;
      if (n > this.counted.peak_readers) this.counted.peak_readers = n;
    } else {
      this.counted.writes++;
      if (beside) this.counted.writes_beside_reads++;
      if (n > this.counted.peak_writers) this.counted.peak_writers = n;
    }
  }

  private leave(op: DiskOp): void {
    this.running[op]--;
    this.admit();
  }

  /** Starts the waiters that may start, favoured kind first, each kind in order. */
  private admit(): void {
    const first: DiskOp = this.limits.priority === 'prioritize_reads' ? 'read' : 'write';
    const order: DiskOp[] = [first, first === 'read' ? 'write' : 'read'];
    const now = this.now();
    for (const op of order) {
      const queue = this.waiting[op];
      while (queue.length > 0 && this.room(op, now - queue[0]!.since >= this.maxHoldMs)) {
        const w = queue.shift()!;
        this.enter(op);
        w.go();
      }
    }
    this.armHold();
  }

  /** While a kind waits only for the other's priority, look again once its head is overdue. */
  private armHold(): void {
    if (this.holdTimer) return;
    // A head blocked by its own limit needs no timer: a slot of its kind coming free admits it.
    const heads = (['read', 'write'] as const).filter((op) => this.waiting[op].length > 0 && this.room(op, true)).map((op) => this.waiting[op][0]!.since);
    if (heads.length === 0) return;
    const due = Math.max(0, Math.min(...heads) + this.maxHoldMs - this.now());
    this.holdTimer = setTimeout(() => {
      this.holdTimer = undefined;
      this.admit();
    }, due);
    this.holdTimer.unref();
  }
}
