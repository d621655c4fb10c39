// The transfer event feed: state changes go out at once, progress at most every
// 250 ms (the last change always gets out), and never more often than ten times
// what building the record took, so a huge transfer cannot swamp the agent.
import { afterEach, beforeEach, expect, test, vi } from 'vitest';
import { ThrottledFeed } from '../../../src/agent/engine/feed.js';

let clock = 0;
const now = () => clock;
/** Moves the clock and runs the timers due meanwhile. */
const advance = (ms: number) => {
  clock += ms;
  vi.advanceTimersByTime(ms);
};

/** A feed (250 ms, cost factor 10, our clock) and the ids it published, in order. */
function idFeed(): { feed: ThrottledFeed; sent: string[] } {
  const sent: string[] = [];
  return { feed: new ThrottledFeed((id) => sent.push(id), 250, 10, now), sent };
}

beforeEach(() => {
  vi.useFakeTimers();
  clock = 1_000;
});
afterEach(() => {
  vi.useRealTimers();
});

test('state changes go out at once; progress at most every 250 ms, and the last one is not lost', () => {
  const sent: number[] = [];
  const feed = new ThrottledFeed(() => sent.push(clock), 250, 10, now);
  feed.changed('u1', 'progress');
  expect(sent).toEqual([1_000]);
  advance(100);
  feed.changed('u1', 'progress');
  feed.changed('u1', 'progress');
  expect(sent).toHaveLength(1);
  feed.changed('u1', 'state');
  expect(sent).toEqual([1_000, 1_100]);
  advance(50);
  feed.changed('u1', 'progress'); // 50 ms after the state event: waits for the rest of the 250
  advance(199);
  expect(sent).toHaveLength(2);
  advance(1);
  expect(sent).toEqual([1_000, 1_100, 1_350]);
  feed.close();
});

test('transfers are throttled each on its own', () => {
  const { feed, sent } = idFeed();
  feed.changed('a', 'progress');
  feed.changed('b', 'progress');
  feed.changed('a', 'progress');
  expect(sent).toEqual(['a', 'b']);
  feed.close();
});

test('a record that took 100 ms to build holds the next progress event back 1 s; state changes still go at once', () => {
  const sent: number[] = [];
  const feed = new ThrottledFeed(() => {
    sent.push(clock);
    clock += 100; // building and sending the record of a huge transfer
  }, 250, 10, now);
  feed.changed('big', 'progress');
  expect(sent).toEqual([1_000]); // done at 1_100
  advance(500);
  feed.changed('big', 'progress');
  advance(499);
  expect(sent).toHaveLength(1);
  advance(1);
  expect(sent).toEqual([1_000, 2_100]);
  feed.changed('big', 'state');
  expect(sent).toHaveLength(3);
  feed.close();
});

test('forget drops what was waiting; after close nothing is sent', () => {
  const { feed, sent } = idFeed();
  feed.changed('x', 'progress');
  feed.changed('x', 'progress');
  feed.forget('x');
  advance(1_000);
  expect(sent).toEqual(['x']);
  feed.close();
  feed.changed('x', 'state');
  expect(sent).toEqual(['x']);
});
