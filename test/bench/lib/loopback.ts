// Pieces shared by the benchmarks: the raw loopback server (the ceiling any
// HTTP transfer on this machine can reach) and the client that drives it.
import { execFileSync } from 'node:child_process';
import { createReadStream } from 'node:fs';
import type { FileHandle } from 'node:fs/promises';
import http from 'node:http';
import { pipeline } from 'node:stream/promises';

export const MiB = 1024 * 1024;

/** MiB per second for `bytes` moved in `ms`. */
export const mbps = (bytes: number, ms: number): number => bytes / MiB / (ms / 1000);

/** A figure for a table: `d` decimals, or '-' when it was not measured. */
export const fmt = (n: number | undefined, d = 0): string => (n === undefined || !Number.isFinite(n) ? '-' : n.toFixed(d));

/** A node:http server that discards uploaded bodies and streams zeros for (ranged) GETs. */
export async function serveRaw(): Promise<http.Server> {
  const zeros = Buffer.alloc(MiB);
  const server = http.createServer((req, res) => {
    if (req.method === 'GET') {
      const m = /bytes=(\d+)-(\d+)/.exec(req.headers.range ?? '');
      let left = m ? Number(m[2]) - Number(m[1]) + 1 : 0;
      res.writeHead(m ? 206 : 200, { 'Content-Length': left });
      const pump = (): void => {
        while (left > 0) {
          const n = Math.min(left, zeros.length);
          left -= n;
          if (!res.write(n === zeros.length ? zeros : zeros.subarray(0, n))) return void res.once('drain', pump);
        }
        res.end();
      };
      return pump();
    }
    req.resume();
    req.on('end', () => {
      res.writeHead(200, { ETag: '"00000000000000000000000000000000"', 'Content-Length': 0 });
      res.end();
    });
  });
  await new Promise<void>((ok) => server.listen(0, '127.0.0.1', ok));
  return server;
}

/** Runs fn(0..count-1) with at most `width` calls in flight. */
export async function pool(count: number, width: number, fn: (i: number) => Promise<void>): Promise<void> {
  let next = 0;
  await Promise.all(Array.from({ length: Math.min(width, count) }, async () => {
    while (next < count) await fn(next++);
  }));
}

/**
 * Flush dirty pages before each timed phase (outside the timing). Otherwise a
 * phase that follows 1-2 GiB of fresh writes (the source file, the server's
 * copy) is throttled by the kernel's writeback while the raw target, which
 * stores nothing, is not: that would measure the disk, not the server.
 */
export function settleDisk(): void {
  try {
    execFileSync('sync');
  } catch {
    // No sync(1) here (e.g. Windows): measure as is.
  }
}

/**
 * Node's documented keep-alive race: a request sent on a pooled socket the server
 * closed meanwhile (s3rver closes idle ones after 5 s, and its complete takes
 * longer) fails with ECONNRESET before any answer. Such a request is sent again, once.
 */
async function onceMoreIfStale<T>(send: () => Promise<T>): Promise<T> {
  try {
    return await send();
  } catch (err) {
    if ((err as { stale?: boolean }).stale) return send();
    throw err;
  }
}

/** The request's error, marked stale when it is that race. */
function requestError(req: http.ClientRequest, err: NodeJS.ErrnoException): Error {
  return Object.assign(err, { stale: req.reusedSocket && err.code === 'ECONNRESET' });
}

/** PUT bytes [start, end] of `file` to a pre-signed URL; resolves the ETag. */
export function putRange(agent: http.Agent, url: string, file: string, start: number, end: number): Promise<string> {
  return onceMoreIfStale(() => new Promise((ok, fail) => {
    const req = http.request(url, { method: 'PUT', agent, headers: { 'Content-Length': end - start + 1 } }, (res) => {
      res.resume();
      res.on('end', () => (res.statusCode === 200 ? ok(String(res.headers.etag)) : fail(new Error(`PUT ${res.statusCode}`))));
    });
    req.on('error', (err) => fail(requestError(req, err)));
    pipeline(createReadStream(file, { start, end, highWaterMark: MiB }), req).catch((err) => fail(requestError(req, err)));
  }));
}

/** GET bytes [start, end] and write them at the same offset of the open file. */
export function getRange(agent: http.Agent, url: string, fh: FileHandle, start: number, end: number): Promise<void> {
  return onceMoreIfStale(() => new Promise((ok, fail) => {
    const req = http.get(url, { agent, headers: { Range: `bytes=${start}-${end}` } }, (res) => {
      if (res.statusCode !== 206) return fail(new Error(`GET ${res.statusCode}`));
      void (async () => {
        let pos = start;
        let batch: Buffer[] = [];
        let size = 0;
        const flush = async (): Promise<void> => {
          await fh.writev(batch, pos);
          pos += size;
          batch = [];
          size = 0;
        };
        for await (const chunk of res as AsyncIterable<Buffer>) {
          batch.push(chunk);
          size += chunk.length;
          if (size >= MiB) await flush();
        }
        if (size) await flush();
        if (pos !== end + 1) throw new Error(`short range ${start}-${end}: got to ${pos}`);
      })().then(ok, fail);
    });
    req.on('error', (err) => fail(requestError(req, err)));
  }));
}
