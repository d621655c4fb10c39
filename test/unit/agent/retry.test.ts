// The engine's retry rules: which failures are retried and how (an outage, a
// transient failure, or none), the back-off and Retry-After, and a retry loop
// that waits for a down target and ends after --retry-for.
import pino from 'pino';
import { afterEach, describe, expect, test } from 'vitest';
import { HostedApiError } from '../../../src/client/http.js';
import { backoffMs, engineTuning, failureKind, isTransient, isTransientStatus, retryAfterMs, retrying, sleep } from '../../../src/agent/engine/retry.js';
import { Outages, type Probe } from '../../../src/agent/engine/outages.js';

const policy = { attempts: 4, baseMs: 0, maxMs: 0, retryForMs: 60_000 };
const netError = (code = 'ECONNRESET') => Object.assign(new Error('socket hang up'), { code });

let outages: Outages | undefined;
afterEach(async () => {
  await outages?.close();
  outages = undefined;
});

/** A service target whose probe answers what `answer` says (a status, or a thrown error). */
function target(answer: Probe = async () => ({ status: 200 }), p = policy) {
  outages = new Outages(p, pino({ level: 'silent' }), 1000, answer);
  return outages.target('service', 'http://127.0.0.1:1');
}

describe('backoffMs', () => {
  test('doubles from the base up to the cap, between half and all of each step', () => {
    const p = { baseMs: 1000, maxMs: 60_000 };
    expect([1, 2, 3, 4, 5, 6, 7, 8].map((a) => backoffMs(a, p, () => 0.999999))).toEqual([999, 1999, 3999, 7999, 15_999, 31_999, 59_999, 59_999]);
    expect([1, 2, 3].map((a) => backoffMs(a, p, () => 0))).toEqual([500, 1000, 2000]);
    expect(backoffMs(10_000, p, () => 0)).toBe(30_000);
  });
});

describe('retryAfterMs', () => {
  test('seconds or an HTTP date, never negative, at most an hour; nothing for junk', () => {
    const now = Date.parse('2026-11-26T10:00:00Z');
    expect(retryAfterMs('3', now)).toBe(3000);
    expect(retryAfterMs(['7'], now)).toBe(7000);
    expect(retryAfterMs('Thu, 26 Nov 2026 10:00:30 GMT', now)).toBe(30_000);
    expect(retryAfterMs('Thu, 26 Nov 2026 09:00:00 GMT', now)).toBe(0);
    expect(retryAfterMs('86400', now)).toBe(3600_000);
    expect(retryAfterMs('soon', now)).toBeUndefined();
    expect(retryAfterMs(undefined, now)).toBeUndefined();
  });
});

describe('failureKind', () => {
  test('no connection, a broken one, a timeout and 502/503/504 are outages', () => {
    for (const code of ['ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT', 'ENOTFOUND', 'UND_ERR_SOCKET', 'UND_ERR_HEADERS_TIMEOUT']) expect(failureKind(netError(code)), code).toBe('outage');
    for (const s of [502, 503, 504]) expect(failureKind(new HostedApiError(s, 'x', 'y'))).toBe('outage');
    expect(failureKind({ status: 503 })).toBe('outage');
  });

  test('other 5xx, 429 and 408 are transient; refusals, aborts and bugs are permanent', () => {
    for (const s of [500, 501, 429, 408]) expect(failureKind(new HostedApiError(s, 'x', 'y'))).toBe('transient');
    expect(failureKind(netError('EIO'))).toBe('transient');
    for (const s of [400, 401, 403, 404, 409, 410]) expect(failureKind(new HostedApiError(s, 'x', 'y'))).toBe('permanent');
    expect(failureKind(new DOMException('aborted', 'AbortError'))).toBe('permanent');
    expect(failureKind(new TypeError('undefined is not a function'))).toBe('permanent');
    expect(isTransient(netError())).toBe(true);
    expect([500, 502, 503, 429, 408].every(isTransientStatus)).toBe(true);
    expect([200, 400, 403, 404].some(isTransientStatus)).toBe(false);
  });
});

