// Small files read whole, off the event loop, in one trip to a worker thread.
// Reading a file through node:fs/promises takes four to five trips through
// libuv's thread pool (stat, open, read, close, and a stat before the finalize),
// and on a VM each trip wakes a sleeping thread at a cost of 25-140 µs of the
// event loop's CPU: for a 16 KiB file that was a third of the agent's main thread
// (docs/benchmarks.md). Here one message goes to the worker, which checks the
// file against its walk, reads it, checks it again, hashes it and sends the
// bytes back; messages that arrive together are served in one wakeup.
//
// The bytes travel in buffers that move between the threads (transferred, not
// copied) and are reused: allocating one per file would be external memory that
// V8 frees only with full collections (fileChunks.ts says why that matters).
import { LazyWorker } from '../../threads/lazyWorker.js';

/** Files up to this size are read whole (the read size of fileChunks.ts). */
export const WHOLE_READ_MAX = 1024 * 1024;

// Plain CommonJS, evaluated in place, as in src/hash/md5Workers.ts.
const WORKER_SOURCE = `
const { parentPort } = require('node:worker_threads');
const fs = require('node:fs');
const crypto = require('node:crypto');
const same = (st, m) => st.size === m.size && st.mtimeMs === m.mtimeMs;
function read(m) {
  if (!same(fs.statSync(m.path), m)) return { changed: true };
  const buf = Buffer.from(m.buffer, 0, m.size);
  const fd = fs.openSync(m.path, 'r');
  try {
    let got = 0;
    for (let n = -1; got < m.size && n !== 0; got += n) n = fs.readSync(fd, buf, got, m.size - got, got);
    // Shorter, or written to meanwhile: not the file that was walked.
    if (got < m.size || !same(fs.fstatSync(fd), m)) return { changed: true };
  } finally {
    fs.closeSync(fd);
  }
  return { md5: crypto.createHash('md5').update(buf).digest('hex') };
}
parentPort.on('message', (m) => {
  let answer;
  try {
    answer = read(m);
  } catch (err) {
    answer = { error: { message: String(err && err.message || err), code: err && err.code } };
  }
  parentPort.postMessage({ id: m.id, buffer: m.buffer, ...answer }, [m.buffer]);
});
`;

export interface WholeFile {
  data: Buffer;
  /** Hex MD5 of `data`. */
  md5: string;
  /** Gives the buffer back for the next file; `data` must not be used after. */
  release(): void;
}

/** What the walk recorded of a file: a read that finds anything else answers null. */
export interface Walked {
  path: string;
  size: number;
  mtimeMs: number;
}

interface Pending {
  size: number;
  resolve(v: WholeFile | null): void;
  reject(err: Error): void;
}

interface Answer {
  id: number;
  buffer: ArrayBuffer;
  md5?: string;
  changed?: true;
  error?: { message: string; code?: string };
}

export class WholeFileReader {
  private readonly worker = new LazyWorker(WORKER_SOURCE, {}, {
    message: (m) => this.answered(m as Answer),
    dead: (err) => this.failAll(new Error(`the file reader thread died: ${err.message}`)),
  });
  private readonly pending = new Map<number, Pending>();
  /** Buffers of WHOLE_READ_MAX bytes not in use: as many as files were ever read at once. */
  private readonly free: ArrayBuffer[] = [];
  private nextId = 0;

  /**
   * Reads `file` whole (at most WHOLE_READ_MAX bytes) if its size and modification
   * time are still the walk's, before and after the read; null if not.
   */
  read(file: Walked): Promise<WholeFile | null> {
    if (file.size > WHOLE_READ_MAX) return Promise.reject(new RangeError(`${file.path} is larger than ${WHOLE_READ_MAX} bytes`));
    const id = this.nextId++;
    const buffer = this.free.pop() ?? new ArrayBuffer(WHOLE_READ_MAX);
    const w = this.worker.begin();
    const answer = new Promise<WholeFile | null>((resolve, reject) => this.pending.set(id, { size: file.size, resolve, reject }));
    w.postMessage({ id, buffer, path: file.path, size: file.size, mtimeMs: file.mtimeMs }, [buffer]);
    return answer;
  }

  close(): Promise<void> {
    this.failAll(new Error('the file reader was closed'));
    return this.worker.terminate();
  }

  private answered(m: Answer): void {
    const p = this.pending.get(m.id);
    if (!p) return;
    this.pending.delete(m.id);
    this.worker.end();
    if (m.md5 === undefined) {
      this.free.push(m.buffer);
      if (m.changed) return p.resolve(null);
      return p.reject(Object.assign(new Error(m.error?.message ?? 'read failed'), { code: m.error?.code }));
    }
    let released = false;
    p.resolve({
      data: Buffer.from(m.buffer, 0, p.size),
      md5: m.md5,
      release: () => {
        if (released) return;
        released = true;
        this.free.push(m.buffer);
      },
    });
  }

  private failAll(err: Error): void {
    for (const p of this.pending.values()) p.reject(err);
    this.pending.clear();
  }
}
