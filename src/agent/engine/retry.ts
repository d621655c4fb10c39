// Retries of the transfer engine: which failures are worth another try, how long
// to wait (exponential back-off with jitter, or the server's Retry-After), and a
// retry loop bounded by time, not by a count an outage of seconds would use up.
// A failure that says the other side cannot be reached is handed to its Target
// (outages.ts), which probes it once for everybody; the loop then waits for it.
import { HostedApiError } from '../../client/http.js';
import { DEFAULT_RETRY_FOR_MS } from '../config.js';
import type { Target } from './outages.js';
import type { Trouble } from './trouble.js';

export interface RetryPolicy {
  /** Tries in a row of a failure that may lie in the request itself (an ETag that differs, a part the store refused). */
  attempts: number;
  /** First back-off; each next one doubles, up to maxMs. */
  baseMs: number;
  maxMs: number;
  /** How long a transfer goes on retrying without any success before it stops in a (recoverable) error. */
  retryForMs: number;
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
  /** Files an upload run reads from SQLite at once (pendingFiles.ts). */
  readAhead: number;
  /** Entries of a download held in memory at most (downloadWindow.ts). */
  downloadWindow: number;
}

/** A Retry-After longer than this is taken as this: the agent looks again at least every hour. */
const MAX_RETRY_AFTER_MS = 3600 * 1000;

function envInt(env: NodeJS.ProcessEnv, name: string, fallback: number, min: number): number {
  const raw = env[name];
  if (raw === undefined || raw === '') return fallback;
  const n = Number(raw);
  if (!Number.isInteger(n) || n < min) throw new Error(`${name} must be an integer >= ${min}, got "${raw}"`);
  return n;
}

export function engineTuning(env: NodeJS.ProcessEnv = process.env, retryForMs = DEFAULT_RETRY_FOR_MS): EngineTuning {
  return {
    retry: {
      attempts: envInt(env, 'FERRY_AGENT_RETRY_ATTEMPTS', 6, 1),
      baseMs: envInt(env, 'FERRY_AGENT_RETRY_BASE_MS', 1000, 0),
      maxMs: envInt(env, 'FERRY_AGENT_RETRY_MAX_MS', 60_000, 0),
      retryForMs,
    },
    timeoutMs: envInt(env, 'FERRY_AGENT_TIMEOUT_MS', 60_000, 1),
    maxExpiredRefreshes: 5,
    blueprintBatch: envInt(env, 'FERRY_AGENT_BLUEPRINT_BATCH', 100, 1),
    readAhead: envInt(env, 'FERRY_AGENT_READ_AHEAD', 256, 1),
    downloadWindow: envInt(env, 'FERRY_AGENT_DOWNLOAD_WINDOW', 512, 8),
  };
}

/**
 * The wait before retry number `attempt` (1 = the first retry): base * 2^(attempt-1),
 * capped at max, with "equal jitter" (between half of that and all of it), so that
 * waiting clients spread out and the first retry still comes after about `base`.
 */
export function backoffMs(attempt: number, p: Pick<RetryPolicy, 'baseMs' | 'maxMs'>, random: () => number = Math.random): number {
  const ceiling = Math.min(p.maxMs, p.baseMs * 2 ** Math.min(52, Math.max(0, attempt - 1)));
  return Math.floor(ceiling / 2 + random() * (ceiling / 2));
}

/** A Retry-After header (seconds, or an HTTP date) as milliseconds from `now`; undefined when absent or unreadable. */
export function retryAfterMs(value: string | string[] | undefined, now = Date.now()): number | undefined {
  const v = (Array.isArray(value) ? value[0] : value)?.trim();
  if (!v) return undefined;
  const ms = /^\d+$/.test(v) ? Number(v) * 1000 : Date.parse(v) - now;
  return Number.isFinite(ms) ? Math.min(MAX_RETRY_AFTER_MS, Math.max(0, ms)) : undefined;
}

