// MD5 of file byte ranges, off the event loop. MD5 runs at ~0.5-0.7 GB/s per
// core, slower than loopback HTTP, so hashing on the main thread would cap a
// transfer at that speed (the embedded store receiving bodies from many clients).
// Workers instead re-read bytes that were just written or read (they are in the
// page cache, so the read is a cheap copy) and hash them as the caller reports
// progress; only offsets cross the thread boundary, never data. A caller whose
// bytes are not in the page cache (written with O_DIRECT) feeds its buffers
// instead: they move to the worker and come back once hashed, never copied. With
// the md5lanes addon one worker hashes all jobs together (src/hash/md5Lanes.ts).

import { availableParallelism } from 'node:os';
import type { Worker } from 'node:worker_threads';
import { LazyWorker } from '../threads/lazyWorker.js';
import { md5LanesAddonFile } from './md5Lanes.js';

/** Buffers a fed job's owner may hold at once: filling, being written, or waiting to be hashed. */
export const FED_BUFFERS_PER_JOB = 8;
/** Fed slices of one job that start a round without waiting for the others; fewer than FED_BUFFERS_PER_JOB, so an owner out of buffers always gets some back. */
const FED_BACKLOG = FED_BUFFERS_PER_JOB / 2;

// Plain CommonJS, evaluated in place: no extra file to resolve under tsx, vitest or a bundler.
// Jobs are hashed one slice at a time in turn, yielding between rounds, so a long range
// neither starves the other jobs of its worker nor delays a cancel. With the md5lanes
// addon (workerData.addon), a round's slices are hashed together, a job per SIMD lane.
const WORKER_SOURCE = `
const { parentPort, workerData } = require('node:worker_threads');
const fs = require('node:fs');
const crypto = require('node:crypto');
const lanes = workerData.addon ? require(workerData.addon) : null;
const SLICE = 1 << 20;
const bufs = [];
const jobs = new Map();
const ready = new Set();
let scheduled = false;
function fail(id, err) {
  const j = jobs.get(id);
  if (j) { try { if (j.fd !== undefined) fs.closeSync(j.fd); } catch {} jobs.delete(id); }
  ready.delete(id);
  parentPort.postMessage({ id, error: String(err && err.message || err) });
}
function newHash() {
  if (!lanes) return crypto.createHash('md5');
  const state = new Uint8Array(lanes.stateBytes);
  lanes.init(state);
  return state;
}
// Buffers hashed in this round, moved back to their owner at its end.
let back = [];
// Reads the job's next slice into its own buffer (or takes its next fed one); returns it, or undefined when caught up.
function read(j, slot) {
  if (j.hashed >= j.available) return undefined;
  if (j.fed) {
    const f = j.fed.shift();
    j.hashed += f.length;
    back.push(f);
    return new Uint8Array(f.ab, f.offset, f.length);
  }
  const buf = (bufs[slot] ??= Buffer.allocUnsafe(SLICE));
  const n = fs.readSync(j.fd, buf, 0, Math.min(SLICE, j.available - j.hashed), j.start + j.hashed);
  if (n <= 0) throw new Error('file shorter than reported');
  j.hashed += n;
  return buf.subarray(0, n);
}
// With lanes, a job waits until it has a slice's worth of bytes (or has ended), and a
// round waits until FULL_ROUND jobs have (all of them, when fewer are open), so each
// round fills as many lanes as it can; BACKLOG bounds the wait (the bytes are still
// in the page cache, or a fed job's owner waits for them: FED_BACKLOG is below the
// buffers it may hold, FED_BUFFERS_PER_JOB). FULL_ROUND is the parts a client sends at once by default.
const FULL_ROUND = 8;
const BACKLOG = 8 * SLICE;
const FED_BACKLOG = ${FED_BACKLOG} * SLICE;
const pendingBytes = (j) => j.available - j.hashed;
const ripe = (j) => pendingBytes(j) >= SLICE || (j.end !== undefined && pendingBytes(j) > 0);
function worthARound() {
  if (!lanes) return ready.size > 0;
  let ripeJobs = 0;
  for (const id of ready) {
    const j = jobs.get(id);
    if (!j || j.end !== undefined || pendingBytes(j) >= (j.fed ? FED_BACKLOG : BACKLOG)) return true;
    if (ripe(j)) ripeJobs++;
  }
  return ripeJobs > 0 && ripeJobs >= Math.min(jobs.size, FULL_ROUND);
}
function round() {
  scheduled = false;
  const hashing = [];
  const slices = [];
  for (const id of ready) {
    const j = jobs.get(id);
    if (!j) { ready.delete(id); continue; }
    try {
      const slice = !lanes || ripe(j) ? read(j, slices.length) : undefined;
      if (slice) { hashing.push(j); slices.push(slice); }
      if (j.hashed >= j.available) ready.delete(id);
    } catch (err) { fail(id, err); }
  }
  if (lanes) lanes.update(hashing.map((j) => j.hash), slices.map((s) => [s]));
  else hashing.forEach((j, i) => j.hash.update(slices[i]));
  if (back.length > 0) {
    parentPort.postMessage({ returned: back }, back.map((f) => f.ab));
    back = [];
  }
  for (const [id, j] of jobs) {
    if (j.end === undefined || j.hashed < j.end) continue;
    if (j.fd !== undefined) fs.closeSync(j.fd);
    jobs.delete(id);
    parentPort.postMessage({ id, md5: lanes ? lanes.digest(j.hash) : j.hash.digest() });
  }
  schedule();
}
function schedule() {
  if (!scheduled && worthARound()) { scheduled = true; setImmediate(round); }
}
parentPort.on('message', (m) => {
  try {
    if (m.op === 'open') jobs.set(m.id, { fd: fs.openSync(m.path, 'r'), start: m.start, hash: newHash(), hashed: 0, available: 0, end: undefined });
    else if (m.op === 'openFed') jobs.set(m.id, { fed: [], hash: newHash(), hashed: 0, available: 0, end: undefined });
    else if (m.op === 'cancel') fail(m.id, 'cancelled');
    else if (m.op === 'feed') {
      const j = jobs.get(m.id);
      if (!j) return;
      j.fed.push(m);
      j.available += m.length;
      ready.add(m.id);
      schedule();
    } else {
      const j = jobs.get(m.id);
      if (!j) return;
      j.available = m.size;
      if (m.op === 'end') j.end = m.size;
      ready.add(m.id);
      schedule();
    }
  } catch (err) { fail(m.id, err); }
});
`;

