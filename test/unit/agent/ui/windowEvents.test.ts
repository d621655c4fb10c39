// The agent's events as a window takes them (agent/ui/windowEvents.ts): transfer
// changes in batches, one per 100 ms at most, every change kept and in order;
// session, automation and gateway changes at once.
import { afterEach, expect, test, vi } from 'vitest';
import { EventBus } from '../../../../src/agent/events.js';
import { followForWindow } from '../../../../src/agent/ui/windowEvents.js';
import type { EventName, EventOf, TransferEvent } from '../../../../src/ipc/contract.js';

afterEach(() => vi.useRealTimers());

const totals = (progress: number) => ({ progress, size: 1000, file_count: 1, files_done: 0, updated_at: 't' });

function setup(since?: number, bus = new EventBus()) {
  vi.useFakeTimers({ now: 1_000_000 });
  const got: { at: number; event: EventName; payload: unknown }[] = [];
  const stop = followForWindow(bus, <E extends EventName>(event: E, payload: EventOf<E>) => got.push({ at: Date.now(), event, payload }), since === undefined ? {} : { since });
  const transferBatches = () => got.filter((g) => g.event === 'transfers.changed').map((g) => ({ at: g.at, events: g.payload as TransferEvent[] }));
  return { bus, got, stop, transferBatches };
}

test('100 busy transfers changing every millisecond reach the window in at most one batch per 100 ms, every change in order', () => {
  const { bus, stop, transferBatches } = setup();
  let published = 0;
  for (let ms = 0; ms < 1000; ms++) {
    for (let t = 0; t < 100; t++) {
      if (ms % 10 !== t % 10) continue;
      bus.publish('upload', { change: 'progress', upload_id: `t${t}`, ...totals(ms) });
      published++;
    }
    vi.advanceTimersByTime(1);
  }
  vi.advanceTimersByTime(200);
  const batches = transferBatches();
  expect(batches.length).toBeLessThanOrEqual(11);
  const gaps = batches.slice(1).map((b, i) => b.at - batches[i]!.at);
  expect(Math.min(...gaps)).toBeGreaterThanOrEqual(100);
  const ids = batches.flatMap((b) => b.events.map((e) => e.id));
  expect(ids).toHaveLength(published);
  expect(ids).toEqual([...ids].sort((a, b) => a - b));
  // Each transfer's last change is the last it gets.
  const last = batches.flatMap((b) => b.events).filter((e) => e.type === 'upload' && 'upload_id' in e.data && e.data.upload_id === 't7').at(-1)!;
  expect(last.data).toMatchObject({ progress: 997 });
  stop();
});

test('a change after a quiet spell goes at once; session, automation and gateway changes never wait', () => {
  const { bus, got, stop } = setup();
  bus.publish('download', { change: 'removed', download_id: 'd1' });
  vi.advanceTimersByTime(0);
  expect(got.map((g) => g.event)).toEqual(['transfers.changed']);
  bus.publish('download', { change: 'removed', download_id: 'd2' });
  bus.publish('session', { user: null });
  bus.publish('gateway', { id: 'g1', deleted: true });
  bus.publish('automation', { automation_id: 'a1', deleted: true });
  expect(got.map((g) => g.event)).toEqual(['transfers.changed', 'session.changed', 'gateways.changed', 'automations.changed']);
  vi.advanceTimersByTime(100);
  expect(got.map((g) => g.event).at(-1)).toBe('transfers.changed');
  stop();
});

test('a window that connects with its snapshot cursor gets what came after it, and nothing once it leaves', () => {
  const bus = new EventBus();
  bus.publish('upload', { change: 'removed', upload_id: 'before' });
  const cursor = bus.lastId;
  bus.publish('upload', { change: 'removed', upload_id: 'after' });
  const { got, stop, transferBatches } = setup(cursor, bus);
  vi.advanceTimersByTime(100);
  expect(transferBatches().flatMap((b) => b.events.map((e) => e.data))).toEqual([{ change: 'removed', upload_id: 'after' }]);
  stop();
  bus.publish('upload', { change: 'removed', upload_id: 'gone' });
  vi.advanceTimersByTime(200);
  expect(got).toHaveLength(1);
});
