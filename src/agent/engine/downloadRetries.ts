// The failed ranges of one download waiting out their back-off, and the tries of
// each. A range waits here rather than in a scheduler slot; a timer marks it due
// (timers, not clock reads, so none is missed) and wakes the scheduler, which
// asks the job (downloadJob.ts) for its next range. The job decides what a
// failure means (downloadErrors.ts); this only keeps the waiting.
import type { DownloadItem } from './downloadItem.js';

export class RangeRetries {
  private queue: { item: DownloadItem; idx: number; due: boolean }[] = [];
  private readonly attempts = new Map<string, number>();
  private readonly timers = new Set<NodeJS.Timeout>();

  /** `wake`: the scheduler looks for parts again. */
  constructor(private readonly wake: () => void) {}

  /** The first range whose back-off is over and that is still to fetch; ranges settled meanwhile are dropped on the way. */
  nextDue(): { item: DownloadItem; idx: number } | undefined {
    for (let i = 0; i < this.queue.length; i++) {
      const r = this.queue[i]!;
      if (!r.due) continue;
      this.queue.splice(i--, 1);
      if (r.item.state === 'pending' && !r.item.done.has(r.idx) && !r.item.inFlight.has(r.idx)) return r;
    }
    return undefined;
  }

  /** The range failed once more: its tries so far, this one counted. */
  failed(item: DownloadItem, idx: number): number {
    const key = `${item.fileId}:${idx}`;
    const n = (this.attempts.get(key) ?? 0) + 1;
    this.attempts.set(key, n);
    return n;
  }

  /** The range is in: its tries start again from none. */
  succeeded(item: DownloadItem, idx: number): void {
    this.attempts.delete(`${item.fileId}:${idx}`);
  }

  /** Every range starts again from no tries (a resume). */
  forgetTries(): void {
    this.attempts.clear();
  }

  /** The range goes again once `delay` ms have passed. */
  requeue(item: DownloadItem, idx: number, delay: number): void {
    const entry = { item, idx, due: false };
    this.queue.push(entry);
    this.wakeAfter(delay, () => (entry.due = true));
  }

  /** Wakes the scheduler after `ms`, `before` first. */
  wakeAfter(ms: number, before?: () => void): void {
    const t = setTimeout(() => {
      this.timers.delete(t);
      before?.();
      this.wake();
    }, ms);
    t.unref();
    this.timers.add(t);
  }

  /** A target came back: every waiting range is due now. */
  allDue(): void {
    for (const r of this.queue) r.due = true;
  }

  /** No timer fires any more. */
  clearTimers(): void {
    for (const t of this.timers) clearTimeout(t);
    this.timers.clear();
  }

  /** The download stopped transferring: nothing waits any more. */
  clear(): void {
    this.clearTimers();
    this.queue = [];
  }
}
