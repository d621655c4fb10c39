// Queue places reach the event feed without a storm: however often transfers
// start, the waiting ones are looked at once per interval, and only those whose
// place changed since the last look (or who left the line) are told to the feed.
import { afterEach, beforeEach, expect, test, vi } from 'vitest';
import { Scheduler, type PartTask, type Transfer } from '../../../src/agent/engine/scheduler.js';
import { QueueFeed } from '../../../src/agent/engine/queueFeed.js';

beforeEach(() => void vi.useFakeTimers());
afterEach(() => void vi.useRealTimers());

/** A transfer of one part, which ends when `finish` is called. */
function onePart(i: number) {
  let taken = false;
  let finish = () => {};
  const t: Transfer & { finish(): void } = {
    id: `t${i}`,
    lane: 'upload',
    priority: 0,
    createdAt: new Date(Date.UTC(2026, 0, 1, 0, 0, i)).toISOString(),
    begun: false,
    nextPart(): PartTask | undefined {
      if (taken) return undefined;
      taken = true;
      return { run: () => new Promise<void>((r) => (finish = r)) };
    },
    finish: () => finish(),
  };
  return t;
}

test('200 waiting transfers moving up at ten starts cost one look, and one feed call per transfer whose place changed', async () => {
  const s = new Scheduler(1);
  const told: string[] = [];
  const feed = new QueueFeed(s, 'upload', (id) => told.push(id), 500);
  const ts = Array.from({ length: 200 }, (_, i) => onePart(i));
  for (const t of ts) s.add(t);
  expect(told).toEqual([]);
  await vi.advanceTimersByTimeAsync(500);
  // The first look: every waiting one is new to the feed.
  expect(told.length).toBe(199);
  told.length = 0;

  // Ten transfers end one after the other, well within one interval: each start moves everyone behind it.
  for (let i = 0; i < 10; i++) {
    ts[i]!.finish();
    s.remove(ts[i]!.id);
    await vi.advanceTimersByTimeAsync(10);
  }
  expect(told).toEqual([]);
  await vi.advanceTimersByTimeAsync(500);
  // The 189 still waiting moved up; the 10 that started since left the line (their place goes).
  expect(told.length).toBe(199);
  expect(new Set(told).size).toBe(199);
  for (let i = 1; i <= 10; i++) expect(told).toContain(`t${i}`);
  expect(s.queuePlace('t11')).toBe(1);
  expect(s.queuePlace('t199')).toBe(189);

  // Nothing moved: nothing is told.
  told.length = 0;
  await vi.advanceTimersByTimeAsync(2000);
  expect(told).toEqual([]);
  feed.close();
});