interface Pending {
  slot: number;
  /** A fed job's owner, given back each buffer once hashed. */
  returned?: (buf: Buffer) => void;
  resolve(md5: Buffer): void;
  reject(err: Error): void;
}

class Pool implements Md5Pool {
  private readonly workers: LazyWorker[];
  private readonly pending = new Map<number, Pending>();
  private nextId = 0;

  constructor(size: number, addon: string | undefined) {
    this.workers = Array.from(
      { length: size },
      (_, slot) =>
        new LazyWorker(WORKER_SOURCE, { workerData: { addon } }, {
          message: (m) => this.answered(m as Answer),
          dead: (err) => this.failSlot(slot, new Error(`md5 worker: ${err.message}`)),
        }),
    );
  }

  private answered(m: Answer): void {
    if (m.returned) {
      for (const r of m.returned) this.pending.get(r.id)?.returned?.(Buffer.from(r.ab, r.offset, r.size));
      return;
    }
    const p = this.pending.get(m.id);
    if (!p) return;
    this.settled(m.id, p);
    if (m.md5) p.resolve(Buffer.from(m.md5));
    else p.reject(new Error(`md5 worker: ${m.error}`));
  }

  private failSlot(slot: number, err: Error): void {
    for (const [jobId, p] of this.pending) {
      if (p.slot === slot) {
        this.settled(jobId, p);
        p.reject(err);
      }
    }
  }

  private settled(id: number, p: Pending): void {
    this.pending.delete(id);
    this.workers[p.slot]!.end();
  }

