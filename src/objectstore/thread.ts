// The embedded store on its own thread, as `ferry serve` runs it: the store's
// HTTP server (receiving, hashing and writing every byte of every part) gets its
// own event loop and core, so file traffic neither slows the service's API nor
// waits behind it. The service's control calls (LocalStore) cross as messages;
// a failure comes back as the same S3Error the store raised.
import { setFlagsFromString } from 'node:v8';
import { Worker } from 'node:worker_threads';
import { S3Error } from './errors.js';
import type { LocalStore } from './local.js';
import type { ObjectStoreOptions, RunningObjectStore } from './index.js';
import type { CallMessage, FromStore, ThreadOptions } from './threadProtocol.js';

/**
 * The thread's entry: next to this module when it runs from the sources (a
 * small JS file that loads tsx first), or the bundle's own entry when built
 * (scripts/build.mjs writes it to dist/, one level above the chunks).
 */
function entry(): URL {
  return import.meta.url.endsWith('.ts') ? new URL('./threadBoot.mjs', import.meta.url) : new URL('../objectstore-thread.mjs', import.meta.url);
}

export async function startObjectStoreThread(opts: Omit<ObjectStoreOptions, 'logger'> & { logLevel?: string }): Promise<RunningObjectStore> {
  const { onPartStored, ...rest } = opts;
  // The store's isolate keeps a small heap (about 8 MB live) and allocates fast: a
  // Buffer for every 64 KiB received. Once V8 has lowered its heap growing factor
  // there, its old generation's headroom stays below what V8 wants before marking
  // incrementally, so a new marking starts as soon as one ends: 19-44 cycles per
  // uploaded GiB that free nothing, 0.4-0.7 CPU-s/GiB on V8's threads
  // (docs/benchmarks.md). Marked in one pause when it reaches its limit, the store
  // needs no major collection in a GiB. V8 flags are process-wide, so the
  // service's own isolate marks that way too (a pause of 5-15 ms now and then);
  // set before the store's isolate exists.
  setFlagsFromString('--no-incremental-marking');
  // Without incremental marking V8's memory reducer never runs, and an old
  // generation grows to up to 4x its live objects before it is marked: the service
  // bounds that for the whole process (startHostedService, threads/heapGrowth.ts).
  // The store's young generation is capped at 16 MB (V8 grows it to 32 MB under
  // many small requests): its objects live for one request.
  const workerData: ThreadOptions = { ...rest, logLevel: opts.logLevel ?? 'info', reportParts: onPartStored !== undefined };
  const worker = new Worker(entry(), { workerData, resourceLimits: { maxYoungGenerationSizeMb: 16 } });
  const pending = new Map<number, { ok: (v: unknown) => void; fail: (e: Error) => void }>();
  let nextId = 1;
  let dead: Error | undefined;
  let running = false;

  const failAll = (err: Error) => {
    dead ??= err;
    for (const p of pending.values()) p.fail(err);
    pending.clear();
  };
  const ready = new Promise<{ url: string; port: number }>((ok, fail) => {
    worker.on('message', (m: FromStore) => {
      if (m.type === 'ready') return ok(m);
      if (m.type === 'failed') return fail(new Error(m.message));
      if (m.type === 'stored') return onPartStored?.(m.part);
      const p = pending.get(m.id);
      if (!p) return;
      pending.delete(m.id);
      if (m.ok) p.ok(m.value);
      else p.fail(m.error.s3 ? new S3Error(m.error.code!, m.error.message) : Object.assign(new Error(m.error.message), { code: m.error.code }));
    });
    worker.once('error', (err) => {
      fail(err);
      failAll(new S3Error('InternalError', `the object store stopped: ${err.message}`));
      // A store that failed after it started takes the process down, as it did when it
      // shared the service's thread: a supervisor restarts both, where a service left
      // running without its store would fail every transfer.
      if (running) setImmediate(() => {
        throw err;
      });
    });
    worker.once('exit', (code) => {
      fail(new Error(`the object store thread exited (${code}) before it was ready`));
      failAll(new S3Error('InternalError', 'the object store has stopped'));
    });
  });

  const call = <T>(op: CallMessage['op'], args: unknown[]): Promise<T> =>
    new Promise<T>((ok, fail) => {
      if (dead) return fail(dead);
      const id = nextId++;
      pending.set(id, { ok: ok as (v: unknown) => void, fail });
      worker.postMessage({ type: 'call', id, op, args } satisfies CallMessage);
    });

  let started: { url: string; port: number };
  try {
    started = await ready;
  } catch (err) {
    await worker.terminate();
    throw err;
  }
  running = true;
  const local: LocalStore = {
    createUpload: (...a) => call('createUpload', a),
    listParts: (...a) => call('listParts', a),
    uploadExists: (...a) => call('uploadExists', a),
    completeUpload: (...a) => call('completeUpload', a),
    abortUpload: (...a) => call('abortUpload', a),
    objectInfo: (...a) => call('objectInfo', a),
  };
  let closing: Promise<void> | undefined;
  return {
    ...started,
    local,
    close() {
      running = false;
      closing ??= call('close', [])
        .catch(() => undefined)
        .then(async () => {
          await worker.terminate();
        });
      return closing;
    },
  };
}
