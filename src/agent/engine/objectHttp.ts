// Sends blueprint requests (pre-signed S3 calls) to the object store. One undici
// Agent keeps a keep-alive pool per store origin. File ranges are streamed from
// disk with their Content-Length; a worker hashes each range from the page cache
// as it goes out, so a part can be checked against the ETag the store answers
// without MD5 taking the event loop (docs/agent-api-notes/uploads.md).
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import { Agent, type Dispatcher } from 'undici';
import type { Blueprint } from '../../api/hosted/blueprint.js';
import { startMd5 } from '../../hash/md5Workers.js';

export interface ObjectHttpOptions {
  /** headersTimeout and bodyTimeout: a store that goes quiet this long fails the request. */
  timeoutMs: number;
  /** Connections per store origin. */
  connections?: number;
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
  /** Hex MD5 of the bytes that were sent, for a 200 answer (other answers stored nothing). */
  md5?: string;
}

const READ_CHUNK = 1024 * 1024;

/** The part's MD5, fed as its chunks go out. */
interface PartHash {
  add(chunk: Buffer, sent: number): void;
  finish(length: number): Promise<Buffer>;
  cancel(): void;
}

/**
 * A part of one chunk (a small file) is hashed here: a worker round trip would
 * cost more than the hash. Larger parts are hashed by a worker re-reading the
 * range from the page cache, which is safe: a file changed meanwhile gives an
 * MD5 unlike the ETag, retried, then stopped by checkUnchanged.
 */
function partHash(file: string, start: number, length: number): PartHash {
  if (length <= READ_CHUNK) {
    const h = createHash('md5');
    return { add: (chunk) => h.update(chunk), finish: async () => h.digest(), cancel: () => undefined };
  }
  const job = startMd5(file, start);
  return { add: (_chunk, sent) => job.grow(sent), finish: (n) => job.finish(n), cancel: () => job.cancel() };
}

export class ObjectHttp {
  readonly dispatcher: Agent;
  private readonly timeoutMs: number;

  constructor(opts: ObjectHttpOptions) {
    this.timeoutMs = opts.timeoutMs;
    this.dispatcher = new Agent({
      connections: opts.connections ?? 64,
      keepAliveTimeout: 30_000,
      headersTimeout: opts.timeoutMs,
      bodyTimeout: opts.timeoutMs,
    });
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
    const stream = fs.createReadStream(file, { start, end: start + length - 1, highWaterMark: READ_CHUNK });
    const hash = partHash(file, start, length);
    // Our own stall guard, independent of how undici arms its timers: the request fails when
    // the store takes no bytes for timeoutMs, or has not answered timeoutMs after the last one.
    const stalled = new AbortController();
    const timer = setTimeout(() => stalled.abort(Object.assign(new Error(`the store took no data for ${this.timeoutMs} ms`), { code: 'PART_STALLED' })), this.timeoutMs);
    // An async iterable body (undici documents it; its types lag), with no Readable around it:
    // pulled a chunk at a time as the socket drains, which moves the stall timer and the hash along.
    async function* body(): AsyncGenerator<Buffer> {
      let read = 0;
      try {
        for await (const chunk of stream) {
          timer.refresh();
          read += (chunk as Buffer).length;
          hash.add(chunk as Buffer, read);
          yield chunk as Buffer;
        }
        timer.refresh();
      } finally {
        stream.destroy();
      }
    }
    let answer: ObjectAnswer;
    try {
      const both = signal ? AbortSignal.any([signal, stalled.signal]) : stalled.signal;
      answer = await this.request(bp, body() as unknown as Dispatcher.DispatchOptions['body'], length, both);
    } catch (err) {
      hash.cancel();
      throw err;
    } finally {
      clearTimeout(timer);
      stream.destroy();
    }
    const raw = answer.headers.etag;
    const etag = typeof raw === 'string' ? raw.replace(/"/g, '').trim() : undefined;
    if (answer.status !== 200) {
      hash.cancel();
      return { ...answer, etag };
    }
    return { ...answer, etag, md5: (await hash.finish(length)).toString('hex') };
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

  close(): Promise<void> {
    return this.dispatcher.close();
  }
}
