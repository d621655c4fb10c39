// A node:http forwarder in front of an object store, for download tests: it
// counts the bytes it serves, and a rule picks a fault per request (answer an
// HTTP error, reset the connection, cut or stall the body halfway, hold the
// request until released, or pace it). The hosted service is started with the
// proxy as its external S3 endpoint, so every pre-signed URL goes through it.
// The Host header is passed on unchanged, so SigV4 signatures still verify.
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { startServiceBehindProxy, type Proxied } from './proxiedService.js';

export interface SeenRequest {
  method: string;
  /** Path without the query string (the object key for path-style requests). */
  path: string;
  /** Inclusive range asked for, when a Range header was sent. */
  range?: [number, number];
  /** 1 for the first request of this method + path + range, 2 for the second... */
  n: number;
  /** The query string, without the `?` ('' for none). */
  query: string;
  headers: http.IncomingHttpHeaders;
}

/**
 * `at` when the request came and `closedAt` when the last byte of its answer was
 * written (or it closed before), on one counter of the proxy's (not a clock): the
 * time the request was open at the store, whatever the pace adds after the last byte.
 */
export type Seen = SeenRequest & { fault: Fault; bytes: number; at: number; closedAt?: number };

export type Fault = 'pass' | 'hold' | 'reset' | 'cut-body' | 'stall-body' | { status: number; code?: string };

export interface S3Proxy {
  url: string;
  /** Decides what happens to each request; 'pass' by default. */
  rule: (r: SeenRequest) => Fault;
  /** Every request seen, with the fault applied and the body bytes of its answer written so far. */
  seen: Seen[];
  /** Body bytes of GET answers written to clients. */
  bytesServed: number;
  /** The objects removed many at once (DeleteObjects, `POST /bucket?delete`), as `/bucket/key` paths, one entry per key asked. */
  deletedMany: string[];
  /** Bytes per second per answer, 0 for no pacing. */
  pace: number;
  /** Requests waiting on 'hold'. */
  held(): number;
  /** Answers being forwarded right now. */
  active(): number;
  /** Lets every held request through. */
  release(): void;
  close(): Promise<void>;
}

function parseRange(h: string | undefined): [number, number] | undefined {
  const m = h ? /^bytes=(\d+)-(\d+)$/.exec(h) : null;
  return m ? [Number(m[1]), Number(m[2])] : undefined;
}

/** Resolves once `res` can take more, or is closed (then no 'drain' ever comes). */
function drainedOrClosed(res: http.ServerResponse): Promise<void> {
  return new Promise((resolve) => {
    const done = (): void => {
      res.off('drain', done);
      res.off('close', done);
      resolve();
    };
    res.once('drain', done);
    res.once('close', done);
  });
}

/** Copies the store's answer to the client, applying the body faults and the pace. */
async function copyAnswer(
  ur: http.IncomingMessage,
  res: http.ServerResponse,
  fault: Fault,
  served: (n: number) => void,
  pace: () => number,
  stalled: Set<http.ServerResponse>,
  wroteAll: () => void = () => {},
): Promise<void> {
  const total = Number(ur.headers['content-length'] ?? 0);
  let sent = 0;
  for await (const chunk of ur as AsyncIterable<Buffer>) {
    if (res.destroyed) return void ur.destroy();
    let buf = chunk;
    if ((fault === 'cut-body' || fault === 'stall-body') && sent + buf.length >= total / 2) {
      buf = buf.subarray(0, Math.max(0, Math.floor(total / 2) - sent));
      if (buf.length) res.write(buf);
      served(buf.length);
      ur.destroy();
      if (fault === 'cut-body') res.socket?.destroy();
      else stalled.add(res); // keeps the connection open and silent
      return;
    }
    sent += buf.length;
    served(buf.length);
    const ok = res.write(buf);
    if (sent >= total) wroteAll();
    if (pace() > 0) await new Promise((r) => setTimeout(r, (buf.length / pace()) * 1000));
    else if (!ok) await drainedOrClosed(res);
  }
  res.end();
}

