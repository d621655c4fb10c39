// The bandwidth limit's bucket (engine/tokenBucket.ts) on a fake clock: no limit
// passes at once, a limit hands out its rate each second, two consumers share it
// whatever the sizes they ask for, and a change of rate reaches those waiting.
import { describe, expect, test } from 'vitest';
import { MIN_SLICE, TokenBucket } from '../../../src/agent/engine/tokenBucket.js';
import { FakeClock } from '../../helpers/fakeClock.js';

const KiB = 1024;
const MiB = 1024 * KiB;
const settle = () => new Promise((r) => setImmediate(r));

/** A consumer that takes `size` bytes at a time, again and again, counting what it got. */
function consumer(bucket: TokenBucket, size: number, signal?: AbortSignal) {
  const c = { got: 0, stopped: false };
  void (async () => {
    while (!c.stopped) {
      const w = bucket.take(size, signal);
      if (w) await w.catch(() => (c.stopped = true));
      if (!c.stopped) c.got += size;
      if (!w) await settle();
    }
  })();
  return c;
}

/** Advances the clock in `step` ms steps over `ms`, letting the consumers run between steps. */
async function run(clock: FakeClock, ms: number, step = 10, late = false) {
  for (let t = 0; t < ms; t += step) {
    await clock.advanceSettling(step, { late });
    await settle();
    await settle();
  }
}

describe('TokenBucket', () => {
  test('with no limit, take() answers at once, without a promise', () => {
    const b = new TokenBucket(new FakeClock(0));
    expect(b.take(100 * MiB)).toBeUndefined();
    expect(b.passed).toBe(0);
  });

  test('a limit hands out its rate each second, from an empty bucket', async () => {
    const clock = new FakeClock(1_000_000);
    const b = new TokenBucket(clock);
    b.setRate(1 * MiB);
    const c = consumer(b, 256 * KiB);
    await run(clock, 1000);
    expect(c.got).toBeGreaterThanOrEqual(1 * MiB - 256 * KiB);
    expect(c.got).toBeLessThanOrEqual(1 * MiB);
    await run(clock, 1000);
    expect(c.got).toBeGreaterThanOrEqual(2 * MiB - 256 * KiB);
    expect(c.got).toBeLessThanOrEqual(2 * MiB);
    c.stopped = true;
    b.setRate(0);
  });

  test('fair between a consumer of small parts and one of large parts: each gets a slice a turn', async () => {
    const clock = new FakeClock(0);
    const b = new TokenBucket(clock);
    b.setRate(2 * MiB);
    const small = consumer(b, MIN_SLICE);
    const large = consumer(b, 4 * MiB);
    // Timers fire late, 100 ms at a time: three slices pile up between turns, and the turns decide who gets them.
    await run(clock, 10_000, 100, true);
    // About 20 MiB went in ten seconds (the large one counts whole parts only: the rest went to it).
    expect(b.passed).toBeGreaterThan(18 * MiB);
    const toLarge = b.passed - small.got;
    expect(small.got / b.passed).toBeGreaterThan(0.35);
    expect(toLarge / b.passed).toBeGreaterThan(0.35);
    expect(large.got).toBeGreaterThanOrEqual(4 * MiB);
    small.stopped = large.stopped = true;
    b.setRate(0);
  });

  test('parts smaller than a slice are not starved by a large one', async () => {
    const clock = new FakeClock(0);
    const b = new TokenBucket(clock);
    b.setRate(2 * MiB);
    const tiny = consumer(b, 4 * KiB);
    const large = consumer(b, 64 * MiB);
    await run(clock, 2000, 100, true);
    // One turn each: the tiny parts move on every turn, at a sixteenth of the large one's slices.
    expect(tiny.got).toBeGreaterThan((4 * MiB) / 20);
    tiny.stopped = large.stopped = true;
    b.setRate(0);
  });

  test('a change of rate reaches those waiting: faster, slower, and none', async () => {
    const clock = new FakeClock(0);
    const b = new TokenBucket(clock);
    b.setRate(100 * KiB);
    let done = false;
    void b.take(MiB)!.then(() => (done = true));
    await run(clock, 1000);
    expect(done).toBe(false);
    // At 10 MiB/s the rest of the mebibyte goes within a tenth of a second.
    b.setRate(10 * MiB);
    await run(clock, 100);
    expect(done).toBe(true);

    let second = false;
    void b.take(10 * MiB)!.then(() => (second = true));
    b.setRate(64 * KiB);
    await run(clock, 1000);
    expect(second).toBe(false);
    // No limit: the waiter goes at once, with no time passing.
    b.setRate(0);
    await settle();
    expect(second).toBe(true);
  });

  test('an aborted wait leaves the queue and rejects with the reason', async () => {
    const clock = new FakeClock(0);
    const b = new TokenBucket(clock);
    b.setRate(MIN_SLICE);
    const ac = new AbortController();
    const p = b.take(10 * MiB, ac.signal)!;
    ac.abort(new Error('stop'));
    await expect(p).rejects.toThrow('stop');
    expect(b.waiting).toBe(false);
  });
});
