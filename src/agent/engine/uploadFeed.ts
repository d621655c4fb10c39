// What the event feed hears of uploads: every state change at once, progress at
// most every `everyMs` per upload (the last change always gets out).
export class ThrottledFeed {
  private readonly last = new Map<string, number>();
  private readonly timers = new Map<string, NodeJS.Timeout>();
  private closed = false;

  constructor(
    private readonly publish: (id: string) => void,
    private readonly everyMs = 250,
  ) {}

  changed(id: string, kind: 'state' | 'progress'): void {
    if (this.closed) return;
    const since = Date.now() - (this.last.get(id) ?? 0);
    if (kind === 'state' || since >= this.everyMs) return this.now(id);
    if (this.timers.has(id)) return;
    const t = setTimeout(() => this.now(id), this.everyMs - since);
    t.unref();
    this.timers.set(id, t);
  }

  /** Drops what is pending for the upload (it is gone). */
  forget(id: string): void {
    clearTimeout(this.timers.get(id));
    this.timers.delete(id);
    this.last.delete(id);
  }

  close(): void {
    this.closed = true;
    for (const t of this.timers.values()) clearTimeout(t);
    this.timers.clear();
  }

  private now(id: string): void {
    clearTimeout(this.timers.get(id));
    this.timers.delete(id);
    this.last.set(id, Date.now());
    this.publish(id);
  }
}
