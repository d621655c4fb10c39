// The files of an upload run still being written (a watch folder's
// `growing_files`). Each is registered without a size (uploadRegister.ts) and
// watched here: every full part written is queued as soon as it exists, and once
// the file's size and time have held still for its quiet time its size is
// fixed and its last part goes. Before that, every part sent while it grew is
// read again and compared with the MD5 the store answered for it (its ETag):
// a writer that goes back (a video header written last) gets those parts sent
// again, so the object is the file's final bytes. A file that shrinks or is
// replaced (another inode) starts over from zero on the service.
import { createHash } from 'node:crypto';
import { createReadStream } from 'node:fs';
import fs from 'node:fs/promises';
import path from 'node:path';
import type { AgentDb } from '../store/db.js';
import { fixGrowingFile, forgetPart, growTo } from '../store/growingFiles.js';
import type { FileTransfer } from './uploadFile.js';
import { FileChangedError } from './partUpload.js';

/** S3's most parts of one upload: a file that grows beyond them cannot be sent in its chunk size. */
const MAX_PARTS = 10_000;

/** What the watch needs of its run. */
export interface GrowthRun {
  running(): boolean;
  track<T>(p: Promise<T>): Promise<T>;
  fail(err: unknown): void;
  /** New parts are queued: they may go. */
  wake(): void;
  /** The file shrank or was replaced: register it again and send it from zero. */
  startOver(f: FileTransfer, why: string): void;
  /** The file's size is fixed: its last parts are queued (or it is finalized at once). */
  fixed(f: FileTransfer): void;
  /** The file's size so far changed (the upload's size follows it). */
  grew(f: FileTransfer): void;
}

interface Seen {
  size: number;
  mtimeMs: number;
  ino: number | undefined;
  /** When its size or time last moved (performance.now()). */
  changedAt: number;
  looking: boolean;
}

const md5Of = (file: string, start: number, length: number) =>
  new Promise<string>((resolve, reject) => {
    const h = createHash('md5');
    if (length === 0) return resolve(h.digest('hex'));
    createReadStream(file, { start, end: start + length - 1 })
      .on('data', (c) => h.update(c))
      .on('error', reject)
      .on('end', () => resolve(h.digest('hex')));
  });

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

export class Growth {
  private readonly files = new Map<FileTransfer, Seen>();
  private timer: NodeJS.Timeout | undefined;

  constructor(
    private readonly db: AgentDb,
    private readonly uploadId: string,
    private readonly run: GrowthRun,
  ) {}

  /** The inode a growing file's parts must be read from, once seen. */
  inoOf(f: FileTransfer): number | undefined {
    return this.files.get(f)?.ino;
  }

  /** A growing file is registered: watch it. Its first look comes at once (a restart may find parts to queue). */
  add(f: FileTransfer): void {
    if (this.files.has(f)) return;
    this.files.set(f, { size: -1, mtimeMs: -1, ino: undefined, changedAt: performance.now(), looking: false });
    this.look(f);
    this.arm();
  }

  stop(): void {
    clearTimeout(this.timer);
    this.timer = undefined;
    this.files.clear();
  }

  forget(f: FileTransfer): void {
    this.files.delete(f);
  }

  /** Looks often enough to queue parts as they are written and to see a quiet time end. */
  private periodMs(): number {
    let quiet = Infinity;
    for (const f of this.files.keys()) quiet = Math.min(quiet, f.row.growing_quiet_ms ?? Infinity);
    return Math.min(1_000, Math.max(50, Math.floor(quiet / 4)));
  }

  private arm(): void {
    if (this.timer || !this.files.size || !this.run.running()) return;
    this.timer = setTimeout(() => {
      this.timer = undefined;
      for (const f of this.files.keys()) this.look(f);
      this.arm();
    }, this.periodMs());
  }

  private look(f: FileTransfer): void {
    const seen = this.files.get(f);
    if (!seen || seen.looking) return;
    seen.looking = true;
    void this.run
      .track(this.lookAt(f, seen))
      .catch(() => {}) // track fails the run
      .finally(() => (seen.looking = false));
  }

