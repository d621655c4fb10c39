// One outage handled once (a target goes down, one probe at a time asks, the
// first answer brings it up for every waiter), a transfer's waiting state and
// its end after --retry-for, and the watch that notices a sleep of the machine.
import pino from 'pino';
import { afterEach, describe, expect, test, vi } from 'vitest';
import { Outages, type Probe } from '../../../src/agent/engine/outages.js';
import { Trouble } from '../../../src/agent/engine/trouble.js';
import { SleepWatch } from '../../../src/agent/engine/sleepWatch.js';
import type { GaveUpError } from '../../../src/agent/engine/retry.js';

const policy = { attempts: 6, baseMs: 10, maxMs: 40, retryForMs: 60_000 };
const refused = () => Object.assign(new Error('connect ECONNREFUSED'), { code: 'ECONNREFUSED' });

let outages: Outages | undefined;
afterEach(async () => {
  vi.useRealTimers();
  await outages?.close();
  outages = undefined;
});

function setup(probe: Probe, p = policy) {
  outages = new Outages(p, pino({ level: 'silent' }), 1000, probe);
  return outages;
}

describe('a target', () => {
  test('goes down once however many requests report it, is probed one request at a time, and its first answer frees every waiter together', async () => {
    const seen: { url: string; method: string }[] = [];
    let inFlight = 0;
    let most = 0;
    let back = false;
    const o = setup(async (url, method) => {
      seen.push({ url, method });
      most = Math.max(most, ++inFlight);
      await new Promise((r) => setTimeout(r, 2));
      inFlight--;
      if (!back) throw refused();
      return { status: 401 };
    });
    const ups: string[] = [];
    o.onUp((t) => ups.push(t.kind));
    const t = o.target('service', 'http://127.0.0.1:9/api/');
    expect(o.target('service', 'http://127.0.0.1:9/api')).toBe(t);
    for (let i = 0; i < 8; i++) t.report(`part ${i}: ECONNREFUSED`);
    expect(t.down?.lastError).toBe('part 7: ECONNREFUSED');
    const waiters = Array.from({ length: 5 }, () => t.ready());
    await expect.poll(() => seen.length).toBeGreaterThanOrEqual(3);
    expect(most).toBe(1);
    // The service is probed at a route of the spec that needs no credentials.
    expect(seen[0]).toEqual({ url: 'http://127.0.0.1:9/api/v1/system/packages/spec', method: 'GET' });
    back = true;
    await Promise.all(waiters);
    expect(t.down).toBeUndefined();
    expect(ups).toEqual(['service']);
  });

  test('a store is probed at its origin; a 503 keeps it down until the Retry-After it gives, and only then is it asked again', async () => {
    const asked: number[] = [];
    const o = setup(async () => {
      asked.push(Date.now());
      return asked.length === 1 ? { status: 503, retryAfter: '1' } : { status: 403 };
    });
    const t = o.target('store', 'http://127.0.0.1:9/bucket/key?partNumber=1');
    expect(t.base).toBe('http://127.0.0.1:9');
    t.report('the store answered 503');
    await t.ready();
    expect(asked).toHaveLength(2);
    expect(asked[1]! - asked[0]!).toBeGreaterThanOrEqual(990); // a lower bound: it waited at least what was asked
  });

  test('probeNow skips a long back-off (the machine woke up)', async () => {
    let n = 0;
    const o = setup(async () => (++n === 1 ? { status: 502 } : { status: 200 }), { ...policy, baseMs: 600_000, maxMs: 600_000 });
    const t = o.target('store', 'http://127.0.0.1:9');
    t.report('ECONNRESET', 0);
    await expect.poll(() => n).toBe(1);
    expect(t.down!.nextAttemptAt - Date.now()).toBeGreaterThan(60_000);
    o.probeAllNow();
    await t.ready();
    expect(n).toBe(2);
  });

  test('ready() rejects when its signal aborts, and the target stays down for the others', async () => {
    const o = setup(async () => {
      throw refused();
    });
    const t = o.target('service', 'http://127.0.0.1:9');
    t.report('ECONNREFUSED');
    const ac = new AbortController();
    const p = t.ready(ac.signal);
    ac.abort(new Error('paused'));
    await expect(p).rejects.toThrow('paused');
    expect(t.down).toBeDefined();
  });
});

