// Retries of the transfer engine: which failures are worth another try, how long
// to wait (exponential back-off with full jitter), and a bounded retry loop.
// Nothing retries forever: callers pass a number of attempts.
import { HostedApiError } from '../../client/http.js';

export interface RetryPolicy {
  /** Tries in all, the first included. */
  attempts: number;
  baseMs: number;
  maxMs: number;
}

/** Engine settings; FERRY_AGENT_* environment variables let tests make them small. */
export interface EngineTuning {
  retry: RetryPolicy;
  /** undici headersTimeout and bodyTimeout of every store request. */
  timeoutMs: number;
  /** Fresh blueprints after a 403 (expired URL), in a row, per file. */
  maxExpiredRefreshes: number;
  /** Part blueprints asked for per request. */
  blueprintBatch: number;
}

function envInt(env: NodeJS.ProcessEnv, name: string, fallback: number, min: number): number {
  const raw = env[name];
  if (raw === undefined || raw === '') return fallback;
  const n = Number(raw);
  if (!Number.isInteger(n) || n < min) throw new Error(`${name} must be an integer >= ${min}, got "${raw}"`);
  return n;
}

export function engineTuning(env: NodeJS.ProcessEnv = process.env): EngineTuning {
  return {
    retry: {
      attempts: envInt(env, 'FERRY_AGENT_RETRY_ATTEMPTS', 6, 1),
      baseMs: envInt(env, 'FERRY_AGENT_RETRY_BASE_MS', 500, 0),
      maxMs: envInt(env, 'FERRY_AGENT_RETRY_MAX_MS', 30_000, 0),
    },
    timeoutMs: envInt(env, 'FERRY_AGENT_TIMEOUT_MS', 60_000, 1),
    maxExpiredRefreshes: 5,
    blueprintBatch: envInt(env, 'FERRY_AGENT_BLUEPRINT_BATCH', 100, 1),
  };
}

/** The wait before retry number `attempt` (1 = the first retry): random in [0, min(max, base * 2^(attempt-1))]. */
export function backoffMs(attempt: number, p: Pick<RetryPolicy, 'baseMs' | 'maxMs'>, random: () => number = Math.random): number {
  const ceiling = Math.min(p.maxMs, p.baseMs * 2 ** Math.max(0, attempt - 1));
  return Math.floor(random() * ceiling);
}

/** A failure that is worth retrying: the network, a timeout, the other side's trouble (5xx, 429). */
export function isTransient(err: unknown): boolean {
  if (err instanceof HostedApiError) return err.status >= 500 || err.status === 429 || err.status === 408;
  if (isAbort(err)) return false;
  // undici, node:net and fs errors (ECONNRESET, ECONNREFUSED, UND_ERR_*, timeouts, EIO) carry a
  // code; an error without one is a bug, and retrying it would only hide it.
  return typeof (err as { code?: unknown } | undefined)?.code === 'string';
}

export const isTransientStatus = (status: number) => status >= 500 || status === 429 || status === 408;

export function isAbort(err: unknown): boolean {
  const e = err as { name?: string; code?: string } | undefined;
  return e?.name === 'AbortError' || e?.code === 'ABORT_ERR' || e?.code === 'UND_ERR_ABORTED';
}

/** Resolves after `ms`, or rejects with an AbortError as soon as `signal` aborts. */
export function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(signal.reason ?? new DOMException('aborted', 'AbortError'));
    const onAbort = () => {
      clearTimeout(timer);
      reject(signal!.reason ?? new DOMException('aborted', 'AbortError'));
    };
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}

/**
 * Runs `fn` until it succeeds, fails for good (not transient) or has used up
 * `policy.attempts`; the last error is thrown. Aborting `signal` stops at once.
 */
export async function retrying<T>(fn: (attempt: number) => Promise<T>, policy: RetryPolicy, signal?: AbortSignal): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    signal?.throwIfAborted();
    try {
      return await fn(attempt);
    } catch (err) {
      if (signal?.aborted || !isTransient(err) || attempt >= policy.attempts) throw err;
      await sleep(backoffMs(attempt, policy), signal);
    }
  }
}

/** A failure no retry or resume gets past; the user has to act (e.g. a local file changed). */
export class PermanentError extends Error {
  readonly recoverable = false;
}

/** Errors a later resume can get past (the network, the store, a local read); the rest need the user. */
export function isRecoverable(err: unknown): boolean {
  if (err instanceof PermanentError) return false;
  if (err instanceof HostedApiError) return isTransient(err);
  return true;
}

export function describe(err: unknown): string {
  if (err instanceof HostedApiError) return `the service answered ${err.status} (${err.code}): ${err.message}`;
  return (err as Error)?.message || String(err);
}
