// One ranged GET against a pre-signed URL, streamed into the partial file in
// batched positional writes: a range is never held whole in memory (two
// half-MiB batches at most), and receiving goes on while a batch is written.
import type { Hash } from 'node:crypto';
import type { FileHandle } from 'node:fs/promises';
import type { Readable } from 'node:stream';
import { Agent, request, type Dispatcher } from 'undici';
import { BatchedWriter, LocalWriteError } from './batchedWriter.js';
import { PlainGetUnsupported, PlainPool, type PlainBody } from './plainGet.js';
import type { DiskGate } from './diskGate.js';
import type { Disks } from './disks.js';
import type { TokenBucket } from './tokenBucket.js';

/** The store answered with an HTTP error status. */
export class RangeHttpError extends Error {
  constructor(
    readonly status: number,
    message: string,
    /** The answer's Retry-After header (503 SlowDown). */
    readonly retryAfter?: string,
  ) {
    super(message);
  }
}

/** The answer does not fit the object we are fetching (another size, another ETag): retrying will not help. */
export class RangeMismatchError extends Error {}

/** How ranges are fetched: plain http through PlainPool (reused read buffers), the rest through undici. */
export interface RangeTransport {
  undici: Dispatcher;
  plain: PlainPool;
  /** How long the store may stay silent (no headers, no body bytes) before the range is given up and retried. */
  stallMs: number;
  /** Origins that answered something PlainPool cannot read: undici serves them from then on. */
  notPlain: Set<string>;
  /** The disks' gates: a writer of files takes a slot of its disk per batch written (RangeRequest.disk). */
  disks?: Disks;
  /** The download limit's bucket: the bytes of each chunk read are taken before the next is read. */
  bucket?: TokenBucket;
  /** Drops every connection (after a sleep of the machine they may be dead); ranges under way fail and are retried. */
  reconnect(): void;
  close(): Promise<void>;
}

export function createRangeTransport(stallMs: number, { disks, bucket }: { disks?: Disks; bucket?: TokenBucket } = {}): RangeTransport {
  const newAgent = () => new Agent({ headersTimeout: stallMs, bodyTimeout: stallMs, connect: { timeout: stallMs }, keepAliveTimeout: 10_000 });
  return {
    undici: newAgent(),
    plain: new PlainPool(),
    stallMs,
    notPlain: new Set(),
    disks,
    bucket,
    reconnect() {
      const [undici, plain] = [this.undici, this.plain];
      this.undici = newAgent();
      this.plain = new PlainPool();
      plain.close();
      void undici.destroy().catch(() => {});
    },
    async close() {
      this.plain.close();
      await this.undici.close();
    },
  };
}

export interface RangeRequest {
  url: string;
  /** Inclusive byte offsets inside the object (and the file). */
  start: number;
  end: number;
  /** The object's size as the file list gave it. */
  total: number;
  /** The ETag seen on earlier ranges of this object, to notice a changed object. */
  etag: string | null;
  fh: FileHandle;
  signal: AbortSignal;
  transport: RangeTransport;
  /** Called as bytes land in the file, for progress. */
  onBytes(n: number): void;
  /** Hears every byte of the answer, in order (a whole object's MD5). */
  md5?: Hash;
  /** The gate of the file's disk: each batch written takes one of its writer slots. */
  disk?: DiskGate;
}

function parseContentRange(v: string | string[] | undefined): [number, number, number | undefined] | undefined {
  const m = typeof v === 'string' ? /^bytes (\d+)-(\d+)\/(\d+|\*)$/.exec(v.trim()) : null;
  return m ? [Number(m[1]), Number(m[2]), m[3] === '*' ? undefined : Number(m[3])] : undefined;
}

const header = (v: string | string[] | undefined) => (Array.isArray(v) ? v[0] : v);

interface Answer {
  statusCode: number;
  headers: Record<string, string | string[] | undefined>;
  body: Dispatcher.ResponseData['body'] | PlainBody;
}

async function get(r: RangeRequest): Promise<Answer> {
  const headers = { range: `bytes=${r.start}-${r.end}` };
  const url = new URL(r.url);
  const t = r.transport;
  if (url.protocol === 'http:' && !t.notPlain.has(url.origin)) {
    try {
      return await t.plain.get(url, { headers, signal: r.signal, stallMs: t.stallMs });
    } catch (err) {
      if (!(err instanceof PlainGetUnsupported)) throw err;
      t.notPlain.add(url.origin);
    }
  }
  return request(r.url, { method: 'GET', headers, signal: r.signal, dispatcher: t.undici });
}

/**
 * One write at a time per file. The ranges of a file share it, and ext4 lets one
 * buffered write into a file at a time: the others spun on its lock, ~0.8 CPU-s
 * per GiB downloaded, for no more throughput.
 */
