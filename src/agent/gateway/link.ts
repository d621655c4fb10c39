// One registered gateway's connection to its service: a WebSocket the agent
// opens OUT to GET /v1/storage_gateway/connect (the service never connects in),
// kept open, and opened again after a drop with a bounded, growing back-off
// (retry.ts's backoffMs: base doubling up to max, jittered). A try that fails
// before the socket opens is explained by a plain GET of the same address: 401
// means the service refuses the id or secret (state refused, tried again at the
// longest back-off), anything else is the network or the service (waiting).
// Requests that arrive are handed to `handle` one by one (each with a signal
// that aborts when the socket closes) and answered on the same socket.
import type { Logger } from 'pino';
import { Agent, request, WebSocket } from 'undici';
import {
  GATEWAY_CONNECT_PATH,
  GATEWAY_PROTOCOL,
  GatewayClose,
  GatewayHeader,
  GatewayOps,
  GatewayRequest,
  Welcome,
  type GatewayErrorCode,
  type GatewayOp,
  type GatewayProgress,
} from '../../api/hosted/storageGateway.js';
import type { GatewayState } from '../../api/agent/storageGateway.js';
import { bodyValidator } from '../../http/validation.js';
import { backoffMs, describe, type RetryPolicy } from '../engine/retry.js';
import type { GatewayRow } from '../store/gatewayStore.js';
import { networkWords } from './networkWords.js';

/** A refusal to answer the service with: a code of the protocol and why. */
export class GatewayFailure extends Error {
  constructor(
    readonly code: GatewayErrorCode,
    message: string,
  ) {
    super(message);
  }
}

export type Handler = (op: GatewayOp, args: Record<string, unknown>, signal: AbortSignal, progress: (p: Omit<GatewayProgress, 'type'>) => void) => Promise<object>;

export interface LinkDeps {
  log: Logger;
  policy: Pick<RetryPolicy, 'baseMs' | 'maxMs'>;
  version: string;
  handle: Handler;
  /** The link's state changed (for the /events feed). */
  changed(): void;
}

const validRequest = bodyValidator(GatewayRequest);
const validWelcome = bodyValidator(Welcome);
const validArgs = Object.fromEntries(Object.entries(GatewayOps).map(([op, s]) => [op, bodyValidator(s.args)])) as Record<GatewayOp, ReturnType<typeof bodyValidator>>;

/** Until the service's welcome says how often it sends, a socket silent this long is taken as dead. */
const FIRST_SILENCE_MS = 60_000;
/** How long the explaining GET may take. */
const PROBE_MS = 10_000;
/** A socket that does not finish its close handshake within this long is cut. */
const CLOSE_GRACE_MS = 2000;

interface Ended {
  /** The socket opened and the service welcomed it. */
  welcomed: boolean;
  /** Why it ended, for last_error: words a person reads. */
  why: string;
  refused: boolean;
  /** The technical code behind `why` (ECONNREFUSED, a close code), for the log. */
  code?: string;
}

export const connectUrl = (serviceUrl: string) => `${serviceUrl.replace(/\/+$/, '')}${GATEWAY_CONNECT_PATH}`;

export function gatewayHeaders(g: Pick<GatewayRow, 'id' | 'secret' | 'permissions'>, version: string): Record<string, string> {
  return {
    [GatewayHeader.id]: g.id,
    [GatewayHeader.secret]: g.secret,
    [GatewayHeader.permissions]: g.permissions,
    [GatewayHeader.protocol]: String(GATEWAY_PROTOCOL),
    [GatewayHeader.version]: version,
  };
}

/**
 * Asks the service, without opening a socket, whether it takes the gateway's
 * credentials: 'ok' (it answers 426, upgrade required), or why not; `refused`
 * when it says the credentials (or the protocol) are wrong.
 */
export async function probeGateway(
  g: Pick<GatewayRow, 'id' | 'secret' | 'permissions' | 'service_url'>,
  version: string,
): Promise<{ ok: true } | { ok: false; refused: boolean; why: string; code: string }> {
  try {
    const res = await request(connectUrl(g.service_url), { method: 'GET', headers: gatewayHeaders(g, version), headersTimeout: PROBE_MS, bodyTimeout: PROBE_MS });
    const text = await res.body.text();
    if (res.statusCode === 426) return { ok: true };
    let message = text.slice(0, 300);
    try {
      const body = JSON.parse(text) as { message?: unknown };
      if (typeof body.message === 'string') message = body.message;
    } catch {
      // not JSON: the text as is
    }
    const refused = res.statusCode === 401 || res.statusCode === 400;
    return { ok: false, refused, why: `the service answered ${res.statusCode}: ${message}`, code: String(res.statusCode) };
  } catch (err) {
    const { words, code } = networkWords(err, g.service_url);
    return { ok: false, refused: false, why: `the service cannot be reached: ${words}`, code };
  }
}

