// Sends blueprint requests (pre-signed S3 calls) to the object store. One undici
// Agent keeps a keep-alive pool per store origin. File ranges are streamed from
// disk with their Content-Length, and their MD5 is computed on the way out so a
// part can be checked against the ETag the store answers. (Here, not in worker
// threads as the store does: each worker is a V8 isolate, and the agent must
// stay small; docs/agent-api-notes/uploads.md.) The parts in flight are hashed
// together, one per SIMD lane, where the md5lanes addon is built (src/hash/md5Lanes.ts).
// A small file is the exception: one thread reads and hashes it whole (wholeReads.ts).
import path from 'node:path';
import { Agent, type Dispatcher } from 'undici';
import type { Blueprint } from '../../api/hosted/blueprint.js';
import { Md5Batch } from '../../hash/md5Lanes.js';
import { fileChunks, releaseRing, RING, takeRing } from './fileChunks.js';
import { WholeFileReader, type Walked } from './wholeReads.js';
import type { Disks } from './disks.js';
import type { TokenBucket } from './tokenBucket.js';

/** Every part this process sends shares the lanes. */
const partHashes = new Md5Batch();

export interface ObjectHttpOptions {
  /** headersTimeout and bodyTimeout: a store that goes quiet this long fails the request. */
  timeoutMs: number;
  /** Connections per store origin. */
  connections?: number;
  /** The disks' gates each read of a file takes a slot of. */
  disks?: Disks;
  /** The upload limit's bucket: every byte sent takes its tokens first. */
  bucket?: TokenBucket;
}

export interface ObjectAnswer {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  /** The answer's body as text (S3 answers are small XML documents). */
  text: string;
}

export interface PutAnswer extends ObjectAnswer {
  /** The ETag header without quotes, when the store sent one. */
  etag?: string;
  /** Hex MD5 of the bytes that were sent. */
  md5: string;
}

export class ObjectHttp {
  private dispatcher: Agent;
  private readonly timeoutMs: number;
  private readonly wholeReads = new WholeFileReader();

  constructor(private readonly opts: ObjectHttpOptions) {
    this.timeoutMs = opts.timeoutMs;
    this.dispatcher = this.newDispatcher();
  }

  private newDispatcher(): Agent {
    return new Agent({
      connections: this.opts.connections ?? 64,
      keepAliveTimeout: 30_000,
      headersTimeout: this.opts.timeoutMs,
      bodyTimeout: this.opts.timeoutMs,
    });
  }

  /** Drops every connection, those in use too (their parts fail and are retried): after a sleep of the machine they may be dead. */
  reconnect(): void {
    const old = this.dispatcher;
    this.dispatcher = this.newDispatcher();
    void old.destroy().catch(() => {});
  }

  /** A blueprint request with its own body (e.g. starting a multipart upload). */
  send(bp: Blueprint, signal?: AbortSignal): Promise<ObjectAnswer> {
    return this.request(bp, bp.body === '' ? undefined : bp.body, bp.body === '' ? 0 : Buffer.byteLength(bp.body), signal);
  }

