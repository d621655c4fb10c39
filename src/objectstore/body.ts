// Request bodies. Large ones go straight from the socket to a temp file in
// ~1 MiB positional writev batches (no stream layers in between: at loopback
// speeds their per-chunk cost shows), MD5 computed by a worker that re-reads
// the written bytes (src/hash/md5Workers.ts). Real signed payload hashes are
// checked on the way. A body that fails any check is deleted before the error
// is answered, and the rest of it is drained so the client still reads that answer.

import { createHash } from 'node:crypto';
import { closeSync, openSync, writev, writevSync } from 'node:fs';
import { unlink } from 'node:fs/promises';
import { promisify } from 'node:util';
import type { IncomingMessage } from 'node:http';
import type { Readable } from 'node:stream';
import { startMd5, type Md5Job } from '../hash/md5Workers.js';
import { AwsChunkedDecoder, isStreamingPayload } from './chunked.js';
import { s3err } from './errors.js';
import type { AuthContext } from './sigv4.js';

const FLUSH_BYTES = 1 << 20;
/** Writes queued before the socket is paused (backpressure at ~4 MiB per request). */
const MAX_PENDING_WRITES = 4;
const SHA256_HEX = /^[0-9a-f]{64}$/;
const writevAt = promisify(writev);

export interface Received {
  size: number;
  md5: Buffer;
}

function aborted(): Error {
  return Object.assign(new Error('request aborted'), { code: 'ECONNRESET' });
}

/** The decoded body: aws-chunked framing removed for STREAMING-* payloads. */
function bodySource(req: IncomingMessage, auth: AuthContext): { source: Readable; decoder?: AwsChunkedDecoder } {
  const hash = auth.payloadHash;
  if (!isStreamingPayload(hash)) return { source: req };
  if (hash.includes('ECDSA')) throw s3err('NotImplemented', 'SigV4a streaming payloads are not supported.');
  const declared = req.headers['x-amz-decoded-content-length'];
  const expected = declared === undefined ? undefined : Number(declared);
  if (expected !== undefined && !Number.isSafeInteger(expected)) throw s3err('InvalidArgument', 'Bad x-amz-decoded-content-length');
  const decoder = new AwsChunkedDecoder(auth, expected);
  req.on('error', (err) => decoder.destroy(err));
  req.pipe(decoder);
  return { source: decoder, decoder };
}

/** Stop reading for us, but keep draining so the socket can carry the error answer. */
function drain(req: IncomingMessage, decoder: AwsChunkedDecoder | undefined): void {
  if (decoder) req.unpipe(decoder);
  if (!req.complete && !req.destroyed) req.resume();
}

function checkDigests(req: IncomingMessage, auth: AuthContext, sha256: string | undefined, md5: Buffer): void {
  if (sha256 !== undefined && sha256 !== auth.payloadHash) throw s3err('XAmzContentSHA256Mismatch');
  const header = req.headers['content-md5'];
  if (typeof header !== 'string') return;
  const given = Buffer.from(header, 'base64');
  if (given.length !== 16) throw s3err('InvalidDigest', 'The Content-MD5 you specified was invalid.');
  if (!given.equals(md5)) throw s3err('BadDigest', 'The Content-MD5 you specified did not match what we received.');
}

/** Streams the body into `path` (created exclusively); removes it on any failure. */
export async function receiveToFile(req: IncomingMessage, auth: AuthContext, path: string): Promise<Received> {
  // Opened (synchronously, as the store's other metadata calls: disk.ts) before the body flows.
  const fd = openSync(path, 'wx');
  let fdOpen = true;
  const closeFd = (): void => {
    // Never twice: the number may already name another file of this process.
    if (fdOpen) {
      fdOpen = false;
      closeSync(fd);
    }
  };
  const sha = SHA256_HEX.test(auth.payloadHash) ? createHash('sha256') : undefined;
  let decoder: AwsChunkedDecoder | undefined;
  let job: Md5Job | undefined;
  let batch: Buffer[] = [];
  let batchBytes = 0;
  let queued = 0;
  let pending = 0;
  let writes: Promise<void> = Promise.resolve();
  let onData: ((chunk: Buffer) => void) | undefined;
  try {
    const body = bodySource(req, auth);
    const source = body.source;
    decoder = body.decoder;
    await new Promise<void>((resolve, reject) => {
      const fail = (err: Error): void => {
        if (onData) source.off('data', onData);
        reject(err);
      };
      const flush = (): void => {
        const buffers = batch;
        const at = queued;
        const size = batchBytes;
        batch = [];
        batchBytes = 0;
        queued += size;
        pending++;
        job ??= startMd5(path);
        writes = writes.then(async () => {
          await writevAt(fd, buffers, at);
          pending--;
          job!.grow(at + size);
          if (pending < MAX_PENDING_WRITES && source.isPaused()) source.resume();
        });
        writes.catch(fail);
        if (pending >= MAX_PENDING_WRITES) source.pause();
      };
      onData = (chunk: Buffer): void => {
        sha?.update(chunk);
        batch.push(chunk);
        batchBytes += chunk.length;
        if (batchBytes >= FLUSH_BYTES) flush();
      };
      source.on('data', onData);
      source.once('end', () => {
        if (job && batchBytes > 0) flush();
        writes.then(resolve, fail);
      });
      source.once('error', fail);
      req.once('close', () => {
        if (!req.complete) fail(aborted());
      });
      // The client may have gone while we awaited: then no event will ever come.
      if (req.destroyed && !req.complete) fail(aborted());
    });
    let md5: Buffer;
    if (job) {
      md5 = await job.finish(queued);
    } else {
      // Small body (under FLUSH_BYTES), still whole in memory: hash it here and write it at once.
      const h = createHash('md5');
      for (const b of batch) h.update(b);
      md5 = h.digest();
      if (batch.length > 0) writevSync(fd, batch, 0);
      queued = batchBytes;
    }
    checkDigests(req, auth, sha?.digest('hex'), md5);
    closeFd();
    return { size: queued, md5 };
  } catch (err) {
    job?.cancel();
    drain(req, decoder);
    await writes.catch(() => undefined);
    try {
      closeFd();
    } catch {
      // the failure is already on its way
    }
    await unlink(path).catch(() => undefined);
    throw err;
  }
}

/** Reads a small body (XML requests) into memory, refusing more than `limit` bytes. */
export async function receiveSmall(req: IncomingMessage, auth: AuthContext, limit: number): Promise<Buffer> {
  const { source, decoder } = bodySource(req, auth);
  const chunks: Buffer[] = [];
  let size = 0;
  try {
    await new Promise<void>((resolve, reject) => {
      const onData = (chunk: Buffer): void => {
        size += chunk.length;
        if (size <= limit) return void chunks.push(chunk);
        source.off('data', onData);
        reject(s3err('MalformedXML', 'The request body is too large.'));
      };
      source.on('data', onData);
      source.once('end', resolve);
      source.once('error', reject);
      req.once('close', () => {
        if (!req.complete) reject(aborted());
      });
      if (req.destroyed && !req.complete) reject(aborted());
    });
  } catch (err) {
    drain(req, decoder);
    throw err;
  }
  const body = Buffer.concat(chunks);
  const sha = SHA256_HEX.test(auth.payloadHash) ? createHash('sha256').update(body).digest('hex') : undefined;
  checkDigests(req, auth, sha, createHash('md5').update(body).digest());
  return body;
}
