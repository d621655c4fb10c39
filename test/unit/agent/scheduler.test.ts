// The scheduler: one limit of parts in flight, directions in turn, priority first, started transfers
// before waiting ones (which wait in order, with their place);
// and what an upload file offers it.
import { describe, expect, test } from 'vitest';
import { DEFAULT_QUEUE_RULES, Scheduler, type Lane, type PartTask, type QueueRules, type Transfer } from '../../../src/agent/engine/scheduler.js';
import { chooseChunkSize, FileTransfer } from '../../../src/agent/engine/uploadFile.js';

/** A transfer with `parts` parts whose tasks finish when the test says so. */
let created = 0;
function fake(id: string, parts: number, opts: { lane?: Lane; priority?: number; begun?: boolean } = {}) {
  const started: string[] = [];
  const pending: (() => void)[] = [];
  let next = 0;
  const t: Transfer & { started: string[]; finishOne(): void; ready: boolean } = {
    id,
    lane: opts.lane ?? 'upload',
    priority: opts.priority ?? 0,
    createdAt: new Date(Date.UTC(2026, 0, 1, 0, 0, created++)).toISOString(),
    begun: opts.begun ?? false,
    started,
    ready: true,
    nextPart(): PartTask | undefined {
      if (!t.ready || next >= parts) return undefined;
      const n = ++next;
      return {
        run: () =>
          new Promise<void>((resolve) => {
            started.push(`${id}#${n}`);
            pending.push(resolve);
          }),
      };
    },
    finishOne() {
      pending.shift()?.();
    },
  };
  return t;
}

const tick = () => new Promise((r) => setImmediate(r));