export class GatewayLink {
  state: GatewayState = 'connecting';
  lastError: string | null = null;
  connectedAt: string | null = null;
  nextAttemptAt: string | null = null;
  /** When the state last changed: strictly increasing, so that the window can tell which of two records is newer. */
  changedAt = new Date().toISOString();
  private stopped = false;
  private socket: { ws: WebSocket; cut(): void } | undefined;
  private wake: (() => void) | undefined;
  private loopDone: Promise<void> = Promise.resolve();
  private readonly inflight = new Set<AbortController>();

  constructor(
    private g: GatewayRow,
    private readonly deps: LinkDeps,
  ) {}

  get id(): string {
    return this.g.id;
  }

  start(): void {
    this.loopDone = this.loop().catch((err) => this.deps.log.error({ err, gateway: this.g.id }, 'the storage gateway loop failed'));
  }

  /** Tries again now when it is waiting (the service came back, the machine woke up). */
  retryNow(): void {
    this.wake?.();
  }

  /** Drops the socket (after a sleep it may be dead); the loop opens another. */
  reconnect(): void {
    this.socket?.cut();
    this.wake?.();
  }

  /** Stops for good: the socket closes (the service shows the connection disconnected), requests under way abort. */
  async close(): Promise<void> {
    this.stopped = true;
    this.wake?.();
    this.abortAll();
    this.socket?.cut();
    await this.loopDone;
  }

  private set(state: GatewayState, extra: Partial<Pick<GatewayLink, 'lastError' | 'nextAttemptAt' | 'connectedAt'>> = {}): void {
    this.state = state;
    Object.assign(this, extra);
    this.changedAt = new Date(Math.max(Date.now(), Date.parse(this.changedAt) + 1)).toISOString();
    this.deps.changed();
  }

  private abortAll(): void {
    for (const ac of this.inflight) ac.abort(new Error('the socket to the service closed'));
    this.inflight.clear();
  }

  private async loop(): Promise<void> {
    let failures = 0;
    while (!this.stopped) {
      this.set('connecting', { nextAttemptAt: null });
      const ended = await this.connectOnce();
      if (this.stopped) break;
      // A connection that worked starts the back-off afresh; one replaced or refused at once does not.
      failures = ended.welcomed ? 1 : failures + 1;
      const delay = ended.refused ? this.deps.policy.maxMs : backoffMs(failures, this.deps.policy);
      const at = new Date(Date.now() + delay).toISOString();
      this.set(ended.refused ? 'refused' : 'waiting', { lastError: ended.why, nextAttemptAt: at, connectedAt: null });
      this.deps.log.info({ gateway: this.g.id, why: ended.why, code: ended.code, retry_in_ms: delay }, 'the storage gateway is not connected');
      await new Promise<void>((resolve) => {
        const timer = setTimeout(done, delay);
        function done() {
          clearTimeout(timer);
          resolve();
        }
        this.wake = done;
      });
      this.wake = undefined;
    }
  }

