// The transfer event feed (engine/feed.ts): it sends the whole summary when
// anything beyond the moving totals changed, the totals alone otherwise, at most
// every 250 ms per transfer (the last change always gets out), never more often
// than ten times what reading the summary took, and file changes only while
// someone follows that transfer's files.
import { afterEach, beforeEach, expect, test, vi } from 'vitest';
import { TransferFeed, type FeedChange } from '../../../src/agent/engine/feed.js';

let clock = 0;
const now = () => clock;
/** Moves the clock and runs the timers due meanwhile. */
const advance = (ms: number) => {
  clock += ms;
  vi.advanceTimersByTime(ms);
};

interface Fake { state: string; progress: number; size: number; file_count: number; files_done: number; updated_at: string }
type File = { index: number; state: string };

/** A feed over transfers we change by hand; `sent` is what it sent, with the clock. */
function setup(o: { readCost?: number; follows?: boolean } = {}) {
  const transfers = new Map<string, Fake>();
  const files = new Map<string, File[]>();
  const sent: { at: number; id: string; c: FeedChange<Fake, File> }[] = [];
  const feed = new TransferFeed<Fake, File>(
    {
      summary: (id) => {
        clock += o.readCost ?? 0;
        const t = transfers.get(id);
        return t && { ...t };
      },
      totals: true,
      *files(id, indexes) {
        const all = files.get(id) ?? [];
        yield indexes === 'all' ? all.filter((f) => f.state !== 'complete') : all.filter((f) => indexes.includes(f.index));
      },
      followsFiles: () => o.follows ?? false,
      send: (id, c) => sent.push({ at: clock, id, c }),
    },
    250,
    10,
    now,
  );
  const make = (id: string, over: Partial<Fake> = {}) => transfers.set(id, { state: 'transferring', progress: 0, size: 100, file_count: 2, files_done: 0, updated_at: 't0', ...over });
  return { feed, transfers, files, sent, make, kinds: () => sent.map((s) => s.c.change) };
}

beforeEach(() => {
  vi.useFakeTimers();
  clock = 1_000;
});
afterEach(() => vi.useRealTimers());

test('a new transfer goes out as its whole summary; then moving totals go alone', () => {
  const { feed, transfers, sent, make, kinds } = setup();
  make('u1');
  feed.changed('u1', 'state');
  transfers.get('u1')!.progress = 40;
  advance(300);
  feed.changed('u1', 'progress');
  expect(kinds()).toEqual(['record', 'progress']);
  expect(sent[0]!.c).toEqual({ change: 'record', summary: expect.objectContaining({ state: 'transferring', progress: 0 }) });
  expect(sent[1]!.c).toEqual({ change: 'progress', totals: { progress: 40, size: 100, file_count: 2, files_done: 0, updated_at: 't0' } });
  feed.close();
});

test('progress at most every 250 ms, the last change never lost; a change of state goes at once', () => {
  const { feed, transfers, sent, make } = setup();
  make('u1');
  feed.changed('u1', 'state');
  for (let ms = 1; ms <= 1000; ms++) {
    transfers.get('u1')!.progress = ms;
    feed.changed('u1', 'progress');
    advance(1);
  }
  advance(500);
  const progress = sent.filter((s) => s.c.change === 'progress');
  expect(progress.length).toBeGreaterThanOrEqual(3);
  expect(progress.length).toBeLessThanOrEqual(5);
  const gaps = progress.slice(1).map((s, i) => s.at - progress[i]!.at);
  expect(Math.min(...gaps)).toBeGreaterThanOrEqual(250);
  expect(progress.at(-1)!.c).toMatchObject({ totals: { progress: 1000 } });
  const before = sent.length;
  transfers.get('u1')!.state = 'paused';
  feed.changed('u1', 'state');
  expect(sent.length).toBe(before + 1);
  expect(sent.at(-1)!.c).toMatchObject({ change: 'record', summary: { state: 'paused' } });
  feed.close();
});

test('a wait that begins with no state change is a new summary, not progress; nothing changed sends nothing', () => {
  const { feed, transfers, make, kinds } = setup();
  make('u1');
  feed.changed('u1', 'state');
  advance(300);
  feed.changed('u1', 'progress'); // nothing changed
  (transfers.get('u1') as Fake & { waiting?: object }).waiting = { reason: 'store_unreachable' };
  advance(300);
  feed.changed('u1', 'progress');
  expect(kinds()).toEqual(['record', 'record']);
  feed.close();
});

test('transfers are throttled each on its own', () => {
  const { feed, make, sent } = setup();
  make('a');
  make('b');
  feed.changed('a', 'progress');
  feed.changed('b', 'progress');
  feed.changed('a', 'progress');
  expect(sent.map((s) => s.id)).toEqual(['a', 'b']);
  feed.close();
});

test('a summary that took 100 ms to read holds the next progress back 1 s; state changes still go at once', () => {
  const { feed, transfers, make, sent } = setup({ readCost: 100 });
  make('big');
  feed.changed('big', 'progress'); // read 1_000..1_100
  expect(sent).toHaveLength(1);
  advance(500);
  transfers.get('big')!.progress = 50;
  feed.changed('big', 'progress');
  advance(499);
  expect(sent).toHaveLength(1);
  advance(1);
  expect(sent).toHaveLength(2);
  transfers.get('big')!.state = 'paused';
  feed.changed('big', 'state');
  expect(sent).toHaveLength(3);
  feed.close();
});

test('file changes are sent only while followed: the files that changed, and on a change of state every file not complete', () => {
  const quiet = setup();
  quiet.make('u1');
  quiet.files.set('u1', [{ index: 0, state: 'transferring' }]);
  quiet.feed.changed('u1', 'progress', 0);
  expect(quiet.kinds()).toEqual(['record']);
  quiet.feed.close();

  const { feed, make, files, transfers, sent, kinds } = setup({ follows: true });
  make('u1');
  files.set('u1', [{ index: 0, state: 'complete' }, { index: 1, state: 'transferring' }, { index: 2, state: 'queued' }]);
  feed.changed('u1', 'progress', 1);
  expect(kinds()).toEqual(['record', 'files']);
  expect(sent[1]!.c).toEqual({ change: 'files', files: [{ index: 1, state: 'transferring' }] });
  advance(300);
  transfers.get('u1')!.state = 'paused';
  feed.changed('u1', 'state');
  expect(sent.at(-1)!.c).toEqual({ change: 'files', files: [{ index: 1, state: 'transferring' }, { index: 2, state: 'queued' }] });
  feed.close();
});

test('removed says so once and drops what was waiting; after close nothing is sent', () => {
  const { feed, make, transfers, kinds } = setup();
  make('x');
  feed.changed('x', 'progress');
  transfers.get('x')!.progress = 9;
  feed.changed('x', 'progress');
  transfers.delete('x');
  feed.removed('x');
  advance(1_000);
  expect(kinds()).toEqual(['record', 'removed']);
  feed.close();
  make('x');
  feed.changed('x', 'state');
  expect(kinds()).toEqual(['record', 'removed']);
});
