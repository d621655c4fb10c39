// For upload tests: a node:http forwarder between the agent and an embedded
// object store. The hosted service is started with the proxy as its external S3
// endpoint, so every blueprint URL goes through it (the Host header is passed
// on unchanged, so SigV4 still verifies). A rule picks a fault per part PUT;
// the proxy records every part PUT and the bytes the store accepted.
import fs from 'node:fs/promises';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { startServiceBehindProxy, type Proxied } from '../../helpers/proxiedService.js';
import { ownerActor, type Actor } from '../../helpers/auth.js';
import { signInAgent, startTestAgent, type TestAgent } from '../../helpers/agent.js';
import type { AgentFlags } from '../../../src/agent/config.js';
import { SINGLE_PUT } from '../../../src/api/hosted/files.js';

export interface PartPut {
  /** Object key path (/bucket/packages/...). */
  key: string;
  /** SINGLE_PUT for a PutObject of a whole file. */
  uploadId: string;
  partNumber: number;
  /** 1 for the first PUT of this part, 2 for the second... */
  n: number;
}

export type UploadFault =
  | 'pass'
  /** Destroys the connection before answering. */
  | 'reset'
  /** Reads nothing and answers nothing until the client gives up. */
  | 'stall'
  /** Reads the whole body and answers nothing until the client gives up. */
  | 'mute'
  /** Swallows the body and answers 200 with an ETag that is not its MD5. */
  | 'bad-etag'
  | { status: number }
  | { delayMs: number }
  /**
   * Reads the whole body and holds it until release(), then forwards it unless the
   * client closed the request meanwhile (a store that waits for the test; a client
   * that gives up is seen at once, as it is not with delayMs, whose unread socket hides the close).
   */
  | 'hold';

export interface UploadProxy {
  url: string;
  rule: (p: PartPut) => UploadFault;
  /**
   * Every part PUT seen, with its fault and (when forwarded) the store's status.
   * `clientClosedAt` (Date.now()) is set when the client closed the request before
   * the proxy's answer to it was complete (an abort); closes the proxy makes itself
   * (a reset, a broken upstream, close()) do not count.
   */
  puts: (PartPut & { fault: UploadFault; status?: number; bytes?: number; clientClosedAt?: number } & Opened)[];
  /** Sum of part bodies the store answered 200 for. */
  storedBytes: number;
  /** Every ranged GET seen (a download's ranges), with the store's status when forwarded. */
  gets: RangeGet[];
  /** How long each ranged GET waits before it is forwarded (a slow store). */
  getDelayMs: number;
  /** Lets the parts held so far go on to the store (those whose client is still there). */
  release(): void;
  close(): Promise<void>;
}

export interface RangeGet { key: string; range: string; status?: number }

/**
 * When a request came and when the store's answer to it was passed on whole (or
 * it closed before), on one counter of the proxy's (not a clock): two requests
 * were open at the store together when each came before the other's close.
 */
export interface Opened { at: number; closedAt?: number }

/** The most requests of `seen` open at once. */
export function peakOpen(seen: Opened[]): number {
  const edges = seen.flatMap((r) => [[r.at, 1], [r.closedAt ?? Infinity, -1]] as const).sort((a, b) => a[0] - b[0]);
  let open = 0;
  let peak = 0;
  for (const [, d] of edges) peak = Math.max(peak, (open += d));
  return peak;
}

/** What a proxy saw; a proxy started again on the same port goes on with the same log. */
export interface ProxyLog { puts: UploadProxy['puts']; gets: RangeGet[]; counts: Map<string, number>; /** The counter of Opened. */ clock: number }