describe('Scheduler', () => {
  test('a new limit (Settings\' Concurrency) holds at once: more parts start when it grows; when it shrinks, none start until fewer are in flight', async () => {
    const s = new Scheduler(1);
    const up = fake('up', 10);
    s.add(up);
    expect(s.inFlight()).toBe(1);
    s.setLimit(3);
    expect(s.inFlight()).toBe(3);
    s.setLimit(1);
    up.finishOne();
    await tick();
    expect(s.inFlight()).toBe(2);
    up.finishOne();
    await tick();
    expect(s.inFlight()).toBe(1);
  });

  test('keeps at most `limit` parts in flight in all; once both directions wait, freed slots go to them in turn', async () => {
    const s = new Scheduler(2);
    const up = fake('up', 10);
    const down = fake('down', 10, { lane: 'download' });
    s.add(up);
    s.add(down);
    // The upload came first and took both slots; the download waits for one.
    expect([s.inFlight('upload'), s.inFlight('download'), s.inFlight()]).toEqual([2, 0, 2]);
    up.finishOne();
    await tick();
    expect([s.inFlight('upload'), s.inFlight('download')]).toEqual([1, 1]);
    // From then on each freed slot goes to the direction that did not get the last one.
    for (let i = 0; i < 6; i++) {
      (i % 2 ? down : up).finishOne();
      await tick();
      expect(s.inFlight()).toBe(2);
    }
    expect([up.started.length, down.started.length]).toEqual([5, 4]);
  });

  test('a direction alone may use every slot', async () => {
    const s = new Scheduler(3);
    const down = fake('down', 10, { lane: 'download' });
    s.add(down);
    expect(s.inFlight('download')).toBe(3);
  });

  test('higher priority first; among equals the started one keeps the slots and the others wait in creation order', async () => {
    const s = new Scheduler(1);
    const a = fake('a', 3);
    const b = fake('b', 3);
    const urgent = fake('urgent', 2, { priority: 5 });
    s.add(a);
    s.add(b);
    s.add(urgent);
    const order: string[] = [];
    for (let i = 0; i < 8; i++) {
      order.push(...[a, b, urgent].flatMap((t) => t.started.splice(0)));
      for (const t of [a, b, urgent]) t.finishOne();
      await tick();
    }
    // a was alone when added; then urgent runs dry first, a finishes, and only then b starts.
    expect(order).toEqual(['a#1', 'urgent#1', 'urgent#2', 'a#2', 'a#3', 'b#1', 'b#2', 'b#3']);
  });

  test('about `limit` transfers run at once; the rest wait with their place, which moves up as one starts', async () => {
    const s = new Scheduler(2);
    const ts = Array.from({ length: 5 }, (_, i) => fake(`t${i}`, 1));
    const moves: Lane[] = [];
    s.watchQueue((lane) => moves.push(lane));
    for (const t of ts) s.add(t);
    // Each has one part: two start, the others keep their place in creation order.
    expect(ts.map((t) => t.started.length)).toEqual([1, 1, 0, 0, 0]);
    expect(ts.map((t) => s.queuePlace(t.id))).toEqual([undefined, undefined, 1, 2, 3]);
    moves.length = 0;
    ts[0]!.finishOne();
    s.remove('t0');
    await tick();
    expect(ts.map((t) => t.started.length)).toEqual([1, 1, 1, 0, 0]);
    expect(ts.map((t) => s.queuePlace(t.id))).toEqual([undefined, undefined, undefined, 1, 2]);
    expect(moves.length).toBeGreaterThan(0);
    expect(moves.every((l) => l === 'upload')).toBe(true);
  });

  test('a waiting transfer gets a slot only when no started one has a part ready (no slot sits idle)', async () => {
    const s = new Scheduler(2);
    const a = fake('a', 10);
    const b = fake('b', 10);
    s.add(a);
    s.add(b);
    // a has parts ready for both slots: b waits, first in line.
    expect([a.started.length, b.started.length, s.queuePlace('b')]).toEqual([2, 0, 1]);
    a.ready = false;
    a.finishOne();
    await tick();
    // a has nothing ready now: the free slot goes to b, which starts.
    expect([a.started.length, b.started.length, s.queuePlace('b')]).toEqual([2, 1, undefined]);
    a.ready = true;
    a.finishOne();
    b.finishOne();
    await tick();
    // Both started now: a, the older, gets the freed slots first.
    expect([a.started.length, b.started.length]).toEqual([4, 1]);
  });

  test('a transfer that had begun (a resume, a restart) goes on before those that wait; a higher priority waits first in line', () => {
    const s = new Scheduler(1);
    const fresh = fake('fresh', 5);
    const resumed = fake('resumed', 5, { begun: true });
    const urgent = fake('urgent', 5, { priority: 1 });
    s.add(fresh);
    expect(fresh.started.length).toBe(1);
    s.add(resumed);
    s.add(urgent);
    expect([s.queuePlace('fresh'), s.queuePlace('resumed'), s.queuePlace('urgent')]).toEqual([undefined, undefined, 1]);
  });

  test('with none started, a transfer still preparing (no part ready) has no place: it waits for nothing but itself', () => {
    const s = new Scheduler(2);
    const first = fake('first', 3);
    first.ready = false;
    const second = fake('second', 3);
    second.ready = false;
    s.add(first);
    s.add(second);
    expect([s.queuePlace('first'), s.queuePlace('second')]).toEqual([undefined, undefined]);
    expect(s.queue('upload')).toEqual([]);
    // Once one has started, the other waits its turn behind it.
    first.ready = true;
    s.wake();
    expect([s.queuePlace('first'), s.queuePlace('second')]).toEqual([undefined, 1]);
  });

  test('a transfer with nothing ready is skipped until wake()', async () => {
    const s = new Scheduler(2);
    const t = fake('t', 2);
    t.ready = false;
    s.add(t);
    expect(s.inFlight('upload')).toBe(0);
    t.ready = true;
    s.wake();
    expect(s.inFlight('upload')).toBe(2);
  });

  test('remove() stops new parts; a failed part frees its slot and is reported', async () => {
    const errors: unknown[] = [];
    const s = new Scheduler(1, (_t, err) => errors.push(err));
    let calls = 0;
    const failing: Transfer = {
      id: 'f',
      lane: 'upload',
      priority: 0,
      createdAt: '2025-01-01T00:00:00.000Z',
      begun: false,
      nextPart: () => (calls++ < 1 ? { run: () => Promise.reject(new Error('boom')) } : undefined),
    };
    const other = fake('o', 5);
    s.add(failing);
    s.add(other);
    await tick();
    expect(errors).toEqual([new Error('boom')]);
    expect(other.started).toEqual(['o#1']);
    s.remove('o');
    other.finishOne();
    await tick();
    expect(other.started).toEqual(['o#1']);
    expect(s.inFlight('upload')).toBe(0);
  });
});

