// Gathered calls (engine/gather.ts): a quiet caller's call goes at once; under a
// steady stream of calls the requests keep their gap, so batches grow instead of
// requests; a whole batch waiting goes without waiting out the gap.
import { describe, expect, test } from 'vitest';
import { Gatherer } from '../../../src/agent/engine/gather.js';

/** A gatherer over a service answering after `answerMs`; it notes each request's size and time. */
function gatherer(minGapMs: number, maxBatch = 100, answerMs = 1) {
  const sent: { size: number; at: number }[] = [];
  const t0 = performance.now();
  const g = new Gatherer<number, number>(
    {
      async together(items) {
        sent.push({ size: items.length, at: performance.now() - t0 });
        await new Promise((r) => setTimeout(r, answerMs));
        return items.map((i) => ({ ok: i * 2 }));
      },
      async alone(item) {
        sent.push({ size: 1, at: performance.now() - t0 });
        await new Promise((r) => setTimeout(r, answerMs));
        return item * 2;
      },
    },
    maxBatch,
    minGapMs,
  );
  return { g, sent };
}

const tick = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe('Gatherer', () => {
  test('a first call goes at once, whatever the gap', async () => {
    // A gap of an hour: had the call waited it out, the test would time out.
    const { g, sent } = gatherer(3_600_000);
    expect(await g.call(21)).toBe(42);
    expect(sent).toHaveLength(1);
  });

  test('a stream of calls is sent in fewer, larger requests with the gap, each call answered once', async () => {
    const run = async (gap: number) => {
      const { g, sent } = gatherer(gap);
      const answers: Promise<number>[] = [];
      // 300 calls, one every millisecond or so, as prepared files come.
      for (let i = 0; i < 300; i++) {
        answers.push(g.call(i));
        await tick(1);
      }
      expect(await Promise.all(answers)).toEqual(Array.from({ length: 300 }, (_, i) => i * 2));
      expect(sent.reduce((n, s) => n + s.size, 0)).toBe(300);
      return sent;
    };
    const without = await run(0);
    const withGap = await run(40);
    expect(withGap.length).toBeLessThan(without.length);
    // Counted, not timed: no two requests closer than the gap (a timer never fires early by more than a millisecond).
    for (let i = 1; i < withGap.length; i++) expect(withGap[i]!.at - withGap[i - 1]!.at).toBeGreaterThanOrEqual(39);
  });

  test('a whole batch waiting goes without waiting out the gap', async () => {
    const { g, sent } = gatherer(300, 10);
    const answers = Array.from({ length: 35 }, (_, i) => g.call(i));
    expect(await Promise.all(answers.slice(0, 31))).toHaveLength(31);
    // The first went alone, then full batches of 10 went at once; the last 4 wait out the gap.
    expect(sent.map((s) => s.size)).toEqual([1, 10, 10, 10]);
    expect(await Promise.all(answers)).toHaveLength(35);
    expect(sent.map((s) => s.size)).toEqual([1, 10, 10, 10, 4]);
  });
});
