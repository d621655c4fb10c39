// Where a received body's bytes go: a temp file, and an MD5 of them. Two ways
// (body.ts picks): through the page cache (this file), or past it
// (directSink.ts) for large bodies where the file system allows.
//
// Through the page cache, chunks go to the file in ~1 MiB positional writev
// batches (no stream layers in between: at loopback speeds their per-chunk cost
// shows), and a worker re-reads the written bytes to hash them
// (src/hash/md5Workers.ts). A body under 1 MiB never leaves memory before it is
// whole: it is hashed here and written in one call.

import { createHash } from 'node:crypto';
import { closeSync, openSync, writev, writevSync } from 'node:fs';
import { promisify } from 'node:util';
import { startMd5, type Md5Job } from '../hash/md5Workers.js';

const FLUSH_BYTES = 1 << 20;
/** Writes queued before the source is paused (backpressure at ~4 MiB per body). */
const MAX_PENDING_WRITES = 4;
const writevAt = promisify(writev);

export interface Received {
  size: number;
  md5: Buffer;
}

export interface SinkHooks {
  /** The source may flow again, after write() answered false. */
  resume(): void;
  /** A write failed; the body is lost. */
  fail(err: Error): void;
}

export interface BodySink {
  /** Takes a chunk, which must not change until written (a sink may hold it); false: pause the source until hooks.resume(). */
  write(chunk: Buffer): boolean;
  /** The body is whole: waits for its writes and its MD5, and closes the file. */
  end(): Promise<Received>;
  /** Stops: waits for the writes under way and closes the file, which the caller removes. */
  abort(): Promise<void>;
}

/** Closes `fd` once, however often it is called: the number may already name another file of this process. */
export function closeOnce(fd: number): () => void {
  let open = true;
  return () => {
    if (open) {
      open = false;
      closeSync(fd);
    }
  };
}

/** Writes into `path` (created exclusively, now) through the page cache. */
export function cachedSink(path: string, hooks: SinkHooks): BodySink {
  // Opened synchronously, as the store's other metadata calls (disk.ts), before the body flows.
  const fd = openSync(path, 'wx');
  return new CachedSink(path, fd, closeOnce(fd), hooks);
}

class CachedSink implements BodySink {
  private job: Md5Job | undefined;
  private batch: Buffer[] = [];
  private batchBytes = 0;
  private queued = 0;
  private pending = 0;
  private paused = false;
  private writes: Promise<void> = Promise.resolve();

  constructor(
    private readonly path: string,
    private readonly fd: number,
    private readonly close: () => void,
    private readonly hooks: SinkHooks,
  ) {}

  write(chunk: Buffer): boolean {
    this.batch.push(chunk);
    this.batchBytes += chunk.length;
    if (this.batchBytes >= FLUSH_BYTES) this.flush();
    this.paused = this.pending >= MAX_PENDING_WRITES;
    return !this.paused;
  }

  private flush(): void {
    const buffers = this.batch;
    const at = this.queued;
    const size = this.batchBytes;
    this.batch = [];
    this.batchBytes = 0;
    this.queued += size;
    this.pending++;
    const job = (this.job ??= startMd5(this.path));
    this.writes = this.writes.then(async () => {
      await writevAt(this.fd, buffers, at);
      this.pending--;
      job.grow(at + size);
      if (this.paused && this.pending < MAX_PENDING_WRITES) {
        this.paused = false;
        this.hooks.resume();
      }
    });
    this.writes.catch((err: Error) => this.hooks.fail(err));
  }

  async end(): Promise<Received> {
    if (this.job && this.batchBytes > 0) this.flush();
    await this.writes;
    let md5: Buffer;
    if (this.job) {
      md5 = await this.job.finish(this.queued);
    } else {
      // Small body, still whole in memory: hash it here and write it at once.
      const h = createHash('md5');
      for (const b of this.batch) h.update(b);
      md5 = h.digest();
      if (this.batch.length > 0) writevSync(this.fd, this.batch, 0);
      this.queued = this.batchBytes;
    }
    this.close();
    return { size: this.queued, md5 };
  }

  async abort(): Promise<void> {
    const cancelled = this.job?.cancel();
    await this.writes.catch(() => undefined);
    await cancelled;
    this.close();
  }
}
