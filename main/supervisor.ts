// Main's side of the hosted agent: starts its process, relays requests and
// events over the Port, and starts it again when it dies, after a bounded
// back-off (1 s doubling to 30 s, from 1 s again once it ran a minute), or at
// once when it stopped to take new settings (RESTART_EXIT). The
// window hears "reconnecting" meanwhile, and transfers go on from SQLite.
// Written against a small interface, so tests run it on a Node child process
// and the desktop app on Electron's utilityProcess.
import type { Answer, EventName, EventOf } from '../src/ipc/contract.js';
import { isHostMessage, RESTART_EXIT, type Port } from '../src/ipc/port.js';
import type { Connection } from '../src/ipc/desktop.js';
import { AgentErrorCode } from '../src/api/agent/errors.js';

export type { Connection };

export interface AgentChild {
  port: Port;
  onExit(listener: (code: number | null) => void): void;
  kill(): void;
}

export interface SupervisorOptions {
  spawn(): AgentChild;
  firstDelayMs?: number;
  maxDelayMs?: number;
  /** Up this long, the next crash starts the back-off from the first delay again. */
  healthyMs?: number;
  /** How long a request waits for a restarting agent before it answers an error. */
  requestWaitMs?: number;
  onLog?(message: string): void;
}


export class AgentSupervisor {
  private child: AgentChild | undefined;
  private connection: Connection = 'connecting';
  private url: string | undefined;
  private seq = 0;
  private readonly pending = new Map<number, (a: Answer<unknown>) => void>();
  private readonly listeners = new Map<string, Set<(payload: unknown) => void>>();
  private readonly watchers = new Set<(c: Connection) => void>();
  private readonly waitingForAgent = new Set<() => void>();
  private restarts = 0;
  private startedAt = 0;
  private timer: NodeJS.Timeout | undefined;
  private stopping = false;

  constructor(private readonly o: SupervisorOptions) {}

  /** The agent's REST address (for Settings), once it is up. */
  get restUrl(): string | undefined {
    return this.url;
  }

  get state(): Connection {
    return this.connection;
  }

  start(): void {
    this.stopping = false;
    this.launch();
  }

  async invoke(channel: string, payload: unknown): Promise<Answer<unknown>> {
    if (this.connection !== 'connected' && !(await this.agentBack())) {
      return { ok: false, error: { code: AgentErrorCode.upstream, message: 'The agent is starting again. Try again in a moment.' } };
    }
    const id = ++this.seq;
    return new Promise((resolve) => {
      this.pending.set(id, resolve);
      this.child!.port.post({ kind: 'request', id, channel, payload });
    });
  }

  on<E extends EventName>(event: E, listener: (payload: EventOf<E>) => void): () => void {
    const set = this.listeners.get(event) ?? new Set();
    set.add(listener as (p: unknown) => void);
    this.listeners.set(event, set);
    return () => set.delete(listener as (p: unknown) => void);
  }

  onConnection(listener: (c: Connection) => void): () => void {
    this.watchers.add(listener);
    listener(this.connection);
    return () => this.watchers.delete(listener);
  }

  /** Asks the agent to record its state and stop; kills it when it takes longer than `graceMs`. */
  async stop(graceMs = 10_000): Promise<void> {
    this.stopping = true;
    clearTimeout(this.timer);
    const child = this.child;
    if (!child) return;
    const exited = new Promise<void>((r) => child.onExit(() => r()));
    child.port.post({ kind: 'shutdown' });
    const t = setTimeout(() => child.kill(), graceMs);
    await exited;
    clearTimeout(t);
  }

  private setConnection(c: Connection): void {
    if (c === this.connection) return;
    this.connection = c;
    for (const w of this.watchers) w(c);
    if (c === 'connected') for (const w of [...this.waitingForAgent]) w();
  }

  /** Resolves true once the agent is connected, false after requestWaitMs. */
  private agentBack(): Promise<boolean> {
    return new Promise((resolve) => {
      const done = (ok: boolean) => {
        clearTimeout(t);
        this.waitingForAgent.delete(onBack);
        resolve(ok);
      };
      const onBack = () => done(true);
      const t = setTimeout(() => done(false), this.o.requestWaitMs ?? 15_000);
      this.waitingForAgent.add(onBack);
    });
  }

  private launch(): void {
    const child = this.o.spawn();
    this.child = child;
    this.startedAt = Date.now();
    child.port.onMessage((m) => {
      if (this.child !== child || !isHostMessage(m)) return;
      if (m.kind === 'ready') {
        this.url = m.url ?? undefined;
        this.setConnection('connected');
      } else if (m.kind === 'response') {
        this.pending.get(m.id)?.(m.answer);
        this.pending.delete(m.id);
      } else if (m.kind === 'event') {
        for (const l of this.listeners.get(m.event) ?? []) l(m.payload);
      } else if (m.kind === 'failed') this.o.onLog?.(`the agent could not start: ${m.message}`);
    });
    child.onExit((code) => {
      if (this.child !== child) return;
      this.child = undefined;
      // Requests it never answered are answered here: the window does not wait forever.
      for (const [id, resolve] of this.pending) {
        resolve({ ok: false, error: { code: AgentErrorCode.internal, message: 'The agent stopped before it answered; it is starting again.' } });
        this.pending.delete(id);
      }
      if (this.stopping) return;
      this.setConnection('reconnecting');
      if (code === RESTART_EXIT) {
        // It stopped to take new settings: no crash, no back-off.
        this.o.onLog?.('the agent starts again with its new settings');
        this.launch();
        return;
      }
      if (Date.now() - this.startedAt >= (this.o.healthyMs ?? 60_000)) this.restarts = 0;
      const delay = Math.min(this.o.maxDelayMs ?? 30_000, (this.o.firstDelayMs ?? 1000) * 2 ** this.restarts++);
      this.o.onLog?.(`the agent stopped (${code ?? 'killed'}); starting it again in ${delay} ms`);
      this.timer = setTimeout(() => this.launch(), delay);
    });
  }
}