describe('a transfer in trouble', () => {
  test('waits from its first failure, says for what and until when, and is well again at its first success', () => {
    vi.useFakeTimers({ now: Date.parse('2026-11-26T10:00:00Z') });
    const o = setup(async () => ({ status: 200 }));
    const store = o.target('store', 'http://127.0.0.1:9');
    const changes: number[] = [];
    const tr = new Trouble(60_000, { changed: () => changes.push(1), gaveUp: () => {} });
    expect(tr.waiting()).toBeUndefined();
    tr.failed(store, 'the store answered 500', Date.now() + 2000);
    expect(tr.waiting()).toEqual({ reason: 'store_error', since: '2026-11-26T10:00:00.000Z', next_attempt_at: '2026-11-26T10:00:02.000Z', last_error: 'the store answered 500' });
    vi.advanceTimersByTime(1000);
    store.report('ECONNREFUSED', 5000);
    tr.failed(store, 'ECONNREFUSED', Date.now() + 1000);
    // Down: the next try is the probe's.
    expect(tr.waiting()).toEqual({ reason: 'store_unreachable', since: '2026-11-26T10:00:00.000Z', next_attempt_at: '2026-11-26T10:00:06.000Z', last_error: 'ECONNREFUSED' });
    tr.succeeded();
    expect(tr.waiting()).toBeUndefined();
    expect(changes).toHaveLength(3);
  });

  test('a transfer held back by a down target waits for its probe without a failure of its own', () => {
    vi.useFakeTimers({ now: Date.parse('2026-11-26T10:00:00Z') });
    const o = setup(async () => ({ status: 200 }));
    const store = o.target('store', 'http://127.0.0.1:9');
    let changes = 0;
    const tr = new Trouble(60_000, { changed: () => changes++, gaveUp: () => {} });
    tr.blockedBy(store);
    expect(tr.waiting()).toBeUndefined(); // up: nothing holds it back
    store.report('connect ECONNREFUSED', 4000);
    tr.blockedBy(store);
    tr.blockedBy(store); // asked again while held: no new change
    expect(tr.waiting()).toEqual({ reason: 'store_unreachable', since: '2026-11-26T10:00:00.000Z', next_attempt_at: '2026-11-26T10:00:04.000Z', last_error: 'connect ECONNREFUSED' });
    expect(changes).toBe(1);
  });

  test('gives up once retryFor has passed without a success, and a success restarts the count', () => {
    vi.useFakeTimers({ now: Date.parse('2026-11-26T10:00:00Z') });
    const o = setup(async () => ({ status: 200 }));
    const service = o.target('service', 'http://127.0.0.1:9');
    const gaveUp: GaveUpError[] = [];
    const tr = new Trouble(3600_000, { changed: () => {}, gaveUp: (e) => gaveUp.push(e) });
    tr.failed(service, 'ECONNREFUSED', Date.now());
    vi.advanceTimersByTime(3000_000);
    tr.succeeded();
    tr.failed(service, 'the service answered 500', Date.now());
    vi.advanceTimersByTime(3599_000);
    expect(gaveUp).toHaveLength(0);
    vi.advanceTimersByTime(2000);
    expect(gaveUp).toHaveLength(1);
    expect(gaveUp[0]!.recoverable).toBe(true);
    expect(gaveUp[0]!.message).toMatch(/^no success for 1 h \(--retry-for\); last: the service answered 500\. It resumes by itself when the service is back/);
    expect(tr.waiting()).toBeUndefined();
  });
});

describe('the sleep watch', () => {
  test('a tick that finds far more wall-clock time gone than it waited is a wake-up; ordinary ticks are not', () => {
    let now = 1_000_000;
    const w = new SleepWatch({ intervalMs: 5000, slackMs: 10_000, now: () => now });
    const woke: number[] = [];
    w.onWake((ms) => woke.push(ms));
    now += 5000;
    w.tick();
    now += 14_000; // a busy event loop: late, but within the slack
    w.tick();
    expect(woke).toEqual([]);
    now += 3_600_000;
    w.tick();
    expect(woke).toEqual([3_595_000]);
  });
});