describe('retrying', () => {
  test('retries a transient failure until it succeeds', async () => {
    let calls = 0;
    const v = await retrying(async () => {
      if (++calls < 3) throw new HostedApiError(500, 'internal', 'x');
      return 'ok';
    }, target(), { policy });
    expect(v).toBe('ok');
    expect(calls).toBe(3);
  });

  test('an outage takes the target down; the loop waits for its probe, then goes on', async () => {
    let probes = 0;
    let back = false;
    const t = target(async () => {
      probes++;
      if (!back) throw netError('ECONNREFUSED');
      return { status: 404 }; // any answer but 5xx, 408, 429 says it is serving
    }, { ...policy, baseMs: 5, maxMs: 20 });
    let calls = 0;
    const p = retrying(async () => {
      calls++;
      if (!back) throw netError('ECONNREFUSED');
      return 'ok';
    }, t, { policy: { ...policy, baseMs: 5, maxMs: 20 } });
    await expect.poll(() => probes).toBeGreaterThanOrEqual(3);
    // While down, the probe asks, not the call: it was made once.
    expect(calls).toBe(1);
    expect(t.down?.lastError).toMatch(/socket hang up|ECONNREFUSED/);
    back = true;
    await expect(p).resolves.toBe('ok');
    expect(calls).toBe(2);
    expect(t.down).toBeUndefined();
  });

  test('without a transfer to end it, the loop gives up after retryFor and throws the last error', async () => {
    let calls = 0;
    const p = { ...policy, baseMs: 1, maxMs: 2, retryForMs: 30 };
    await expect(retrying(async () => { calls++; throw new HostedApiError(500, 'internal', `try ${calls}`); }, target(undefined, p), { policy: p })).rejects.toThrow(/try \d+/);
    expect(calls).toBeGreaterThan(1);
  });

  test('does not retry a refusal', async () => {
    let calls = 0;
    await expect(retrying(async () => { calls++; throw new HostedApiError(404, 'not_found', 'gone'); }, target(), { policy })).rejects.toThrow('gone');
    expect(calls).toBe(1);
  });

  test('stops waiting as soon as the signal aborts', async () => {
    const ac = new AbortController();
    let calls = 0;
    const p = { ...policy, baseMs: 60_000, maxMs: 60_000 };
    const run = retrying(async () => { calls++; throw new HostedApiError(500, 'internal', 'x'); }, target(undefined, p), { policy: p, signal: ac.signal });
    await new Promise((r) => setImmediate(r));
    ac.abort();
    await expect(run).rejects.toThrow();
    expect(calls).toBe(1);
  });

  test('sleep rejects at once for an aborted signal: before a timer of 0 ms fires', async () => {
    const first = await Promise.race([
      sleep(10_000, AbortSignal.abort()).then(() => 'slept', () => 'rejected'),
      new Promise((r) => setTimeout(() => r('timer'), 0)),
    ]);
    expect(first).toBe('rejected');
  });
});

describe('engineTuning', () => {
  test('defaults (1 s doubling to 60 s, 24 h of retries), and FERRY_AGENT_* overrides that must be integers', () => {
    expect(engineTuning({})).toMatchObject({ retry: { attempts: 6, baseMs: 1000, maxMs: 60_000, retryForMs: 24 * 3600_000 }, timeoutMs: 60_000, blueprintBatch: 100 });
    expect(engineTuning({}, 90_000).retry.retryForMs).toBe(90_000);
    expect(engineTuning({ FERRY_AGENT_TIMEOUT_MS: '1500', FERRY_AGENT_RETRY_ATTEMPTS: '3' })).toMatchObject({ timeoutMs: 1500, retry: { attempts: 3 } });
    expect(() => engineTuning({ FERRY_AGENT_TIMEOUT_MS: 'soon' })).toThrow(/FERRY_AGENT_TIMEOUT_MS/);
    expect(() => engineTuning({ FERRY_AGENT_RETRY_ATTEMPTS: '0' })).toThrow();
  });
});