  private open(returned?: (buf: Buffer) => void): { id: number; w: Worker; result: Promise<Buffer> } {
    const id = this.nextId++;
    const slot = id % this.workers.length;
    const w = this.workers[slot]!.begin();
    const result = new Promise<Buffer>((resolve, reject) => this.pending.set(id, { slot, returned, resolve, reject }));
    result.catch(() => undefined); // observed by finish(); never an unhandled rejection when cancelled
    return { id, w, result };
  }

  start(path: string, start = 0): Md5Job {
    const { id, w, result } = this.open();
    w.postMessage({ op: 'open', id, path, start });
    return {
      grow: (size) => w.postMessage({ op: 'grow', id, size }),
      finish: (size) => {
        w.postMessage({ op: 'end', id, size });
        return result;
      },
      // The worker closes the file before it answers: once this resolves, nothing holds it open.
      cancel: () => {
        w.postMessage({ op: 'cancel', id });
        return result.then(
          () => undefined,
          () => undefined,
        );
      },
    };
  }

  startFed(returned: (buf: Buffer) => void): FedMd5Job {
    const { id, w, result } = this.open(returned);
    w.postMessage({ op: 'openFed', id });
    let size = 0;
    return {
      feed: (buf, length) => {
        size += length;
        w.postMessage({ op: 'feed', id, ab: buf.buffer, offset: buf.byteOffset, size: buf.length, length }, [buf.buffer as ArrayBuffer]);
      },
      finish: () => {
        w.postMessage({ op: 'end', id, size });
        return result;
      },
      cancel: () => w.postMessage({ op: 'cancel', id }),
    };
  }
}

interface Answer {
  id: number;
  md5?: Uint8Array;
  error?: string;
  /** Fed buffers hashed in a round, moved back. */
  returned?: { id: number; ab: ArrayBuffer; offset: number; size: number }[];
}

/** Hashing of the range [start, start + size) of one file; sizes count from `start`. */
export interface Md5Job {
  /** The range's first `size` bytes are in the file and may be hashed. */
  grow(size: number): void;
  /** The range is complete at `size` bytes; resolves its MD5 (rejects if cancelled or unreadable). */
  finish(size: number): Promise<Buffer>;
  /** Stops hashing and closes the file; resolves once the worker has closed it. finish() then rejects. */
  cancel(): Promise<void>;
}

/** Hashing of bytes given in buffers, in order. */
export interface FedMd5Job {
  /**
   * Hashes buf[0, length). The buffer must own its ArrayBuffer alone (Buffer.allocUnsafeSlow):
   * the ArrayBuffer moves to the worker, and the same view comes back to the job's
   * `returned` once hashed. Dropped when the job is cancelled or fails.
   */
  feed(buf: Buffer, length: number): void;
  /** Everything is fed; resolves the MD5 (rejects if cancelled). */
  finish(): Promise<Buffer>;
  cancel(): void;
}

export interface Md5Pool {
  /** Starts hashing the bytes of `path` from `start` on, as they are reported; see Md5Job. */
  start(path: string, start?: number): Md5Job;
  /** Starts hashing bytes fed in buffers; each comes back to `returned`. See FedMd5Job. */
  startFed(returned: (buf: Buffer) => void): FedMd5Job;
}

/**
 * Workers that hash file ranges. With `lanes` (and the addon built), one worker
 * hashes every job together, faster than a core receives them; without, a job
 * takes a core's worth of MD5, so a few workers share them.
 */
export function md5Pool(lanes: boolean): Md5Pool {
  const addon = lanes ? md5LanesAddonFile() : undefined;
  return addon ? new Pool(1, addon) : new Pool(Math.max(1, Math.min(4, availableParallelism())), undefined);
}

let shared: Md5Pool | undefined;

/** Starts hashing the bytes of `path` from `start` on, in the process's shared pool; see Md5Job. */
export function startMd5(path: string, start = 0): Md5Job {
  return (shared ??= md5Pool(true)).start(path, start);
}

/** Starts hashing fed buffers in the process's shared pool; see FedMd5Job. */
export function startFedMd5(returned: (buf: Buffer) => void): FedMd5Job {
  return (shared ??= md5Pool(true)).startFed(returned);
}
