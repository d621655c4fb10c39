// Durable commits that do not stall the event loop. The agent's SQLite runs in
// WAL mode with synchronous=NORMAL: a commit write()s its frames to the -wal
// file but does not fsync it, so it survives a crash or kill -9 at once and
// power loss only once flushed. A caller that must not go on before its write
// would survive power loss (a part is recorded before it counts) awaits
// synced(): one fdatasync of the -wal file on the thread pool covers every
// commit made before it began, so writes made close together share one flush
// (group commit) instead of each blocking the event loop in its own fsync.
// A flush also begins no sooner than `gapMs` after the one before began: a flush
// is a trip to the thread pool, which costs the event loop ~100 µs on a VM, and
// a folder of small files would otherwise flush once per file (docs/benchmarks.md).
// SQLite still syncs the WAL before every checkpoint and the database after it.
import fs from 'node:fs';

export class WalSync {
  private fd: number | undefined;
  /** The flush under way; it may have begun before the caller's commit. */
  private running: Promise<void> | undefined;
  /** The flush every caller joins while one is running: it begins after the running one. */
  private next: Promise<void> | undefined;
  private closed = false;
  /** When the last flush began (performance.now()). */
  private lastStart = -Infinity;

  constructor(
    private readonly walPath: string,
    private readonly datasync: typeof fs.fdatasync = fs.fdatasync,
    private readonly gapMs = 2,
  ) {}

  /** Resolves once every commit made before the call is on disk. */
  synced(): Promise<void> {
    if (this.next) return this.next;
    const wait = this.lastStart + this.gapMs - performance.now();
    if (!this.running && wait <= 0) return this.flushNow();
    const gap = wait > 0 ? reached(this.lastStart + this.gapMs) : undefined;
    this.next = Promise.all([this.running?.catch(() => undefined), gap]).then(() => {
      this.next = undefined;
      return this.flushNow();
    });
    return this.next;
  }

  /** Closes the file once the flush under way (if any) is done. */
  async close(): Promise<void> {
    this.closed = true;
    await Promise.allSettled([this.running, this.next]);
    if (this.fd !== undefined) fs.closeSync(this.fd);
    this.fd = undefined;
  }

  private flushNow(): Promise<void> {
    const p: Promise<void> = new Promise<void>((resolve, reject) => {
      if (this.closed) return reject(new Error('the agent database is closed'));
      // Opened for writing: Windows refuses to flush a read-only handle. SQLite keeps the
      // -wal file (same inode) while a connection is open; it only rewrites it from the start.
      this.fd ??= fs.openSync(this.walPath, 'r+');
      this.lastStart = performance.now();
      this.datasync(this.fd, (err) => (err ? reject(err) : resolve()));
    }).finally(() => {
      if (this.running === p) this.running = undefined;
    });
    this.running = p;
    return p;
  }
}

/**
 * Resolves once performance.now() reaches `t`. A timer counts whole
 * milliseconds of the event loop's clock, so it can fire up to 1 ms before
 * then: it is set again for what is left.
 */
function reached(t: number): Promise<void> {
  return new Promise<void>((ok) => {
    const check = () => {
      const left = t - performance.now();
      if (left > 0) setTimeout(check, Math.ceil(left));
      else ok();
    };
    check();
  });
}
