// The engine's retry rules: which failures are retried, the back-off, and that
// every retry loop ends.
import { describe, expect, test } from 'vitest';
import { HostedApiError } from '../../../src/client/http.js';
import { backoffMs, engineTuning, isTransient, isTransientStatus, retrying, sleep } from '../../../src/agent/engine/retry.js';

const policy = { attempts: 4, baseMs: 0, maxMs: 0 };
const netError = () => Object.assign(new Error('socket hang up'), { code: 'ECONNRESET' });

describe('backoffMs', () => {
  test('grows exponentially up to the cap, with full jitter', () => {
    const p = { baseMs: 100, maxMs: 1000 };
    expect([1, 2, 3, 4, 5].map((a) => backoffMs(a, p, () => 0.999999))).toEqual([99, 199, 399, 799, 999]);
    expect(backoffMs(3, p, () => 0)).toBe(0);
    expect(backoffMs(30, p, () => 0.5)).toBe(500);
  });
});

describe('isTransient', () => {
  test('network errors, timeouts, 5xx, 429 and 408 are retried', () => {
    expect(isTransient(netError())).toBe(true);
    expect(isTransient(Object.assign(new Error('Headers Timeout Error'), { code: 'UND_ERR_HEADERS_TIMEOUT' }))).toBe(true);
    expect(isTransient(new HostedApiError(503, 'x', 'busy'))).toBe(true);
    expect(isTransient(new HostedApiError(500, 'internal', 'x'))).toBe(true);
    expect(isTransient(new HostedApiError(429, 'x', 'slow down'))).toBe(true);
    expect([500, 502, 503, 429, 408].every(isTransientStatus)).toBe(true);
  });

  test('refusals, aborts and bugs are not', () => {
    expect(isTransient(new HostedApiError(400, 'validation_failed', 'x'))).toBe(false);
    expect(isTransient(new HostedApiError(409, 'package_not_new', 'x'))).toBe(false);
    expect(isTransient(new DOMException('aborted', 'AbortError'))).toBe(false);
    expect(isTransient(new TypeError('undefined is not a function'))).toBe(false);
    expect([200, 400, 403, 404].some(isTransientStatus)).toBe(false);
  });
});

describe('retrying', () => {
  test('retries a transient failure until it succeeds', async () => {
    let calls = 0;
    const v = await retrying(async () => {
      if (++calls < 3) throw netError();
      return 'ok';
    }, policy);
    expect(v).toBe('ok');
    expect(calls).toBe(3);
  });

  test('gives up after the number of attempts and throws the last error', async () => {
    let calls = 0;
    await expect(retrying(async () => { calls++; throw new HostedApiError(502, 'bad_gateway', `try ${calls}`); }, policy)).rejects.toThrow('try 4');
    expect(calls).toBe(4);
  });

  test('does not retry a refusal', async () => {
    let calls = 0;
    await expect(retrying(async () => { calls++; throw new HostedApiError(404, 'not_found', 'gone'); }, policy)).rejects.toThrow('gone');
    expect(calls).toBe(1);
  });

  test('stops waiting as soon as the signal aborts', async () => {
    const ac = new AbortController();
    let calls = 0;
    const p = retrying(async () => { calls++; throw netError(); }, { attempts: 10, baseMs: 60_000, maxMs: 60_000 }, ac.signal);
    await new Promise((r) => setImmediate(r));
    ac.abort();
    await expect(p).rejects.toThrow();
    expect(calls).toBe(1);
  });

  test('sleep rejects at once for an aborted signal', async () => {
    await expect(sleep(10_000, AbortSignal.abort())).rejects.toThrow();
  });
});

describe('engineTuning', () => {
  test('defaults, and FERRY_AGENT_* overrides that must be integers', () => {
    expect(engineTuning({})).toMatchObject({ retry: { attempts: 6, baseMs: 500, maxMs: 30_000 }, timeoutMs: 60_000, blueprintBatch: 100 });
    expect(engineTuning({ FERRY_AGENT_TIMEOUT_MS: '1500', FERRY_AGENT_RETRY_ATTEMPTS: '3' })).toMatchObject({ timeoutMs: 1500, retry: { attempts: 3 } });
    expect(() => engineTuning({ FERRY_AGENT_TIMEOUT_MS: 'soon' })).toThrow(/FERRY_AGENT_TIMEOUT_MS/);
    expect(() => engineTuning({ FERRY_AGENT_RETRY_ATTEMPTS: '0' })).toThrow();
  });
});