// FIFO mode (Settings' fifo, max_active_uploads, max_active_downloads) and the cap of
// parts in flight per transfer (connections_per_transfer), each also changed live.
describe('Scheduler: FIFO mode and connections per transfer', () => {
  const fifo = (up: number, down = up, perTransfer?: number): QueueRules => ({ fifo: true, maxActive: { upload: up, download: down }, perTransfer });
  /** Finishes every part in flight of `ts` and lets the scheduler hand slots out again. */
  const finishAll = async (ts: ReturnType<typeof fake>[]) => {
    for (const t of ts) for (let i = 0; i < 64; i++) t.finishOne();
    await tick();
  };

  test('at most max_active transfers of a direction run; they start in creation order; the others wait with their place, even when parts are ready and slots free', async () => {
    const s = new Scheduler(8, undefined, fifo(1));
    const ts = ['a', 'b', 'c'].map((id) => fake(id, 2));
    for (const t of ts) s.add(t);
    // One transfer runs (both its parts, as slots are free); b and c wait though slots sit free.
    expect(ts.map((t) => t.started.length)).toEqual([2, 0, 0]);
    expect(ts.map((t) => s.queuePlace(t.id))).toEqual([undefined, 1, 2]);
    await finishAll(ts);
    // a has no parts left but keeps its place until it is removed (complete): still nobody else.
    expect(ts.map((t) => t.started.length)).toEqual([2, 0, 0]);
    s.remove('a');
    await tick();
    expect(ts.map((t) => t.started.length)).toEqual([2, 2, 0]);
    expect(ts.map((t) => s.queuePlace(t.id))).toEqual([undefined, undefined, 1]);
    s.remove('b');
    await tick();
    expect(ts.map((t) => t.started.length)).toEqual([2, 2, 2]);
  });

  test('a transfer not ready yet (preparing) holds its place: the next in line does not jump ahead', () => {
    const s = new Scheduler(8, undefined, fifo(1));
    const first = fake('first', 2);
    first.ready = false;
    const second = fake('second', 2);
    s.add(first);
    s.add(second);
    expect([first.started.length, second.started.length, s.queuePlace('second')]).toEqual([0, 0, 1]);
    first.ready = true;
    s.wake();
    expect([first.started.length, second.started.length]).toEqual([2, 0]);
  });

  test('uploads and downloads have max_active places of their own', () => {
    const s = new Scheduler(8, undefined, fifo(1, 2));
    const ups = ['u1', 'u2'].map((id) => fake(id, 1));
    const downs = ['d1', 'd2', 'd3'].map((id) => fake(id, 1, { lane: 'download' }));
    for (const t of [...ups, ...downs]) s.add(t);
    expect([...ups, ...downs].map((t) => t.started.length)).toEqual([1, 0, 1, 1, 0]);
    expect([s.queue('upload'), s.queue('download')]).toEqual([['u2'], ['d3']]);
  });

  test('priority still orders the line; a transfer that had begun (a restart) takes its turn by creation order, not before', () => {
    const s = new Scheduler(8, undefined, fifo(1));
    const a = fake('a', 1);
    const b = fake('b', 1);
    const resumed = fake('resumed', 1, { begun: true });
    const urgent = fake('urgent', 1, { priority: 3 });
    for (const t of [a, b, resumed, urgent]) s.add(t);
    expect([a, b, resumed, urgent].map((t) => t.started.length)).toEqual([1, 0, 0, 0]);
    // urgent, made last, is first in line; it does not take a's place.
    expect(s.queue('upload')).toEqual(['urgent', 'b', 'resumed']);
    s.remove('a');
    expect(s.queue('upload')).toEqual(['b', 'resumed']);
    expect(urgent.started.length).toBe(0); // started on the next wake
  });

  test('a paused transfer frees its place; resumed, it comes back in line at its creation order, behind the one running', async () => {
    const s = new Scheduler(8, undefined, fifo(1));
    const [a, b, c] = ['a', 'b', 'c'].map((id) => fake(id, 3));
    for (const t of [a!, b!, c!]) s.add(t);
    s.remove('a'); // paused: its parts end
    await finishAll([a!]);
    // b has the place and runs; c waits though slots are free.
    expect([b!.started.length, c!.started.length, s.inFlight()]).toEqual([3, 0, 3]);
    expect(s.queue('upload')).toEqual(['c']);
    s.add(a!); // resumed: before c, after b which runs
    expect(s.queue('upload')).toEqual(['a', 'c']);
    expect(s.queuePlace('a')).toBe(1);
  });

  test('a live change of max_active: a higher one starts more at once; a lower one lets those running end and holds new ones back', async () => {
    const s = new Scheduler(8, undefined, fifo(1));
    const ts = ['a', 'b', 'c', 'd'].map((id) => fake(id, 1));
    for (const t of ts) s.add(t);
    expect(ts.map((t) => t.started.length)).toEqual([1, 0, 0, 0]);
    s.setRules(fifo(3));
    expect(ts.map((t) => t.started.length)).toEqual([1, 1, 1, 0]);
    s.setRules(fifo(1));
    s.remove('a');
    s.remove('b');
    await tick();
    // Two of three ended: c still holds the one place, d waits.
    expect(ts.map((t) => t.started.length)).toEqual([1, 1, 1, 0]);
    expect(s.queuePlace('d')).toBe(1);
    s.remove('c');
    await tick();
    expect(ts[3]!.started.length).toBe(1);
  });

  test('a live change of fifo: turned on, those running go on and new ones wait; turned off, the ones waiting start', async () => {
    const s = new Scheduler(8);
    const a = fake('a', 2);
    const b = fake('b', 2);
    s.add(a);
    a.ready = false;
    s.add(b);
    expect([a.started.length, b.started.length]).toEqual([2, 2]);
    s.setRules(fifo(1));
    const c = fake('c', 2);
    s.add(c);
    expect([c.started.length, s.queuePlace('c')]).toEqual([0, 1]);
    s.setRules(DEFAULT_QUEUE_RULES);
    expect([c.started.length, s.queuePlace('c')]).toEqual([2, undefined]);
  });

  test('connections_per_transfer: no transfer has more parts in flight than the cap; the global limit still caps all; a live change holds at once', async () => {
    const s = new Scheduler(5, undefined, { ...DEFAULT_QUEUE_RULES, perTransfer: 2 });
    const up = fake('up', 20);
    const up2 = fake('up2', 20);
    const down = fake('down', 20, { lane: 'download' });
    for (const t of [up, up2, down]) s.add(t);
    expect([s.partsOf('up'), s.partsOf('up2'), s.partsOf('down'), s.inFlight()]).toEqual([2, 2, 1, 5]);
    // A freed part of `up` goes back to `up` at most up to its cap.
    up.finishOne();
    await tick();
    expect(s.partsOf('up')).toBeLessThanOrEqual(2);
    s.setRules({ ...DEFAULT_QUEUE_RULES, perTransfer: 1 });
    await finishAll([up, up2, down]);
    expect([s.partsOf('up'), s.partsOf('up2'), s.partsOf('down'), s.inFlight()]).toEqual([1, 1, 1, 3]);
    s.setRules({ ...DEFAULT_QUEUE_RULES, perTransfer: undefined });
    expect(s.inFlight()).toBe(5);
    // In FIFO mode as well (both uploads had started: they go on).
    s.setRules(fifo(1, 1, 1));
    await finishAll([up, up2, down]);
    expect([s.partsOf('up'), s.partsOf('up2'), s.partsOf('down')]).toEqual([1, 1, 1]);
  });
});

