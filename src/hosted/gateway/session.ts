// One storage gateway's socket, as the service holds it: requests out, replies
// in (matched by id), progress notes, and a heartbeat that drops a gateway that
// went silent. Every pending request fails with GatewayGoneError when the
// socket closes, and with its signal's reason when the caller stops waiting.
import type { WebSocket } from 'ws';
import type { Logger } from 'pino';
import {
  GATEWAY_PROTOCOL,
  GatewayOps,
  GatewayProgress,
  GatewayReply,
  type GatewayErrorCode,
  type GatewayOp,
  type GatewayPermissions,
  type OpArgs,
  type OpValue,
  type Welcome,
} from '../../api/hosted/storageGateway.js';
import { bodyValidator } from '../../http/validation.js';

/** The gateway's socket closed (it went away, or was replaced): the work resumes when it connects again. */
export class GatewayGoneError extends Error {}

/** The gateway refused a request, saying why. */
export class GatewayRefusal extends Error {
  constructor(
    readonly code: GatewayErrorCode,
    message: string,
  ) {
    super(message);
  }
}

const validReply = bodyValidator(GatewayReply);
const validProgress = bodyValidator(GatewayProgress);
const validValue = Object.fromEntries(Object.entries(GatewayOps).map(([op, s]) => [op, bodyValidator(s.value)])) as Record<GatewayOp, ReturnType<typeof bodyValidator>>;

interface Pending {
  op: GatewayOp;
  resolve(v: unknown): void;
  reject(err: unknown): void;
}

export interface SessionInfo {
  /** This socket's id: the connection's row names the one attached now. */
  id: string;
  connectionId: string;
  permissions: GatewayPermissions;
  version: string;
}

export class GatewaySession {
  private nextId = 1;
  private readonly pending = new Map<number, Pending>();
  private open = true;
  private alive = true;
  private readonly heartbeat: NodeJS.Timeout;
  private readonly closedPromise: Promise<void>;
  private readonly progressListeners = new Set<(p: GatewayProgress) => void>();

  constructor(
    private readonly socket: WebSocket,
    readonly info: SessionInfo,
    welcome: Omit<Welcome, 'type' | 'protocol' | 'heartbeat_ms'>,
    heartbeatMs: number,
    private readonly log: Logger,
  ) {
    let markClosed!: () => void;
    this.closedPromise = new Promise((r) => (markClosed = r));
    socket.on('message', (data, isBinary) => this.receive(isBinary ? null : String(data)));
    socket.on('pong', () => (this.alive = true));
    socket.on('close', () => {
      this.open = false;
      clearInterval(this.heartbeat);
      const gone = new GatewayGoneError('the storage gateway disconnected');
      for (const p of this.pending.values()) p.reject(gone);
      this.pending.clear();
      markClosed();
    });
    // A ping each beat; a gateway that answered none since the last beat is dropped. The tick lets it see us alive.
    this.heartbeat = setInterval(() => {
      if (!this.alive) {
        this.log.warn({ connection: info.connectionId }, 'a storage gateway stopped answering pings; dropping its socket');
        socket.terminate();
        return;
      }
      this.alive = false;
      socket.ping();
      this.send({ type: 'tick' });
    }, heartbeatMs);
    this.heartbeat.unref();
    this.send({ type: 'welcome', protocol: GATEWAY_PROTOCOL, heartbeat_ms: heartbeatMs, ...welcome });
  }

  /** Hears each progress note until the returned function is called. */
  listenProgress(fn: (p: GatewayProgress) => void): () => void {
    this.progressListeners.add(fn);
    return () => this.progressListeners.delete(fn);
  }

  get isOpen(): boolean {
    return this.open;
  }

  get permissions(): GatewayPermissions {
    return this.info.permissions;
  }

  /** Resolves when the socket has closed. */
  closed(): Promise<void> {
    return this.closedPromise;
  }

  close(code: number, reason: string): void {
    if (!this.open) return;
    this.socket.close(code, reason);
    // A gateway that does not answer the close handshake is cut off.
    setTimeout(() => this.socket.terminate(), 2000).unref();
  }

  terminate(): void {
    this.socket.terminate();
  }

  private send(frame: object): void {
    if (this.open && this.socket.readyState === this.socket.OPEN) this.socket.send(JSON.stringify(frame));
  }

  /** Sends a request; resolves with the gateway's value, rejects with its refusal, GatewayGoneError, or the signal's reason. */
  call<O extends GatewayOp>(op: O, args: OpArgs<O>, signal: AbortSignal): Promise<OpValue<O>> {
    if (!this.open) return Promise.reject(new GatewayGoneError('the storage gateway is not connected'));
    signal.throwIfAborted();
    const id = this.nextId++;
    return new Promise<OpValue<O>>((resolve, reject) => {
      const onAbort = () => {
        this.pending.delete(id);
        reject(signal.reason);
      };
      signal.addEventListener('abort', onAbort, { once: true });
      this.pending.set(id, {
        op,
        resolve: (v) => {
          signal.removeEventListener('abort', onAbort);
          resolve(v as OpValue<O>);
        },
        reject: (err) => {
          signal.removeEventListener('abort', onAbort);
          reject(err);
        },
      });
      this.send({ type: 'request', id, op, args });
    });
  }

  private receive(text: string | null): void {
    this.alive = true;
    let frame: unknown;
    try {
      frame = text === null ? undefined : JSON.parse(text);
    } catch {
      frame = undefined;
    }
    if (validReply(frame)) {
      const reply = frame as GatewayReply;
      const p = this.pending.get(reply.id);
      if (!p) return; // the caller stopped waiting
      this.pending.delete(reply.id);
      if (!reply.ok) return p.reject(new GatewayRefusal(reply.error.code, reply.error.message));
      if (!validValue[p.op]!(reply.value)) return p.reject(new GatewayRefusal('bad_request', `the gateway answered ${p.op} with something that is not its reply`));
      return p.resolve(reply.value);
    }
    if (validProgress(frame)) {
      for (const l of this.progressListeners) l(frame as GatewayProgress);
      return;
    }
    this.log.warn({ connection: this.info.connectionId }, 'a storage gateway sent a frame that is not of the protocol; closing its socket');
    this.close(4002, 'not a frame of the gateway protocol');
  }
}
