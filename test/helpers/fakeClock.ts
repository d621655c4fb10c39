// A clock the test moves by hand (engine/tokenBucket.ts's Clock): timers fire,
// in order, only when advance() passes their time.
import type { Clock, TokenBucket } from '../../src/agent/engine/tokenBucket.js';
import { waitFor } from './downloads.js';

export class FakeClock implements Clock {
  private timers = new Map<number, { at: number; fn: () => void }>();
  private seq = 0;
  constructor(private t: number) {}

  now(): number {
    return this.t;
  }

  setTimeout(fn: () => void, ms: number): unknown {
    const id = ++this.seq;
    this.timers.set(id, { at: this.t + Math.max(0, ms), fn });
    return id;
  }

  clearTimeout(handle: unknown): void {
    this.timers.delete(handle as number);
  }

  /** Moves time on by `ms`, firing each timer due on the way (those set meanwhile too) at its own time, in order. */
  advance(ms: number): void {
    const end = this.t + ms;
    for (let guard = 0; guard < 100_000; guard++) {
      const next = this.due(end);
      if (!next) break;
      this.fire(next);
    }
    this.t = end;
  }

  /**
   * As advance(), but lets settled promises and immediates run after each timer, as
   * they would before a real timer's next turn: a consumer whose wait a timer ended
   * asks again before the next timer fires. `late`: every timer due fires at the
   * end, as on a busy event loop, so tokens pile up between turns.
   */
  async advanceSettling(ms: number, opts: { late?: boolean } = {}): Promise<void> {
    const end = this.t + ms;
    // A busy event loop: every timer due fires late, at the end.
    if (opts.late) this.t = end;
    for (let guard = 0; guard < 100_000; guard++) {
      const next = this.due(end);
      if (!next) break;
      this.fire(next);
      await new Promise((r) => setImmediate(r));
    }
    this.t = end;
  }

  private due(end: number): [number, { at: number; fn: () => void }] | undefined {
    let next: [number, { at: number; fn: () => void }] | undefined;
    for (const e of this.timers) if (e[1].at <= end && (!next || e[1].at < next[1].at || (e[1].at === next[1].at && e[0] < next[0]))) next = e;
    return next;
  }

  private fire([id, timer]: [number, { at: number; fn: () => void }]): void {
    this.timers.delete(id);
    this.t = Math.max(this.t, timer.at);
    timer.fn();
  }
}

/** Waits (real time, bounded) until the bucket's consumers wait on it again: all it let through has been taken. */
export async function drained(bucket: TokenBucket): Promise<void> {
  let last = -1;
  await waitFor('the transfer to wait on the limit', async () => {
    const seen = bucket.passed;
    const still = bucket.waiting && seen === last;
    last = seen;
    return still ? true : undefined;
  }, 2000, 15);
}

/** Moves the clock on by one second in 50 ms steps, letting the transfer take what each step allows; answers the bytes let through. */
export async function bytesInOneSecond(clock: FakeClock, bucket: TokenBucket): Promise<number> {
  const before = bucket.passed;
  for (let i = 0; i < 20; i++) {
    clock.advance(50);
    await drained(bucket);
  }
  return bucket.passed - before;
}
