// MD5 of incoming bodies, off the event loop. MD5 runs at ~0.5-0.7 GB/s per
// core, slower than loopback HTTP, so hashing on the main thread would cap
// every upload at that speed. Workers instead re-read what was just written
// (it is in the page cache, so the read is a cheap copy) and hash it as the
// writer reports progress; only offsets cross the thread boundary, no data.

import { availableParallelism } from 'node:os';
import { Worker } from 'node:worker_threads';

// Plain CommonJS, evaluated in place: no extra file to resolve under tsx, vitest or a bundler.
const WORKER_SOURCE = `
const { parentPort } = require('node:worker_threads');
const fs = require('node:fs');
const crypto = require('node:crypto');
const buf = Buffer.allocUnsafe(4 << 20);
const jobs = new Map();
function fail(id, err) {
  const j = jobs.get(id);
  if (j) { try { fs.closeSync(j.fd); } catch {} jobs.delete(id); }
  parentPort.postMessage({ id, error: String(err && err.message || err) });
}
function pump(id) {
  const j = jobs.get(id);
  if (!j) return;
  while (j.hashed < j.available) {
    const n = fs.readSync(j.fd, buf, 0, Math.min(buf.length, j.available - j.hashed), j.hashed);
    if (n <= 0) throw new Error('file shorter than reported');
    j.hash.update(buf.subarray(0, n));
    j.hashed += n;
  }
  if (j.end !== undefined && j.hashed >= j.end) {
    fs.closeSync(j.fd);
    jobs.delete(id);
    parentPort.postMessage({ id, md5: j.hash.digest() });
  }
}
parentPort.on('message', (m) => {
  try {
    if (m.op === 'open') jobs.set(m.id, { fd: fs.openSync(m.path, 'r'), hash: crypto.createHash('md5'), hashed: 0, available: 0, end: undefined });
    else if (m.op === 'cancel') fail(m.id, 'cancelled');
    else {
      const j = jobs.get(m.id);
      if (!j) return;
      j.available = m.size;
      if (m.op === 'end') j.end = m.size;
      pump(m.id);
    }
  } catch (err) { fail(m.id, err); }
});
`;

interface Pending {
  worker: Worker;
  resolve(md5: Buffer): void;
  reject(err: Error): void;
}

class Pool {
  private readonly workers: Array<Worker | undefined>;
  private readonly pending = new Map<number, Pending>();
  private nextId = 0;

  constructor(size: number) {
    this.workers = new Array<Worker | undefined>(size).fill(undefined);
  }

  /** Worker for a job id, started on first use; unref'd so an idle pool never keeps the process alive. */
  worker(id: number): Worker {
    const slot = id % this.workers.length;
    let w = this.workers[slot];
    if (!w) {
      w = new Worker(WORKER_SOURCE, { eval: true });
      w.on('message', (m: { id: number; md5?: Uint8Array; error?: string }) => {
        const p = this.pending.get(m.id);
        this.pending.delete(m.id);
        if (m.md5) p?.resolve(Buffer.from(m.md5));
        else p?.reject(new Error(`md5 worker: ${m.error}`));
      });
      const dead = w;
      const failAll = (err: Error): void => {
        if (this.workers[slot] === dead) this.workers[slot] = undefined;
        for (const [jobId, p] of this.pending) {
          if (p.worker === dead) {
            this.pending.delete(jobId);
            p.reject(err);
          }
        }
      };
      w.on('error', failAll);
      w.on('exit', (code) => failAll(new Error(`md5 worker exited (${code})`)));
      w.unref(); // after the listeners: adding a 'message' listener refs the worker again
      this.workers[slot] = w;
    }
    return w;
  }

  start(path: string): Md5Job {
    const id = this.nextId++;
    const w = this.worker(id);
    const result = new Promise<Buffer>((resolve, reject) => this.pending.set(id, { worker: w, resolve, reject }));
    result.catch(() => undefined); // observed by finish(); never an unhandled rejection when cancelled
    w.postMessage({ op: 'open', id, path });
    return {
      grow: (size) => w.postMessage({ op: 'grow', id, size }),
      finish: (size) => {
        w.postMessage({ op: 'end', id, size });
        return result;
      },
      cancel: () => w.postMessage({ op: 'cancel', id }),
    };
  }
}

export interface Md5Job {
  /** The first `size` bytes of the file are written and may be hashed. */
  grow(size: number): void;
  /** The file is complete at `size` bytes; resolves its MD5. */
  finish(size: number): Promise<Buffer>;
  cancel(): void;
}

let pool: Pool | undefined;

/** Starts hashing a file that is being written; see Md5Job. */
export function startMd5(path: string): Md5Job {
  pool ??= new Pool(Math.max(1, Math.min(4, availableParallelism())));
  return pool.start(path);
}
