// What a failed range means: try it again later, give up on one file, or stop
// the download. (Back-off timing comes from retry.ts; a failed range waits in the
// job's queue instead of holding a scheduler slot, so no retry loop runs here.)
import { HostedApiError } from '../../client/http.js';
import { LocalWriteError } from './batchedWriter.js';
import { RangeHttpError, RangeMismatchError } from './rangeFetch.js';
import { UnsafePathError } from './safePath.js';

/** One entry cannot be completed (wrong size or checksum, unusable path); the others go on. */
export class ItemError extends Error {}

export type Failure =
  | { kind: 'retry'; message: string }
  /** The whole download stops in `error`; resume tries again. */
  | { kind: 'fatal'; message: string }
  /** Only this entry fails. */
  | { kind: 'item'; message: string };

const NETWORK = new Set(['ECONNRESET', 'ECONNREFUSED', 'ECONNABORTED', 'EPIPE', 'ETIMEDOUT', 'EHOSTUNREACH', 'ENETUNREACH', 'ENETDOWN', 'EAI_AGAIN', 'SHORT_BODY']);

export function classify(err: unknown): Failure {
  const message = (err as Error)?.message ?? String(err);
  if (err instanceof ItemError || err instanceof UnsafePathError || err instanceof RangeMismatchError) return { kind: 'item', message };
  if (err instanceof LocalWriteError) return { kind: 'fatal', message };
  if (err instanceof RangeHttpError) {
    if (err.status === 408 || err.status === 429 || err.status >= 500) return { kind: 'retry', message };
    if (err.status === 403) return { kind: 'fatal', message: `${message}: the download URL was refused even when fresh` };
    return { kind: 'fatal', message };
  }
  if (err instanceof HostedApiError) {
    if (err.status === 408 || err.status === 429 || err.status >= 500) return { kind: 'retry', message: `the service answered ${err.status}: ${message}` };
    if (err.status === 404) return { kind: 'fatal', message: `the Link or the file is gone: ${message}` };
    if (err.status === 410) return { kind: 'fatal', message: `the Package has expired: ${message}` };
    if (err.status === 401) return { kind: 'fatal', message: `the Link refused its password: ${message}` };
    return { kind: 'fatal', message: `the service answered ${err.status}: ${message}` };
  }
  const code = (err as NodeJS.ErrnoException)?.code ?? '';
  if (code.startsWith('UND_ERR') || NETWORK.has(code)) return { kind: 'retry', message };
  // File-system errors carry the path they failed on: a full or read-only disk does not heal by retrying.
  if ((err as NodeJS.ErrnoException)?.path !== undefined) return { kind: 'fatal', message };
  return { kind: 'retry', message };
}