// What an upload file offers the scheduler: parts in order once their blueprints
// are known, retries once their back-off is over, and the chunk size it uses.
describe('FileTransfer', () => {
  const bp = { url: 'http://store/x', method: 'PUT' as const, headers: {}, body: '' };
  const row = (size: number, chunk: number) => ({
    upload_id: 'u', idx: 0, kind: 'file' as const, local_path: '/x', rel_dir: '', name: 'x', size, mtime_ms: 0,
    file_id: 'f', s3_upload_id: 's', chunk_size: chunk, part_count: Math.ceil(size / chunk), done: 0,
  });

  test('hands out parts without a record, in order, only with a blueprint; asks blueprints ahead', () => {
    const f = new FileTransfer(row(10 * 5, 5), [{ part_number: 2, etag: 'e', size: 5 }]);
    f.plan();
    expect(f.take(0)).toBeUndefined();
    expect(f.needsBlueprintsFrom(4)).toBe(1);
    for (const n of [1, 3, 4]) f.blueprints.set(n, { bp, gen: 0 });
    expect([f.take(0), f.take(0), f.take(0), f.take(0)]).toEqual([1, 3, 4, undefined]);
    expect(f.needsBlueprintsFrom(4)).toBe(5);
    f.fetching = true;
    expect(f.needsBlueprintsFrom(4)).toBeUndefined();
    expect(f.range(10)).toEqual({ start: 45, length: 5 });
  });

  test('a retry waits out its back-off, and says when it is due', () => {
    const f = new FileTransfer(row(10, 5));
    f.plan();
    f.blueprints.set(1, { bp, gen: 0 });
    expect(f.take(0)).toBe(1);
    f.requeue(1, 100);
    expect(f.take(50)).toBeUndefined();
    expect(f.nextRetryAt(50)).toBe(100);
    expect(f.take(100)).toBe(1);
    expect(f.nextRetryAt(100)).toBe(Infinity);
  });

  test('chooseChunkSize clamps to the limits and grows to fit the part count', () => {
    const limits = { min: 5, max: 100, maxCount: 10 };
    expect(chooseChunkSize(1, 20, limits)).toBe(5);
    expect(chooseChunkSize(500, 20, limits)).toBe(100);
    expect(chooseChunkSize(5, 95, limits)).toBe(10);
    expect(() => chooseChunkSize(5, 1001, limits)).toThrow(/does not fit/);
  });
});