/** Error codes of a connection that could not be made, broke, or went quiet: the other side is not there for now. */
const UNREACHABLE = new Set([
  'ECONNREFUSED', 'ECONNRESET', 'ECONNABORTED', 'EPIPE', 'ETIMEDOUT', 'EHOSTUNREACH', 'EHOSTDOWN', 'ENETUNREACH', 'ENETDOWN',
  'ENETRESET', 'EAI_AGAIN', 'ENOTFOUND', 'SHORT_BODY',
]);

/** Statuses that say the server as a whole cannot serve now (a gateway without its backend, maintenance). */
const UNAVAILABLE = new Set([502, 503, 504]);

export const isTransientStatus = (status: number) => status >= 500 || status === 429 || status === 408;

/**
 * What a failure means for a retry:
 * - `outage`: the other side cannot be reached or says it is unavailable (connection
 *   refused or broken, a timeout, 502/503/504): its Target probes it for everyone;
 * - `transient`: this request failed in a way a later try fixes (another 5xx, 429, 408);
 * - `permanent`: no retry fixes it (a refusal, an abort, a bug).
 */
export type FailureKind = 'outage' | 'transient' | 'permanent';

/**
 * Why a request goes again: `outage` and `transient` as above (retried for as long
 * as --retry-for allows); `suspect`: the store refused or mangled this very request
 * (a wrong ETag, a 4xx, an error nobody foresaw), which a few fresh tries may fix
 * and more will not.
 */
export type RetryCause = Exclude<FailureKind, 'permanent'> | 'suspect';

export function failureKind(err: unknown): FailureKind {
  if (isAbort(err)) return 'permanent';
  const status = (err as { status?: unknown } | undefined)?.status;
  // A file the service is still scanning for malware: the service is there, the file is not ready yet.
  if (err instanceof HostedApiError && err.code === 'scan_pending') return 'transient';
  if (err instanceof HostedApiError || typeof status === 'number') {
    const s = status as number;
    return UNAVAILABLE.has(s) ? 'outage' : isTransientStatus(s) ? 'transient' : 'permanent';
  }
  const code = (err as { code?: unknown } | undefined)?.code;
  if (typeof code !== 'string') return 'permanent'; // an error without a code is a bug: retrying would only hide it
  return code.startsWith('UND_ERR') || UNREACHABLE.has(code) ? 'outage' : 'transient';
}

/** A failure that is worth retrying. */
export const isTransient = (err: unknown): boolean => failureKind(err) !== 'permanent';

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

/** The transfer went `retryFor` without a success; a later resume (or the service coming back) tries again. */
export class GaveUpError extends Error {
  readonly recoverable = true;
}

export interface RetryScope {
  policy: RetryPolicy;
  /** The transfer's waiting state (trouble.ts): it shows the wait and ends the transfer after retryFor. */
  trouble?: Trouble;
  signal?: AbortSignal;
}

/**
 * Runs `fn` until it succeeds or fails for good. Transient failures are retried
 * after a back-off (or Retry-After); while `target` is down (an outage, here or
 * seen by another request) the loop waits for its probe instead. Without a
 * trouble to end it, the loop gives up after retryFor from its first failure.
 */
export async function retrying<T>(fn: (attempt: number) => Promise<T>, target: Target, scope: RetryScope): Promise<T> {
  const { policy, trouble, signal } = scope;
  let firstFailure: number | undefined;
  for (let attempt = 1; ; attempt++) {
    signal?.throwIfAborted();
    if (target.down) {
      trouble?.blockedBy(target);
      await target.ready(signal);
    }
    try {
      const value = await fn(attempt);
      target.ok();
      trouble?.succeeded();
      return value;
    } catch (err) {
      const kind = failureKind(err);
      if (signal?.aborted || kind === 'permanent') throw err;
      const after = retryAfterMs((err as { retryAfter?: string }).retryAfter);
      if (kind === 'outage') target.report(describe(err), after);
      const delay = after ?? backoffMs(attempt, policy);
      trouble?.failed(target, describe(err), Date.now() + delay);
      firstFailure ??= Date.now();
      if (!trouble && Date.now() - firstFailure >= policy.retryForMs) throw err;
      if (target.down) await target.ready(signal);
      else await sleep(delay, signal);
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