const turns = new WeakMap<FileHandle, Promise<unknown>>();
function inTurn<T>(fh: FileHandle, fn: () => Promise<T>): Promise<T> {
  const p = (turns.get(fh) ?? Promise.resolve()).then(fn);
  turns.set(fh, p.catch(() => undefined));
  return p;
}

/** Fetches bytes start..end into the file at the same offsets; resolves with the object's ETag. */
export async function fetchRange(r: RangeRequest): Promise<string | null> {
  const res = await get(r);
  try {
    if (res.statusCode >= 400) {
      const text = (await res.body.text().catch(() => '')).slice(0, 300);
      const code = /<Code>([^<]+)<\/Code>/.exec(text)?.[1];
      throw new RangeHttpError(res.statusCode, `the store answered ${res.statusCode}${code ? ` ${code}` : ''}`, header(res.headers['retry-after']));
    }
    const whole = r.start === 0 && r.end === r.total - 1;
    if (res.statusCode === 206) {
      const cr = parseContentRange(res.headers['content-range']);
      if (!cr || cr[0] !== r.start || cr[1] !== r.end) throw new RangeMismatchError(`the store sent bytes ${header(res.headers['content-range']) ?? '?'} for ${r.start}-${r.end}`);
      if (cr[2] !== undefined && cr[2] !== r.total) throw new RangeMismatchError(`the object is ${cr[2]} bytes, the Package lists ${r.total}`);
    } else if (res.statusCode !== 200 || !whole) {
      throw new RangeMismatchError(`the store answered ${res.statusCode} to a range request`);
    }
    const etag = header(res.headers.etag) ?? null;
    if (r.etag && etag && etag !== r.etag) throw new RangeMismatchError('the object changed while it was downloaded (another ETag)');

    const length = r.end - r.start + 1;
    const writer = new BatchedWriter(
      async (bufs, at) => {
        try {
          const write = () => r.fh.writev(bufs, at);
          // The disk's writer slot is taken in the file's turn: held for the write alone.
          return (await inTurn(r.fh, r.disk ? () => r.disk!.run('write', write) : write)).bytesWritten;
        } catch (err) {
          throw new LocalWriteError(`writing the file failed: ${(err as Error).message}`, { cause: err });
        }
      },
      r.start,
      (n) => {
        // Written: the plain client may read into those bytes' buffers again.
        if ('release' in res.body) res.body.release(n);
        r.onBytes(n);
      },
    );
    try {
      await receive(res.body, writer, length, r.md5, r.transport.bucket, r.signal);
      await writer.flush();
    } catch (err) {
      // No write may land after we return: the caller may close, truncate or reuse the file.
      await writer.settle();
      throw err;
    }
    return etag;
  } finally {
    if (!res.body.destroyed) res.body.destroy();
  }
}

/**
 * Feeds the body into the writer, pausing it while a full batch waits for a
 * write. Flowing 'data' events hand over each chunk as read; the async
 * iterator would concatenate (copy) whatever piled up meanwhile.
 */
function receive(body: Readable | PlainBody, writer: BatchedWriter, length: number, md5: Hash | undefined, bucket: TokenBucket | undefined, signal: AbortSignal): Promise<void> {
  return new Promise<void>((resolve, reject) => {
    let received = 0;
    let settled = false;
    // Waiting for the download limit's tokens for the bytes already read: no more are read meanwhile.
    let owing = false;
    const fail = (err: unknown) => {
      if (settled) return;
      settled = true;
      body.pause();
      reject(err);
    };
    writer.onRoom = () => {
      if (writer.failure !== undefined) fail(writer.failure);
      else if (!settled && writer.hasRoom && !owing && body.isPaused()) body.resume();
    };
    body.on('error', fail);
    body.on('data', (chunk: Buffer) => {
      if (settled) return;
      received += chunk.length;
      if (received > length) return fail(new RangeMismatchError('the store sent more bytes than asked for'));
      if (writer.failure !== undefined) return fail(writer.failure);
      md5?.update(chunk);
      const room = writer.push(chunk);
      const wait = bucket?.take(chunk.length, signal);
      if (wait) {
        owing = true;
        body.pause();
        wait.then(
          () => {
            owing = false;
            if (!settled && writer.hasRoom && body.isPaused()) body.resume();
          },
          () => {}, // aborted: the request fails on its own
        );
      } else if (!room) body.pause();
    });
    body.on('end', () => {
      if (settled) return;
      settled = true;
      if (received !== length) reject(Object.assign(new Error(`the answer ended after ${received} of ${length} bytes`), { code: 'SHORT_BODY' }));
      else resolve();
    });
  });
}