  /** Bytes of the file its parts already depend on (queued or sent). */
  private covered(f: FileTransfer): number {
    let last = f.queuedUpTo;
    for (const n of f.done.keys()) last = Math.max(last, n);
    return last * f.row.chunk_size!;
  }

  private async lookAt(f: FileTransfer, seen: Seen): Promise<void> {
    const epoch = f.epoch;
    const st = await fs.stat(f.row.local_path).catch((err: NodeJS.ErrnoException) => err);
    if (!this.run.running() || epoch !== f.epoch || this.files.get(f) !== seen) return;
    if (st instanceof Error) {
      if (st.code === 'ENOENT' || st.code === 'ENOTDIR') {
        return this.run.fail(new FileChangedError(`${path.basename(f.row.local_path)} was moved or deleted while it was being written and sent (it was at ${f.row.local_path})`));
      }
      throw st;
    }
    if ((seen.ino !== undefined && st.ino !== seen.ino) || st.size < this.covered(f)) {
      this.files.delete(f);
      return this.run.startOver(f, seen.ino !== undefined && st.ino !== seen.ino ? 'it was replaced by another file' : `it shrank to ${st.size} bytes`);
    }
    seen.ino = st.ino;
    if (st.size !== seen.size || st.mtimeMs !== seen.mtimeMs) {
      if (st.size !== seen.size) {
        growTo(this.db, this.uploadId, f.row.idx, st.size);
        f.row = { ...f.row, size: st.size };
        this.run.grew(f);
      }
      seen.size = st.size;
      seen.mtimeMs = st.mtimeMs;
      seen.changedAt = performance.now();
    }
    const full = Math.floor(st.size / f.row.chunk_size!);
    if (full > MAX_PARTS) {
      return this.run.fail(new FileChangedError(`${f.row.local_path} grew beyond ${MAX_PARTS} parts of ${f.row.chunk_size} bytes: raise the chunk size to send it`));
    }
    if (full > f.queuedUpTo) {
      f.extend(full);
      this.run.wake();
    }
    if (performance.now() - seen.changedAt >= f.row.growing_quiet_ms!) await this.fix(f, seen, epoch);
  }

  /**
   * The file held still for its quiet time. No part is handed out while its
   * sent parts are read again; if it moved meanwhile, it grows on.
   */
  private async fix(f: FileTransfer, seen: Seen, epoch: number): Promise<void> {
    f.holding = true;
    try {
      for (let i = 0; f.inFlight > 0 && i < 100_000; i++) {
        await sleep(20);
        if (!this.run.running() || epoch !== f.epoch) return;
      }
      const stale: number[] = [];
      for (const [n, p] of f.done) {
        const md5 = await md5Of(f.row.local_path, (n - 1) * f.row.chunk_size!, p.size);
        if (!this.run.running() || epoch !== f.epoch) return;
        // An ETag that is not an MD5 (some stores) proves nothing: that part goes again too.
        if (p.etag.replace(/"/g, '').toLowerCase() !== md5) stale.push(n);
      }
      const st = await fs.stat(f.row.local_path);
      if (!this.run.running() || epoch !== f.epoch) return;
      if (st.size !== seen.size || st.mtimeMs !== seen.mtimeMs || st.ino !== seen.ino) {
        seen.changedAt = performance.now(); // written meanwhile: it grows on, and is looked at again
        return;
      }
      for (const n of stale) {
        forgetPart(this.db, this.uploadId, f.row.idx, n);
        f.done.delete(n);
      }
      const partCount = st.size === 0 ? 0 : Math.ceil(st.size / f.row.chunk_size!);
      fixGrowingFile(this.db, this.uploadId, f.row.idx, { size: st.size, mtime_ms: st.mtimeMs, part_count: partCount });
      await this.db.synced();
      if (!this.run.running() || epoch !== f.epoch) return;
      this.files.delete(f);
      const wasQueued = f.queuedUpTo;
      f.row = { ...f.row, size: st.size, mtime_ms: st.mtimeMs, part_count: partCount, growing_quiet_ms: null };
      f.extend(partCount);
      for (const n of stale) if (n <= wasQueued) f.requeue(n, 0);
      f.holding = false;
      this.run.fixed(f);
    } finally {
      if (epoch === f.epoch && this.files.get(f) === seen) f.holding = false;
    }
  }
}