export async function startUploadProxy(target: string, o: { port?: number; log?: ProxyLog } = {}): Promise<UploadProxy & { log: ProxyLog }> {
  const upstream = new URL(target);
  const log: ProxyLog = o.log ?? { puts: [], gets: [], counts: new Map(), clock: 0 };
  const counts = log.counts;
  const held = new Set<http.IncomingMessage>();
  /** What release() does for each part held by 'hold'. */
  const onRelease: (() => void)[] = [];
  /** Answers the proxy itself cut off: their close is not the client's doing. */
  const cut = new WeakSet<http.ServerResponse>();
  let closing = false;
  const proxy: UploadProxy & { log: ProxyLog } = {
    url: '',
    rule: () => 'pass',
    puts: log.puts,
    gets: log.gets,
    getDelayMs: 0,
    log,
    storedBytes: 0,
    release: () => {
      for (const go of onRelease.splice(0)) go();
    },
    close: async () => {
      closing = true;
      for (const r of held) r.socket.destroy();
      server.closeAllConnections();
      await new Promise<void>((r) => server.close(() => r()));
    },
  };

  const forward = (req: http.IncomingMessage, res: http.ServerResponse, seen?: (typeof proxy.puts)[number], body?: Buffer, got?: RangeGet) => {
    let bytes = body?.length ?? 0;
    if (!body) req.on('data', (c: Buffer) => (bytes += c.length));
    const up = http.request({ host: upstream.hostname, port: upstream.port, method: req.method, path: req.url, headers: req.headers }, (ur) => {
      if (got) got.status = ur.statusCode;
      // The store's whole answer is passed on: the part is no longer open at the store, whenever the socket closes.
      if (seen) ur.once('end', () => void (seen.closedAt ??= ++log.clock));
      if (seen) {
        seen.status = ur.statusCode;
        seen.bytes = bytes;
        if (ur.statusCode === 200) proxy.storedBytes += bytes;
      }
      res.writeHead(ur.statusCode ?? 502, ur.headers);
      ur.pipe(res);
    });
    up.on('error', () => {
      cut.add(res);
      res.destroy();
    });
    res.on('close', () => {
      if (!res.writableFinished) up.destroy();
    });
    if (body) up.end(body);
    else req.pipe(up);
  };

  const server = http.createServer(async (req, res) => {
    const u = new URL(req.url ?? '/', 'http://x');
    // A PutObject (a file put in one request: SINGLE_PUT) counts as that file's part 1.
    const objectPut = req.method === 'PUT' && !u.searchParams.has('partNumber') && u.pathname.split('/').length > 2;
    const partNumber = objectPut ? 1 : Number(u.searchParams.get('partNumber'));
    if (req.method === 'GET' && typeof req.headers.range === 'string') {
      const got: RangeGet = { key: u.pathname, range: req.headers.range };
      log.gets.push(got);
      if (proxy.getDelayMs > 0) {
        req.pause();
        await new Promise((r) => setTimeout(r, proxy.getDelayMs));
        if (req.destroyed || closing) return;
      }
      return forward(req, res, undefined, undefined, got);
    }
    if (req.method !== 'PUT' || !partNumber) return forward(req, res);
    const part: PartPut = { key: u.pathname, uploadId: objectPut ? SINGLE_PUT : (u.searchParams.get('uploadId') ?? ''), partNumber, n: 0 };
    const k = `${part.key} ${part.uploadId} ${partNumber}`;
    part.n = (counts.get(k) ?? 0) + 1;
    counts.set(k, part.n);
    const fault = proxy.rule(part);
    const seen: (typeof proxy.puts)[number] = { ...part, fault, at: ++log.clock };
    proxy.puts.push(seen);
    res.once('close', () => {
      seen.closedAt ??= ++log.clock;
      if (!res.writableFinished && !closing && !cut.has(res)) seen.clientClosedAt = Date.now();
    });

    if (fault === 'reset') {
      cut.add(res);
      return req.socket.destroy();
    }
    if (fault === 'stall' || fault === 'mute') {
      held.add(req);
      if (fault === 'stall') req.pause();
      else req.resume();
      req.socket.once('close', () => held.delete(req));
      return;
    }
    if (fault === 'bad-etag') {
      req.resume();
      req.once('end', () => {
        res.writeHead(200, { etag: '"00000000000000000000000000000000"', 'content-length': '0' });
        res.end();
      });
      return;
    }
    if (typeof fault === 'object' && 'status' in fault) {
      req.resume();
      const code = fault.status === 403 ? 'AccessDenied' : 'InternalError';
      res.writeHead(fault.status, { 'content-type': 'application/xml' });
      return res.end(`<?xml version="1.0" encoding="UTF-8"?><Error><Code>${code}</Code><Message>injected</Message></Error>`);
    }
    if (typeof fault === 'object' && 'delayMs' in fault) {
      req.pause();
      await new Promise((r) => setTimeout(r, fault.delayMs));
      if (req.destroyed) return;
    }
    if (fault === 'hold') {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      const body = new Promise<Buffer>((whole) => req.once('end', () => whole(Buffer.concat(chunks))));
      onRelease.push(() => void body.then((b) => {
        if (seen.clientClosedAt === undefined && !res.destroyed) forward(req, res, seen, b);
      }));
      return;
    }
    forward(req, res, seen);
  });
  await new Promise<void>((r) => server.listen(o.port ?? 0, '127.0.0.1', r));
  proxy.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return proxy;
}

export type ProxiedUploads = Proxied<UploadProxy>;

/** A hosted service whose storage is a separately started embedded store behind the proxy. */
export const startProxiedUploads = (flags: Record<string, string> = {}): Promise<ProxiedUploads> => startServiceBehindProxy(startUploadProxy, flags);

/** A test's whole setup: the proxied service, its owner, an agent signed in as the owner, and a temp dir. */
export interface ProxiedAgent {
  env: ProxiedUploads;
  owner: Actor;
  agent: TestAgent;
  tmp: string;
  /** Stops the agent and the service, and removes the temp dir. */
  close(): Promise<void>;
}

export async function startProxiedAgent(name: string, flags: AgentFlags): Promise<ProxiedAgent> {
  const env = await startProxiedUploads();
  let agent: TestAgent | undefined;
  let tmp: string | undefined;
  const close = async (): Promise<void> => {
    await agent?.close();
    await env.close();
    if (tmp) await fs.rm(tmp, { recursive: true, force: true });
  };
  try {
    const owner = await ownerActor(env.svc);
    tmp = await fs.mkdtemp(path.join(os.tmpdir(), `ferry-${name}-`));
    agent = await startTestAgent(env.svc, flags);
    await signInAgent(agent.url, env.svc);
    return { env, owner, agent, tmp, close };
  } catch (err) {
    await close();
    throw err;
  }
}
