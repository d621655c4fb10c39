// Decoder for `Content-Encoding: aws-chunked` bodies, which AWS SDKs send for
// STREAMING-* payload hashes:
//   <hex-size>[;chunk-signature=<sig>]\r\n<data>\r\n ... 0[;chunk-signature=..]\r\n[trailers\r\n]\r\n
// Data is passed on as slices of the incoming buffers (no copy). When the
// payload is signed, every chunk signature is checked against the chain that
// starts at the request's seed signature, so a body cannot be swapped under a
// valid header.

import { createHash, type Hash } from 'node:crypto';
import { Transform, type TransformCallback } from 'node:stream';
import { s3err } from './errors.js';
import { chunkSignature, signaturesEqual, type AuthContext } from './sigv4.js';

const MAX_LINE = 8192;

export function isStreamingPayload(payloadHash: string): boolean {
  return payloadHash.startsWith('STREAMING-');
}

export class AwsChunkedDecoder extends Transform {
  private state: 'size' | 'data' | 'crlf' | 'trailer' | 'done' = 'size';
  private line = '';
  private remaining = 0;
  private crlfSeen = 0;
  private chunkSig = '';
  private previousSig: string;
  private chunkHash: Hash | undefined;
  private readonly verify: boolean;
  decodedBytes = 0;

  constructor(
    private readonly auth: AuthContext,
    private readonly expectedLength: number | undefined,
  ) {
    super({ readableHighWaterMark: 1 << 20 });
    this.verify = auth.payloadHash.startsWith('STREAMING-AWS4-HMAC-SHA256-PAYLOAD');
    this.previousSig = auth.seedSignature;
  }

  override _transform(chunk: Buffer, _enc: BufferEncoding, cb: TransformCallback): void {
    try {
      this.consume(chunk);
      cb();
    } catch (err) {
      cb(err as Error);
    }
  }

  override _flush(cb: TransformCallback): void {
    if (this.state !== 'done') return cb(s3err('IncompleteBody', 'The request body terminated unexpectedly'));
    if (this.expectedLength !== undefined && this.decodedBytes !== this.expectedLength) {
      return cb(s3err('IncompleteBody', 'You did not provide the number of bytes specified by x-amz-decoded-content-length'));
    }
    cb();
  }

  /** Reads up to and including '\n'; returns the line without CRLF, or undefined if incomplete. */
  private takeLine(buf: Buffer, at: number): [string | undefined, number] {
    const nl = buf.indexOf(10, at);
    const end = nl < 0 ? buf.length : nl + 1;
    this.line += buf.toString('latin1', at, end);
    if (this.line.length > MAX_LINE) throw s3err('IncompleteBody', 'aws-chunked framing is malformed');
    if (nl < 0) return [undefined, end];
    const line = this.line.replace(/\r?\n$/, '');
    this.line = '';
    return [line, end];
  }

  private consume(buf: Buffer): void {
    let i = 0;
    while (i < buf.length) {
      switch (this.state) {
        case 'size': {
          const [line, next] = this.takeLine(buf, i);
          i = next;
          if (line !== undefined) this.startChunk(line);
          break;
        }
        case 'data': {
          const n = Math.min(this.remaining, buf.length - i);
          const slice = buf.subarray(i, i + n);
          this.chunkHash?.update(slice);
          this.push(slice);
          this.decodedBytes += n;
          this.remaining -= n;
          i += n;
          if (this.remaining === 0) {
            this.endChunk();
            this.state = 'crlf';
            this.crlfSeen = 0;
          }
          break;
        }
        case 'crlf': {
          const expected = this.crlfSeen === 0 ? 13 : 10;
          if (buf[i] !== expected) throw s3err('IncompleteBody', 'aws-chunked framing is malformed');
          i++;
          if (++this.crlfSeen === 2) this.state = 'size';
          break;
        }
        case 'trailer': {
          // Trailing checksums (x-amz-checksum-*) are accepted as-is; an empty line ends the body.
          const [line, next] = this.takeLine(buf, i);
          i = next;
          if (line === '') this.state = 'done';
          break;
        }
        case 'done':
          // Some clients add a stray CRLF; anything else is a framing error.
          if (buf[i] !== 13 && buf[i] !== 10) throw s3err('IncompleteBody', 'Unexpected data after the final chunk');
          i++;
          break;
      }
    }
  }

  private startChunk(line: string): void {
    const [sizeHex = '', ...ext] = line.split(';');
    if (!/^[0-9a-fA-F]{1,16}$/.test(sizeHex)) throw s3err('IncompleteBody', 'aws-chunked framing is malformed');
    this.remaining = parseInt(sizeHex, 16);
    const sig = ext.map((e) => e.trim()).find((e) => e.startsWith('chunk-signature='));
    this.chunkSig = sig ? sig.slice('chunk-signature='.length) : '';
    if (this.verify) {
      if (!this.chunkSig) throw s3err('SignatureDoesNotMatch', 'Missing chunk signature');
      this.chunkHash = createHash('sha256');
    }
    if (this.remaining === 0) {
      this.endChunk();
      this.state = 'trailer';
    } else {
      this.state = 'data';
    }
  }

  private endChunk(): void {
    if (!this.verify || !this.chunkHash) return;
    const expected = chunkSignature(this.auth, this.previousSig, this.chunkHash.digest('hex'));
    if (!signaturesEqual(expected, this.chunkSig)) throw s3err('SignatureDoesNotMatch', 'Chunk signature mismatch');
    this.previousSig = this.chunkSig;
    this.chunkHash = undefined;
  }
}
