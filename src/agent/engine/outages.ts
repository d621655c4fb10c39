// One outage is handled once. When a request finds the service or a store
// unreachable, its Target goes down: no transfer sends it anything new, and one
// probe at the back-off's pace (honouring Retry-After) asks whether it is back.
// The first answer brings it up, and everything that waited goes on together.
import { Agent, request } from 'undici';
import type { Logger } from 'pino';
import { backoffMs, retryAfterMs, type RetryPolicy } from './retry.js';

export type TargetKind = 'service' | 'store';

export interface Outage {
  since: number;
  lastError: string;
  /** Date.now() time of the next probe. */
  nextAttemptAt: number;
}

/** Asks `url` whether it answers: the status, and its Retry-After; rejects when it cannot be reached. */
export type Probe = (url: string, method: 'GET' | 'HEAD', signal: AbortSignal) => Promise<{ status: number; retryAfter?: string }>;

/** An answer that says the server is there and serving (any refusal of ours counts: it answered). */
const serving = (status: number) => status < 500 && status !== 408 && status !== 429;

export class Target {
  private outage: (Outage & { timer?: NodeJS.Timeout }) | undefined;
  /**
   * Outages since a request last succeeded here. A server that answers the probe but
   * fails the requests (a 503 to every part) comes up and goes down again: the
   * probe's back-off grows with each round instead of starting over.
   */
  private streak = 0;
  private waiters = new Set<() => void>();
  private probing: AbortController | undefined;

  constructor(
    readonly kind: TargetKind,
    /** The service's base URL, or a store's origin. */
    readonly base: string,
    private readonly o: { policy: RetryPolicy; probe: Probe; log: Logger; up(t: Target): void },
  ) {}

  get down(): Outage | undefined {
    return this.outage && { since: this.outage.since, lastError: this.outage.lastError, nextAttemptAt: this.outage.nextAttemptAt };
  }

  /** A request found it unreachable: it goes down (once), and a probe is due after the back-off or `retryAfter`. */
  report(error: string, retryAfter?: number): void {
    if (this.outage) {
      this.outage.lastError = error;
      // A Retry-After while down pushes the next probe out, never in.
      if (retryAfter !== undefined && Date.now() + retryAfter > this.outage.nextAttemptAt) this.schedule(retryAfter);
      return;
    }
    this.o.log.warn({ target: this.kind, base: this.base, err: error }, `the ${this.kind} cannot be reached; transfers wait for it`);
    this.outage = { since: Date.now(), lastError: error, nextAttemptAt: 0 };
    this.schedule(retryAfter);
  }

  /** A request to it succeeded: the next outage starts its back-off afresh. */
  ok(): void {
    this.streak = 0;
  }

  /** Resolves when it is up (at once when it is); rejects when `signal` aborts. */
  ready(signal?: AbortSignal): Promise<void> {
    if (!this.outage) return Promise.resolve();
    return new Promise((resolve, reject) => {
      if (signal?.aborted) return reject(signal.reason);
      const onAbort = () => {
        this.waiters.delete(done);
        reject(signal!.reason);
      };
      const done = () => {
        signal?.removeEventListener('abort', onAbort);
        resolve();
      };
      this.waiters.add(done);
      signal?.addEventListener('abort', onAbort, { once: true });
    });
  }

  /** Probes at once (the machine woke up, or the network changed): a stale back-off is not waited out. */
  probeNow(): void {
    if (this.outage && !this.probing) this.schedule(0);
  }

  close(): void {
    clearTimeout(this.outage?.timer);
    this.probing?.abort();
  }

  private schedule(retryAfter?: number): void {
    const o = this.outage!;
    clearTimeout(o.timer);
    const wait = retryAfter ?? backoffMs(++this.streak, this.o.policy);
    o.nextAttemptAt = Date.now() + wait;
    o.timer = setTimeout(() => void this.probe(), wait);
    o.timer.unref();
  }

  private async probe(): Promise<void> {
    const o = this.outage;
    if (!o || this.probing) return;
    const ac = (this.probing = new AbortController());
    const [url, method] = this.kind === 'service' ? [`${this.base}/v1/system/packages/spec`, 'GET' as const] : [`${this.base}/`, 'HEAD' as const];
    try {
      const a = await this.o.probe(url, method, ac.signal);
      if (ac.signal.aborted || this.outage !== o) return;
      if (serving(a.status)) return this.up();
      o.lastError = `the ${this.kind} answered ${a.status}`;
      this.schedule(retryAfterMs(a.retryAfter));
    } catch (err) {
      if (ac.signal.aborted || this.outage !== o) return;
      o.lastError = (err as Error).message || String(err);
      this.schedule();
    } finally {
      if (this.probing === ac) this.probing = undefined;
    }
  }

  private up(): void {
    const o = this.outage!;
    this.outage = undefined;
    this.o.log.info({ target: this.kind, base: this.base, down_ms: Date.now() - o.since }, `the ${this.kind} answers again; transfers go on`);
    const waiters = [...this.waiters];
    this.waiters.clear();
    for (const w of waiters) w();
    this.o.up(this);
  }
}

/** Every target the agent talks to, by kind and base URL; `onUp` hears of each that comes back. */
export class Outages {
  private readonly targets = new Map<string, Target>();
  private readonly listeners = new Set<(t: Target) => void>();
  /** A probe is one small request; a server that takes longer than this to answer it is not back yet. */
  private readonly probeTimeout: number;
  private dispatcher: Agent;
  private readonly probe: Probe;

  constructor(
    private readonly policy: RetryPolicy,
    private readonly log: Logger,
    timeoutMs: number,
    probe?: Probe,
  ) {
    this.probeTimeout = Math.min(timeoutMs, 15_000);
    this.dispatcher = this.newDispatcher();
    this.probe =
      probe ??
      (async (url, method, signal) => {
        const r = await request(url, { method, signal, dispatcher: this.dispatcher });
        await r.body.dump().catch(() => {});
        return { status: r.statusCode, retryAfter: r.headers['retry-after'] as string | undefined };
      });
  }

  private newDispatcher(): Agent {
    const t = this.probeTimeout;
    return new Agent({ connect: { timeout: t }, headersTimeout: t, bodyTimeout: t });
  }

  /** Drops the probes' connections (after a sleep of the machine they may be dead). */
  reconnect(): void {
    const old = this.dispatcher;
    this.dispatcher = this.newDispatcher();
    void old.destroy().catch(() => {});
  }

  target(kind: TargetKind, url: string): Target {
    const base = kind === 'store' ? new URL(url).origin : url.replace(/\/+$/, '');
    const key = `${kind} ${base}`;
    let t = this.targets.get(key);
    if (!t) {
      t = new Target(kind, base, { policy: this.policy, probe: this.probe, log: this.log, up: (x) => this.listeners.forEach((l) => l(x)) });
      this.targets.set(key, t);
    }
    return t;
  }

  onUp(listener: (t: Target) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /** The base URLs of the targets of this kind the agent has talked to since it started (a store's: its origin). */
  bases(kind: TargetKind): string[] {
    return [...this.targets.values()].filter((t) => t.kind === kind).map((t) => t.base);
  }

  /** Every target that is down probes now. */
  probeAllNow(): void {
    for (const t of this.targets.values()) t.probeNow();
  }

  async close(): Promise<void> {
    for (const t of this.targets.values()) t.close();
    this.listeners.clear();
    await this.dispatcher.destroy().catch(() => {});
  }
}
