// What the event feed hears of a transfer (upload or download): every state
// change at once, progress at most every `everyMs` per transfer (the last change
// always gets out). Each event carries the whole record, which lists every file:
// for a transfer of 100,000 files that is costly to build, so progress also waits
// `costFactor` times as long as the last build took, and the feed never takes
// more than about 1/costFactor of the agent's time however large the transfer.
export class ThrottledFeed {
  private readonly last = new Map<string, number>();
  /** Per transfer: how long its last publish took, in ms. */
  private readonly cost = new Map<string, number>();
  private readonly timers = new Map<string, NodeJS.Timeout>();
  private closed = false;

  constructor(
    private readonly publish: (id: string) => void,
    private readonly everyMs = 250,
    private readonly costFactor = 10,
    private readonly now: () => number = () => performance.now(),
  ) {}

  changed(id: string, kind: 'state' | 'progress'): void {
    if (this.closed) return;
    const gap = Math.max(this.everyMs, (this.cost.get(id) ?? 0) * this.costFactor);
    const since = this.now() - (this.last.get(id) ?? -Infinity);
    if (kind === 'state' || since >= gap) return this.fire(id);
    if (this.timers.has(id)) return;
    const t = setTimeout(() => this.fire(id), gap - since);
    t.unref();
    this.timers.set(id, t);
  }

  /** Drops what is pending for the transfer (it is gone). */
  forget(id: string): void {
    clearTimeout(this.timers.get(id));
    this.timers.delete(id);
    this.last.delete(id);
    this.cost.delete(id);
  }

  close(): void {
    this.closed = true;
    for (const t of this.timers.values()) clearTimeout(t);
    this.timers.clear();
  }

  private fire(id: string): void {
    clearTimeout(this.timers.get(id));
    this.timers.delete(id);
    const start = this.now();
    this.publish(id);
    const end = this.now();
    this.last.set(id, end);
    this.cost.set(id, end - start);
  }
}
