// Progress coalesced at the source: at most 4 progress updates a second per
// transfer, in at most one batch per 100 ms, whatever the rate of changes; state
// changes, waits and removals are never held back past the next batch.
import { afterEach, expect, test, vi } from 'vitest';
import { TransferCoalescer } from '../../../../src/agent/ui/coalesce.js';
import type { TransferEvent } from '../../../../src/ipc/contract.js';

afterEach(() => vi.useRealTimers());

let seq = 0;
const up = (id: string, progress: number, state = 'transferring', extra: object = {}): TransferEvent => ({ id: ++seq, type: 'upload', data: { upload_id: id, progress, state, ...extra } });

function run() {
  vi.useFakeTimers({ now: 1_000_000 });
  const batches: { at: number; events: TransferEvent[] }[] = [];
  const c = new TransferCoalescer((events) => batches.push({ at: Date.now(), events }));
  return { c, batches, sent: (id: string) => batches.flatMap((b) => b.events).filter((e) => (e.data as any).upload_id === id) };
}

test('a transfer changing every millisecond for 2 s reaches the window at most 4 times a second, the last progress included', () => {
  const { c, batches, sent } = run();
  for (let ms = 0; ms < 2000; ms++) {
    c.push(up('a', ms));
    vi.advanceTimersByTime(1);
  }
  vi.advanceTimersByTime(1000);
  // The first change goes at once (urgent: first seen); then one progress update per 250 ms.
  expect(sent('a').length).toBeLessThanOrEqual(1 + 2 * 4 + 1);
  expect((sent('a').at(-1)!.data as any).progress).toBe(1999);
  const gaps = batches.slice(1).map((b, i) => b.at - batches[i]!.at);
  expect(Math.min(...gaps)).toBeGreaterThanOrEqual(100);
  c.close();
});

test('100 busy transfers share one batch per 100 ms: at most 10 messages a second, and each one\'s last progress arrives', () => {
  const { c, batches, sent } = run();
  const last = new Map<string, number>();
  for (let ms = 0; ms < 1000; ms++) {
    for (let t = 0; t < 100; t++) {
      if (ms % 7 !== t % 7) continue;
      c.push(up(`t${t}`, ms));
      last.set(`t${t}`, ms);
    }
    vi.advanceTimersByTime(1);
  }
  expect(batches.length).toBeLessThanOrEqual(10);
  vi.advanceTimersByTime(1000);
  expect(last.size).toBe(100);
  for (const [id, progress] of last) {
    // Every transfer is heard from within the second, and the window ends on its latest progress.
    expect(sent(id).length, id).toBeGreaterThan(0);
    expect((sent(id).at(-1)!.data as any).progress, id).toBe(progress);
  }
  c.close();
});

test('a state change, a wait and a removal go in the next batch, not after the progress interval; ids stay in order', () => {
  const { c, batches, sent } = run();
  c.push(up('a', 1));
  vi.advanceTimersByTime(100);
  c.push(up('a', 2));
  c.push(up('a', 2, 'transferring', { waiting: { reason: 'service_unreachable' } }));
  vi.advanceTimersByTime(100);
  expect((sent('a').at(-1)!.data as any).waiting).toBeDefined();
  c.push(up('a', 3, 'paused'));
  vi.advanceTimersByTime(100);
  expect((sent('a').at(-1)!.data as any).state).toBe('paused');
  c.push({ id: ++seq, type: 'upload', data: { upload_id: 'a', deleted: true } });
  vi.advanceTimersByTime(100);
  expect((sent('a').at(-1)!.data as any).deleted).toBe(true);
  expect(sent('a')).toHaveLength(4);
  const ids = batches.flatMap((b) => b.events.map((e) => e.id));
  expect([...ids].sort((x, y) => x - y)).toEqual(ids);
  c.close();
});
