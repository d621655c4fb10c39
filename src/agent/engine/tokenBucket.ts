// One token bucket per direction (bandwidth limits, docs/agent-api-notes/bandwidth.md):
// every transfer of that direction takes its bytes from it before they go out
// (uploads) or before more are read (downloads). Bytes are handed out in small
// slices, first come first served, and a transfer wanting more joins the back of
// the queue after each slice: two transfers share the rate whatever the sizes of
// their parts. A change of rate applies to those waiting at once. With no limit
// take() answers undefined, so the bytes pass without an await or an allocation.

/** Time as the bucket and the schedules see it: the real one, or a test's. */
export interface Clock {
  now(): number;
  setTimeout(fn: () => void, ms: number): unknown;
  clearTimeout(handle: unknown): void;
}

export const realClock: Clock = {
  now: () => Date.now(),
  setTimeout: (fn, ms) => setTimeout(fn, ms).unref(),
  clearTimeout: (h) => clearTimeout(h as NodeJS.Timeout),
};

interface Waiter {
  left: number;
  resolve(): void;
  reject(err: unknown): void;
  signal?: AbortSignal;
  onAbort?: () => void;
  onSlice?: () => void;
}

/** The least handed out at a time; faster rates hand out a fiftieth of a second's worth. */
export const MIN_SLICE = 64 * 1024;
/** Tokens kept while nothing waits: at most this much of a second goes out at once after a pause. */
const BURST_S = 0.2;

export class TokenBucket {
  private rate = 0;
  private tokens = 0;
  private last: number;
  private queue: Waiter[] = [];
  /** Served a slice this round and wanting more: they join the queue's back at the next round. */
  private later: Waiter[] = [];
  private timer: unknown;
  /** Bytes handed out while a limit held (tests and the benchmark read it). */
  passed = 0;

  constructor(private readonly clock: Clock = realClock) {
    this.last = clock.now();
  }

  /** Bytes a second; 0 = none. */
  get limit(): number {
    return this.rate;
  }

  /** Whether anyone waits for tokens. */
  get waiting(): boolean {
    return this.queue.length + this.later.length > 0;
  }

  private get slice(): number {
    return Math.max(MIN_SLICE, Math.round(this.rate / 50));
  }

  setRate(bytesPerSecond: number): void {
    if (bytesPerSecond === this.rate) return;
    this.refill();
    // From none to a limit: start empty, so the first second is not a burst.
    if (this.rate === 0) this.tokens = 0;
    this.rate = bytesPerSecond;
    this.pump();
  }

  /**
   * Resolves once `n` bytes may move; undefined (at once) when there is no limit.
   * Rejects with the signal's reason on abort. `onSlice` hears each slice before the last.
   */
  take(n: number, signal?: AbortSignal, onSlice?: () => void): Promise<void> | undefined {
    if (this.rate === 0 || n <= 0) return undefined;
    return new Promise<void>((resolve, reject) => {
      const w: Waiter = { left: n, resolve, reject, signal, onSlice };
      if (signal) {
        if (signal.aborted) return reject(signal.reason);
        w.onAbort = () => {
          this.queue = this.queue.filter((x) => x !== w);
          this.later = this.later.filter((x) => x !== w);
          reject(signal.reason);
        };
        signal.addEventListener('abort', w.onAbort, { once: true });
      }
      this.queue.push(w);
      // Nothing under way: serve it now; else it takes its turn in the next round.
      if (this.timer === undefined) this.pump();
    });
  }

  private refill(): void {
    const now = this.clock.now();
    if (this.rate > 0) this.tokens = Math.min(this.tokens + ((now - this.last) / 1000) * this.rate, Math.max(this.slice, this.rate * BURST_S));
    this.last = now;
  }

  /**
   * One round: each waiter gets one slice, in turn, while tokens last. One that
   * wants more waits for the next round behind those waiting now and those that
   * ask again before it (a consumer whose wait just ended asks again in time):
   * granting on within a round would let the one with the most left take all.
   */
  private pump(): void {
    if (this.timer !== undefined) this.clock.clearTimeout(this.timer);
    this.timer = undefined;
    this.refill();
    if (this.later.length > 0) {
      this.queue.push(...this.later);
      this.later = [];
    }
    for (let turns = this.queue.length; turns > 0 && this.queue.length > 0; turns--) {
      const w = this.queue[0]!;
      const n = this.rate > 0 ? Math.min(w.left, this.slice) : w.left;
      if (this.rate > 0) {
        if (this.tokens < n) break;
        this.tokens -= n;
        this.passed += n;
      }
      w.left -= n;
      this.queue.shift();
      if (w.left > 0) {
        this.later.push(w);
        w.onSlice?.();
      } else {
        if (w.onAbort) w.signal!.removeEventListener('abort', w.onAbort);
        w.resolve();
      }
    }
    const head = this.queue[0] ?? this.later[0];
    if (head) {
      const need = Math.min(head.left, this.slice) - this.tokens;
      this.timer = this.clock.setTimeout(() => this.pump(), this.rate === 0 || need <= 0 ? 0 : Math.max(1, Math.ceil((need / this.rate) * 1000)));
    }
  }
}
