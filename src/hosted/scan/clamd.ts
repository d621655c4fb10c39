// A small clamd client: PING, and INSTREAM of a byte stream. INSTREAM sends the
// bytes as chunks, each after its length as a 4-byte big-endian integer, then a
// zero length; clamd answers one line: `stream: OK`, `stream: NAME FOUND`, or
// `... ERROR` (e.g. "INSTREAM size limit exceeded" past its StreamMaxLength).
// The stream is piped with back-pressure, so a large object is never whole in
// memory; a socket that stays silent longer than `timeoutMs` fails the scan.
import net from 'node:net';
import type { Readable } from 'node:stream';
import type { ClamdAddress } from '../config.js';

export type ScanVerdict = { clean: true } | { clean: false; signature: string };

/** clamd could not be asked (unreachable, silent, connection broken): worth another try later. */
export class ClamdUnavailableError extends Error {
  constructor(
    message: string,
    /** The socket's error code, when there was one (EPIPE: clamd closed while we were sending). */
    readonly code?: string,
  ) {
    super(message);
  }
}

/** clamd answered ERROR. `sizeLimit`: the stream is larger than its StreamMaxLength, which no retry changes. */
export class ClamdScanError extends Error {
  constructor(
    message: string,
    readonly sizeLimit: boolean,
  ) {
    super(message);
  }
}

/** clamd takes chunks of any size; this keeps each write small and the socket's buffer bounded. */
const CHUNK = 64 * 1024;

/** Connecting takes no longer than this, however long a scan may stay silent. */
const CONNECT_TIMEOUT_MS = 10_000;

function connect(addr: ClamdAddress, timeoutMs: number): Promise<net.Socket> {
  return new Promise((resolve, reject) => {
    const sock = 'path' in addr ? net.createConnection({ path: addr.path }) : net.createConnection({ host: addr.host, port: addr.port });
    sock.setTimeout(Math.min(timeoutMs, CONNECT_TIMEOUT_MS));
    const fail = (err: Error) => {
      sock.destroy();
      reject(new ClamdUnavailableError(`clamd cannot be reached: ${err.message}`));
    };
    sock.once('error', fail);
    sock.once('timeout', () => fail(new Error('connect timed out')));
    sock.once('connect', () => {
      sock.removeListener('error', fail);
      sock.removeAllListeners('timeout');
      resolve(sock);
    });
  });
}

/** Collects clamd's answer up to its NUL (z-commands) or the socket's end. */
function answer(sock: net.Socket, timeoutMs: number): Promise<string> {
  return new Promise((resolve, reject) => {
    let text = '';
    let settled = false;
    const done = (err?: Error) => {
      if (settled) return;
      settled = true;
      sock.destroy();
      if (err) reject(err);
      else resolve(text.replace(/\0.*$/s, '').trim());
    };
    sock.setTimeout(timeoutMs);
    sock.on('data', (b: Buffer) => {
      text += b.toString('utf8');
      if (text.includes('\0')) done();
    });
    sock.on('end', () => done());
    sock.on('close', () => done());
    sock.on('timeout', () => done(new ClamdUnavailableError(`clamd stayed silent for ${timeoutMs} ms`)));
    sock.on('error', (err: NodeJS.ErrnoException) => done(text ? undefined : new ClamdUnavailableError(`clamd connection failed: ${err.message}`, err.code)));
  });
}

/** The verdict in clamd's INSTREAM answer line. */
export function parseVerdict(line: string): ScanVerdict {
  const body = line.replace(/^stream:\s*/, '');
  if (body === 'OK') return { clean: true };
  const found = /^(.*) FOUND$/.exec(body);
  if (found) return { clean: false, signature: found[1]!.trim() };
  const error = /^(.*) ERROR$/.exec(body);
  if (error) return throwError(error[1]!.trim());
  throw new ClamdScanError(`clamd answered something unexpected: ${line.slice(0, 200)}`, false);
}

function throwError(why: string): never {
  throw new ClamdScanError(`clamd: ${why}`, /size limit/i.test(why));
}

export async function ping(addr: ClamdAddress, timeoutMs: number): Promise<boolean> {
  const t = Math.min(timeoutMs, CONNECT_TIMEOUT_MS);
  try {
    const sock = await connect(addr, t);
    const reply = answer(sock, t);
    sock.write('zPING\0');
    return (await reply) === 'PONG';
  } catch {
    return false;
  }
}

/** Streams `body` to clamd and answers its verdict. `signal` stops the scan (the socket is closed). */
export async function scanStream(addr: ClamdAddress, body: Readable, timeoutMs: number, signal?: AbortSignal): Promise<ScanVerdict> {
  const sock = await connect(addr, timeoutMs);
  const reply = answer(sock, timeoutMs);
  reply.catch(() => undefined); // awaited below, once the bytes are sent
  const onAbort = () => sock.destroy(new Error('scan stopped'));
  signal?.addEventListener('abort', onAbort, { once: true });
  let sendError: unknown;
  try {
    sock.write('zINSTREAM\0');
    for await (const piece of body) {
      // clamd answers early (and closes) when the stream passes its limit: stop sending then.
      if (sock.destroyed || sock.writableEnded) break;
      const buf = Buffer.isBuffer(piece) ? piece : Buffer.from(piece as Uint8Array);
      for (let at = 0; at < buf.length && !sock.destroyed; at += CHUNK) {
        const part = buf.subarray(at, at + CHUNK);
        const len = Buffer.alloc(4);
        len.writeUInt32BE(part.length);
        sock.write(len);
        if (!sock.write(part)) await drained(sock);
      }
    }
    if (!sock.destroyed) sock.write(Buffer.alloc(4));
  } catch (err) {
    sendError = err;
    body.destroy();
    sock.destroy();
  } finally {
    signal?.removeEventListener('abort', onAbort);
  }
  let line: string;
  try {
    line = await reply;
  } catch (err) {
    if (signal?.aborted) throw new Error('scan stopped');
    if (sendError) throw sendError;
    // clamd closes an INSTREAM early only past its StreamMaxLength; its answer saying so
    // may be lost with the connection (our next write fails first). If clamd still
    // answers PING, that is what happened; if not, clamd is down.
    if (err instanceof ClamdUnavailableError && (err.code === 'EPIPE' || err.code === 'ECONNRESET') && (await ping(addr, timeoutMs))) {
      throw new ClamdScanError('clamd closed the stream before its end: INSTREAM size limit exceeded (StreamMaxLength)', true);
    }
    throw err;
  }
  if (signal?.aborted) throw new Error('scan stopped');
  if (!line && sendError) throw sendError;
  return parseVerdict(line);
}

/** Resolves when the socket can take more, or it closed (the answer then says why). */
function drained(sock: net.Socket): Promise<void> {
  return new Promise((resolve) => {
    if (sock.destroyed) return resolve();
    const done = () => {
      sock.removeListener('drain', done);
      sock.removeListener('close', done);
      resolve();
    };
    sock.once('drain', done);
    sock.once('close', done);
  });
}
