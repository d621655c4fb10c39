// Notices that the machine slept. Node's timers run on a clock that stops
// while the machine sleeps, so a back-off of 60 s begun before a night's sleep
// still has its time to run after it, and keep-alive sockets may have died with
// the network. A tick that finds far more wall-clock time gone by than it
// waited says the process was frozen: the listeners then drop their
// connections and retry at once.

export interface SleepWatchOptions {
  /** How often to look. */
  intervalMs?: number;
  /** Wall-clock time past the interval that counts as a sleep. */
  slackMs?: number;
  now?: () => number;
}

export class SleepWatch {
  private readonly listeners = new Set<(sleptMs: number) => void>();
  private timer: NodeJS.Timeout | undefined;
  private last: number;
  private readonly intervalMs: number;
  private readonly slackMs: number;
  private readonly now: () => number;

  constructor(o: SleepWatchOptions = {}) {
    this.intervalMs = o.intervalMs ?? 5_000;
    this.slackMs = o.slackMs ?? 10_000;
    this.now = o.now ?? Date.now;
    this.last = this.now();
  }

  start(): void {
    this.last = this.now();
    this.timer ??= setInterval(() => this.tick(), this.intervalMs);
    this.timer.unref();
  }

  stop(): void {
    clearInterval(this.timer);
    this.timer = undefined;
  }

  onWake(listener: (sleptMs: number) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /** One look: a sleep when more than interval + slack went by since the last. */
  tick(): void {
    const t = this.now();
    const gone = t - this.last;
    this.last = t;
    if (gone > this.intervalMs + this.slackMs) this.woke(gone - this.intervalMs);
  }

  /** Tells every listener that the machine woke after about `sleptMs`. */
  woke(sleptMs: number): void {
    for (const l of this.listeners) l(sleptMs);
  }
}
