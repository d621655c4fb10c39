// Large bodies written past the page cache (O_DIRECT). Written through it, every
// received GiB costs the kernel a copy into fresh page-cache pages (1-5 CPU-s
// per GiB on a VM whose host reclaims freed memory: docs/benchmarks.md), the
// hash worker a copy back out, and every other program on the machine its
// cached files, for bytes nobody reads soon. Here the received chunks are copied
// once, into reused 1 MiB buffers on block boundaries, each written straight to
// the device and then moved to the hash worker (src/hash/md5Workers.ts, fed
// jobs), which hashes it and moves it back. A body holds at most
// FED_BUFFERS_PER_JOB buffers; past that its source waits.
//
// Only where the file system takes such writes: tried once per directory with
// one block (some file systems refuse O_DIRECT, such as tmpfs before Linux 6.6,
// and platforms without it have no flag), and
// only with the pagecache addon, which finds block boundaries. Elsewhere, and
// for bodies under a buffer's size, fileSink.ts writes through the page cache.
// FERRY_STORE_DIRECT_IO=0 turns it off.

import { closeSync, constants, ftruncateSync, openSync, unlinkSync, write, writeSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { promisify } from 'node:util';
import { FED_BUFFERS_PER_JOB, startFedMd5, type FedMd5Job } from '../hash/md5Workers.js';
import { alignedBuffer } from '../native/alignedBuffers.js';
import { newId } from './disk.js';
import { closeOnce, type BodySink, type Received, type SinkHooks } from './fileSink.js';

/** A buffer's size: each write but a body's last is one whole buffer. */
export const DIRECT_BLOCK = 1 << 20;
/** Buffers start, and writes start and end, on this boundary: a multiple of every common logical block size. */
const ALIGN = 4096;
/** Free buffers kept for the next bodies (8 bodies' worth); more go to the garbage collector. */
const KEEP = 8 * FED_BUFFERS_PER_JOB;
const writeAt = promisify(write);

const free: Buffer[] = [];
const works = new Map<string, boolean>();

function takeBuffer(): Buffer | undefined {
  return free.pop() ?? alignedBuffer(DIRECT_BLOCK, ALIGN);
}

function keepBuffer(buf: Buffer): void {
  if (free.length < KEEP) free.push(buf);
}

const openFlags = (direct: number): number => constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | direct;

/** Whether files in `dir` can be written past the page cache; tried once per directory. */
export function directIoWorks(dir: string): boolean {
  let answer = works.get(dir);
  if (answer === undefined) {
    answer = tryDirectWrite(dir);
    works.set(dir, answer);
  }
  return answer;
}

function tryDirectWrite(dir: string): boolean {
  const direct = constants.O_DIRECT as number | undefined;
  if (!direct || process.env.FERRY_STORE_DIRECT_IO === '0') return false;
  const buf = takeBuffer();
  if (!buf) return false;
  const path = join(dir, `direct-io-${newId()}`);
  try {
    const fd = openSync(path, openFlags(direct));
    try {
      writeSync(fd, buf, 0, ALIGN, 0);
    } finally {
      closeSync(fd);
    }
    return true;
  } catch {
    return false;
  } finally {
    keepBuffer(buf);
    try {
      unlinkSync(path);
    } catch {
      // never created
    }
  }
}

/** A sink writing `path` (created exclusively, now) past the page cache; undefined where its directory does not allow that. */
export function directSink(path: string, hooks: SinkHooks): BodySink | undefined {
  if (!directIoWorks(dirname(path))) return undefined;
  const fd = openSync(path, openFlags(constants.O_DIRECT));
  return new DirectSink(fd, closeOnce(fd), hooks);
}

class DirectSink implements BodySink {
  private readonly job: FedMd5Job;
  /** The buffer being filled, and its bytes. */
  private buf: Buffer | undefined;
  private filled = 0;
  private size = 0;
  /** Buffers this body holds: filling, being written, or in the hash worker. */
  private held = 0;
  private paused = false;
  private stopped = false;
  private writes: Promise<void> = Promise.resolve();

  constructor(
    private readonly fd: number,
    private readonly close: () => void,
    private readonly hooks: SinkHooks,
  ) {
    this.job = startFedMd5((buf) => this.returned(buf));
  }

  write(chunk: Buffer): boolean {
    for (let at = 0; at < chunk.length; ) {
      if (!this.buf) {
        // The directory's check took one, so the addon that aligns them is loaded.
        this.buf = takeBuffer()!;
        this.held++;
      }
      const n = chunk.copy(this.buf, this.filled, at);
      at += n;
      this.filled += n;
      this.size += n;
      if (this.filled === DIRECT_BLOCK) this.flush();
    }
    this.paused = this.held >= FED_BUFFERS_PER_JOB;
    return !this.paused;
  }

  /** Writes the buffer being filled, then feeds it to the hash. Only a body's last write is short: padded to a block, cut at end(). */
  private flush(): void {
    const buf = this.buf!;
    const length = this.filled;
    const at = this.size - length;
    this.buf = undefined;
    this.filled = 0;
    this.writes = this.writes.then(async () => {
      if (!this.stopped) await writeAt(this.fd, buf, 0, Math.ceil(length / ALIGN) * ALIGN, at);
      if (this.stopped) this.returned(buf);
      else this.job.feed(buf, length);
    });
    this.writes.catch((err: Error) => this.hooks.fail(err));
  }

  private returned(buf: Buffer): void {
    this.held--;
    keepBuffer(buf);
    if (this.paused && this.held < FED_BUFFERS_PER_JOB) {
      this.paused = false;
      if (!this.stopped) this.hooks.resume();
    }
  }

  async end(): Promise<Received> {
    if (this.filled > 0) this.flush();
    await this.writes;
    // The last write was padded to a whole block.
    if (this.size % ALIGN !== 0) ftruncateSync(this.fd, this.size);
    const md5 = await this.job.finish();
    this.close();
    return { size: this.size, md5 };
  }

  async abort(): Promise<void> {
    this.stopped = true;
    this.job.cancel();
    if (this.buf) {
      this.returned(this.buf);
      this.buf = undefined;
    }
    await this.writes.catch(() => undefined);
    this.close();
  }
}