const unescapeXml = (t: string) => t.replace(/&(lt|gt|quot|apos|amp);/g, (_, e: string) => ({ lt: '<', gt: '>', quot: '"', apos: "'", amp: '&' })[e]!);

export async function startS3Proxy(target: string): Promise<S3Proxy> {
  const upstream = new URL(target);
  const counts = new Map<string, number>();
  let waiting: (() => void)[] = [];
  const stalled = new Set<http.ServerResponse>();
  let forwarding = 0;
  let clock = 0;

  const proxy: S3Proxy = {
    url: '',
    rule: () => 'pass',
    seen: [],
    deletedMany: [],
    bytesServed: 0,
    pace: 0,
    held: () => waiting.length,
    active: () => forwarding,
    release() {
      const w = waiting;
      waiting = [];
      for (const go of w) go();
    },
    close: async () => {
      proxy.release();
      for (const res of stalled) res.destroy();
      server.closeAllConnections();
      await new Promise<void>((r) => server.close(() => r()));
    },
  };

  const server = http.createServer(async (req, res) => {
    const p = (req.url ?? '/').split('?')[0]!;
    const range = parseRange(req.headers.range);
    const key = `${req.method} ${p} ${range?.join('-') ?? ''}`;
    const n = (counts.get(key) ?? 0) + 1;
    counts.set(key, n);
    const query = (req.url ?? '').includes('?') ? (req.url ?? '').slice((req.url ?? '').indexOf('?') + 1) : '';
    const seen: SeenRequest = { method: req.method ?? 'GET', path: p, range, n, query, headers: req.headers };
    const fault = proxy.rule(seen);
    const entry: Seen = { ...seen, fault, bytes: 0, at: ++clock };
    proxy.seen.push(entry);
    const closed = () => void (entry.closedAt ??= ++clock);
    res.once('close', closed);
    const served = (n: number) => {
      entry.bytes += n;
      if (req.method === 'GET') proxy.bytesServed += n;
    };

    if (fault === 'reset') return req.socket.destroy();
    if (typeof fault === 'object') {
      req.resume();
      const code = fault.code ?? (fault.status === 403 ? 'AccessDenied' : 'InternalError');
      res.writeHead(fault.status, { 'content-type': 'application/xml' });
      return res.end(`<?xml version="1.0" encoding="UTF-8"?><Error><Code>${code}</Code><Message>injected</Message></Error>`);
    }
    if (fault === 'hold') {
      let gone = false;
      res.once('close', () => (gone = true));
      await new Promise<void>((r) => waiting.push(r));
      if (gone) return;
    }

    if (req.method === 'POST' && /^delete(=|&|$)/.test(query)) {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        for (const m of Buffer.concat(chunks).toString('utf8').matchAll(/<Key>([^<]*)<\/Key>/g)) proxy.deletedMany.push(`${p.replace(/\/+$/, '')}/${unescapeXml(m[1]!)}`);
      });
    }

    forwarding++;
    res.once('close', () => forwarding--);
    const up = http.request(
      { host: upstream.hostname, port: upstream.port, method: req.method, path: req.url, headers: req.headers },
      (ur) => {
        res.writeHead(ur.statusCode ?? 502, ur.headers);
        // A client that goes away (res closed, so `up` destroyed) makes `ur` fail with "aborted": nothing is left to answer.
        copyAnswer(ur, res, fault, served, () => proxy.pace, stalled, closed).catch(() => res.destroy());
      },
    );
    up.on('error', () => res.destroy());
    res.on('close', () => {
      if (!res.writableFinished) up.destroy();
    });
    req.pipe(up);
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  proxy.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return proxy;
}

export type ProxiedService = Proxied<S3Proxy>;

/** A hosted service whose storage is a separately started embedded store behind the proxy. */
export const startProxiedService = (): Promise<ProxiedService> => startServiceBehindProxy(startS3Proxy);