  /**
   * Sends `length` bytes of `file` from `start` as the blueprint's body, read as a
   * stream (never a whole part in memory), and returns the store's answer with the
   * MD5 of what went out.
   */
  async putFileRange(bp: Blueprint, file: string, start: number, length: number, signal?: AbortSignal): Promise<PutAnswer> {
    // The hasher keeps at most RING - 1 chunks unhashed; fileChunks keeps the last RING in place.
    const hash = partHashes.hasher(RING - 1);
    const guard = this.guard(signal);
    // An async iterable body (undici documents it; its types lag), with no Readable around it:
    // pulled a chunk at a time as the socket drains, which moves the stall timer and the hash along.
    const ring = takeRing(length);
    const chunks = fileChunks(
      file,
      start,
      length,
      ring,
      (chunk) => {
        guard.refresh();
        hash.update(chunk);
      },
      await this.opts.disks?.gateOf(path.dirname(file)),
    );
    const bucket = this.opts.bucket;
    async function* sent(): AsyncGenerator<Buffer> {
      for await (const chunk of chunks) {
        // Each slice refreshes the stall timer (waiting on a low limit is no stall);
        // with no limit take() answers undefined at once and the chunk goes straight on.
        const wait = bucket?.take(chunk.length, guard.signal, guard.refresh);
        if (wait) await wait;
        yield chunk;
      }
      // Pulled past the last chunk: the socket took it all; the wait for the answer starts now.
      guard.refresh();
    }
    const body = sent();
    try {
      let answer: ObjectAnswer;
      try {
        answer = await this.request(bp, body as unknown as Dispatcher.DispatchOptions['body'], length, guard.signal);
      } catch (err) {
        hash.discard();
        throw err;
      } finally {
        guard.done();
        // Closes the file should the body have been left part-read.
        await body.return(undefined);
      }
      return { ...answer, etag: etagOf(answer), md5: hash.digest().toString('hex') };
    } finally {
      // The hasher held the last chunks until digest(): only now may the ring be read into again.
      releaseRing(ring);
    }
  }

  /**
   * Sends the whole of a small file (at most WHOLE_READ_MAX bytes), read in one
   * trip off the event loop (wholeReads.ts); null when the file is no longer as walked.
   */
  async putWholeFile(bp: Blueprint, file: Walked, signal?: AbortSignal): Promise<PutAnswer | null> {
    const read = () => this.wholeReads.read(file);
    const whole = await (this.opts.disks ? this.opts.disks.run('read', file.path, read) : read());
    if (!whole) return null;
    // The body goes to the socket in one write: the timer runs until the answer.
    const guard = this.guard(signal);
    try {
      const wait = this.opts.bucket?.take(whole.data.length, guard.signal);
      if (wait) await wait;
      const answer = await this.request(bp, whole.data, whole.data.length, guard.signal);
      return { ...answer, etag: etagOf(answer), md5: whole.md5 };
    } finally {
      guard.done();
      whole.release();
    }
  }

  /**
   * Our own stall guard, independent of how undici arms its timers: the request
   * fails when timeoutMs pass without refresh(), and when the caller's signal fires.
   */
  private guard(caller?: AbortSignal): { signal: AbortSignal; refresh(): void; done(): void } {
    const stalled = new AbortController();
    const timer = setTimeout(() => stalled.abort(Object.assign(new Error(`the store took no data for ${this.timeoutMs} ms`), { code: 'PART_STALLED' })), this.timeoutMs);
    // A listener, not AbortSignal.any: that one costs ~20 µs a part on Node 20 and keeps
    // each part's signal on the run's until a collection.
    const onAbort = () => stalled.abort(caller!.reason);
    if (caller?.aborted) onAbort();
    caller?.addEventListener('abort', onAbort, { once: true });
    return {
      signal: stalled.signal,
      refresh: () => timer.refresh(),
      done: () => {
        caller?.removeEventListener('abort', onAbort);
        clearTimeout(timer);
      },
    };
  }

  private async request(bp: Blueprint, body: Dispatcher.DispatchOptions['body'], length: number, signal?: AbortSignal): Promise<ObjectAnswer> {
    const url = new URL(bp.url);
    const headers: Record<string, string> = {};
    for (const [k, v] of Object.entries(bp.headers)) if (k.toLowerCase() !== 'host') headers[k] = v;
    if (bp.method !== 'GET') headers['content-length'] = String(length);
    const res = await this.dispatcher.request({
      origin: url.origin,
      path: url.pathname + url.search,
      method: bp.method,
      headers,
      body,
      signal,
    });
    const text = await res.body.text();
    return { status: res.statusCode, headers: res.headers, text };
  }

  async close(): Promise<void> {
    await Promise.all([this.dispatcher.close(), this.wholeReads.close()]);
  }
}

/** The ETag header without quotes, when the store sent one. */
function etagOf(answer: ObjectAnswer): string | undefined {
  const raw = answer.headers.etag;
  return typeof raw === 'string' ? raw.replace(/"/g, '').trim() : undefined;
}