  /** One socket, from opening to its end. */
  private connectOnce(): Promise<Ended> {
    return new Promise<Ended>((resolve) => {
      let welcomed = false;
      let opened = false;
      let watchdog: NodeJS.Timeout | undefined;
      let silenceMs = FIRST_SILENCE_MS;
      const url = connectUrl(this.g.service_url).replace(/^http/, 'ws');
      // A dispatcher of its own: destroying it cuts a socket whose peer never answers the close.
      const dispatcher = new Agent({ connect: { timeout: PROBE_MS } });
      let ws: WebSocket;
      try {
        ws = new WebSocket(url, { headers: gatewayHeaders(this.g, this.deps.version), dispatcher });
      } catch (err) {
        void dispatcher.destroy().catch(() => {});
        return resolve({ welcomed: false, refused: true, why: `cannot open ${url}: ${describe(err)}` });
      }
      let grace: NodeJS.Timeout | undefined;
      const cut = () => {
        try {
          ws.close(1000, 'the gateway closes');
        } catch {
          // closing already
        }
        grace ??= setTimeout(() => void dispatcher.destroy().catch(() => {}), CLOSE_GRACE_MS);
        grace.unref();
      };
      this.socket = { ws, cut };
      const arm = () => {
        if (watchdog) clearTimeout(watchdog);
        watchdog = setTimeout(() => {
          this.deps.log.warn({ gateway: this.g.id, silent_ms: silenceMs }, 'the service went silent; reconnecting');
          cut();
        }, silenceMs);
        watchdog.unref();
      };
      const send = (frame: object) => {
        if (ws.readyState === WebSocket.OPEN) ws.send(JSON.stringify(frame));
      };
      ws.addEventListener('open', () => {
        opened = true;
        arm();
      });
      ws.addEventListener('message', (ev) => {
        arm();
        let frame: unknown;
        try {
          frame = typeof ev.data === 'string' ? JSON.parse(ev.data) : undefined;
        } catch {
          frame = undefined;
        }
        if (validWelcome(frame)) {
          const w = frame as Welcome;
          welcomed = true;
          silenceMs = Math.max(3 * w.heartbeat_ms, 1000);
          arm();
          this.set('connected', { lastError: null, connectedAt: new Date().toISOString(), nextAttemptAt: null });
          this.deps.log.info({ gateway: this.g.id, connection: w.connection_id }, 'the storage gateway is connected');
          return;
        }
        if ((frame as { type?: unknown })?.type === 'tick') return;
        if (validRequest(frame)) return void this.answer(frame as GatewayRequest, send);
        this.deps.log.warn({ gateway: this.g.id }, 'the service sent a frame this gateway does not know; ignored');
      });
      ws.addEventListener('error', () => {
        // 'close' follows with the reason.
      });
      ws.addEventListener('close', (ev) => {
        if (watchdog) clearTimeout(watchdog);
        if (grace) clearTimeout(grace);
        void dispatcher.destroy().catch(() => {});
        this.abortAll();
        if (this.socket?.ws === ws) this.socket = undefined;
        if (this.stopped) return resolve({ welcomed, refused: false, why: 'stopped' });
        if (!opened) {
          // The handshake failed: a plain GET says whether the service refuses us or cannot be reached.
          void probeGateway(this.g, this.deps.version).then((p) =>
            resolve(p.ok ? { welcomed, refused: false, why: 'the socket could not be opened' } : { welcomed, refused: p.refused, why: p.why, code: p.code }),
          );
          return;
        }
        if (ev.code === GatewayClose.revoked) return resolve({ welcomed, refused: true, why: `the service let the gateway go: ${ev.reason || 'revoked'}` });
        if (ev.code === GatewayClose.replaced) return resolve({ welcomed: false, refused: false, why: `another gateway connected with this id (${ev.reason || 'replaced'})` });
        // 1006: no close frame (the service stopped, the network dropped); the code stays in the log.
        resolve({ welcomed, refused: false, why: ev.reason ? `the service closed the connection: ${ev.reason}` : 'the connection to the service dropped', code: String(ev.code) });
      });
    });
  }

  private async answer(req: GatewayRequest, send: (frame: object) => void): Promise<void> {
    const ac = new AbortController();
    this.inflight.add(ac);
    try {
      const args = req.args;
      const op = req.op as GatewayOp;
      const valid = validArgs[op] as (x: unknown) => boolean;
      if (!valid(args)) throw new GatewayFailure('bad_request', `${req.op}: the arguments are not what this gateway takes`);
      const value = await this.deps.handle(op, args, ac.signal, (p) => send({ type: 'progress', ...p }));
      send({ type: 'reply', id: req.id, ok: true, value });
    } catch (err) {
      if (ac.signal.aborted) return; // the socket is gone: nobody to answer
      const code: GatewayErrorCode = err instanceof GatewayFailure ? err.code : 'failed';
      if (!(err instanceof GatewayFailure)) this.deps.log.warn({ err, gateway: this.g.id, op: req.op }, 'a storage gateway request failed');
      send({ type: 'reply', id: req.id, ok: false, error: { code, message: describe(err).slice(0, 4000) } });
    } finally {
      this.inflight.delete(ac);
    }
  }
}
