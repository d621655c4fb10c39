// Request bodies. Large ones go from the socket to a temp file through a sink
// (fileSink.ts, directSink.ts) that also computes their MD5; real signed
// payload hashes are checked on the way. A body that fails any check is deleted
// before the error is answered, and the rest of it is drained so the client
// still reads that answer.

import { createHash } from 'node:crypto';
import { unlink } from 'node:fs/promises';
import type { IncomingMessage } from 'node:http';
import type { Readable } from 'node:stream';
import { AwsChunkedDecoder, isStreamingPayload } from './chunked.js';
import { DIRECT_BLOCK, directSink } from './directSink.js';
import { s3err } from './errors.js';
import { cachedSink, type BodySink, type Received, type SinkHooks } from './fileSink.js';
import type { AuthContext } from './sigv4.js';

export type { Received } from './fileSink.js';

const SHA256_HEX = /^[0-9a-f]{64}$/;

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

/** The body's size as its headers declare it (0 when they do not). */
function declaredSize(req: IncomingMessage, auth: AuthContext): number {
  const header = req.headers[isStreamingPayload(auth.payloadHash) ? 'x-amz-decoded-content-length' : 'content-length'];
  const n = Number(header);
  return Number.isSafeInteger(n) && n > 0 ? n : 0;
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
  let source: Readable | undefined;
  let fail: (err: Error) => void = () => undefined;
  const hooks: SinkHooks = { resume: () => source?.resume(), fail: (err) => fail(err) };
  // A body of at least one buffer goes past the page cache where it can.
  const sink: BodySink = (declaredSize(req, auth) >= DIRECT_BLOCK ? directSink(path, hooks) : undefined) ?? cachedSink(path, hooks);
  const sha = SHA256_HEX.test(auth.payloadHash) ? createHash('sha256') : undefined;
  let decoder: AwsChunkedDecoder | undefined;
  try {
    const body = bodySource(req, auth);
    const from = (source = body.source);
    decoder = body.decoder;
    await new Promise<void>((resolve, reject) => {
      const onData = (chunk: Buffer): void => {
        sha?.update(chunk);
        if (!sink.write(chunk)) from.pause();
      };
      fail = (err: Error): void => {
        from.off('data', onData);
        reject(err);
      };
      from.on('data', onData);
      from.once('end', resolve);
      from.once('error', fail);
      req.once('close', () => {
        if (!req.complete) fail(aborted());
      });
      // The client may have gone while we awaited: then no event will ever come.
      if (req.destroyed && !req.complete) fail(aborted());
    });
    const got = await sink.end();
    checkDigests(req, auth, sha?.digest('hex'), got.md5);
    return got;
  } catch (err) {
    drain(req, decoder);
    try {
      await sink.abort();
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
