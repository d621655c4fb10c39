// What a failed range means: try it again later, give up on one file, or stop
// the download. (Back-off timing comes from retry.ts; a failed range waits in the
// job's queue instead of holding a scheduler slot, so no retry loop runs here.)
import { HostedApiError } from '../../client/http.js';
import { LocalWriteError } from './batchedWriter.js';
import { RangeHttpError, RangeMismatchError } from './rangeFetch.js';
import { UnsafePathError } from './safePath.js';
import { failureKind, type RetryCause } from './retry.js';

/** One entry cannot be completed (wrong size or checksum, unusable path); the others go on. */
export class ItemError extends Error {}

export type Failure =
  /** `cause`: as for upload parts (partUpload.ts); `retryAfter`: the answer's header. */
  | { kind: 'retry'; message: string; cause: RetryCause; retryAfter?: string }
  /** The whole download stops in `error`; resume tries again. */
  | { kind: 'fatal'; message: string }
  /** Only this entry fails. */
  | { kind: 'item'; message: string }
  /** The service withholds this entry (flagged by its malware scan, or not scannable): it is skipped. */
  | { kind: 'withheld'; message: string };

/** The service's codes for a file it will not hand out because of its malware scan. */
const WITHHELD: Record<string, string> = {
  virus_detected: 'skipped: flagged with malware',
  scan_failed: 'skipped: could not be scanned for malware',
};

/** A failure retry.ts knows as an outage or a transient one, with the answer's Retry-After. */
function retry(err: unknown, message: string): Failure {
  const kind = failureKind(err);
  return { kind: 'retry', message, cause: kind === 'permanent' ? 'suspect' : kind, retryAfter: (err as { retryAfter?: string }).retryAfter };
}

/** What the user can do about a disk that refused a write: no retry would. */
function whatToDo(err: LocalWriteError): string {
  const code = (err.cause as NodeJS.ErrnoException | undefined)?.code;
  if (code === 'ENOSPC' || code === 'EDQUOT') return 'free some space on that disk (or choose another folder), then resume';
  if (code === 'EROFS' || code === 'EACCES' || code === 'EPERM') return 'make the folder writable (or choose another folder), then resume';
  return 'check the disk, then resume';
}

export function classify(err: unknown): Failure {
  const message = (err as Error)?.message ?? String(err);
  if (err instanceof ItemError || err instanceof UnsafePathError || err instanceof RangeMismatchError) return { kind: 'item', message };
  if (err instanceof LocalWriteError) return { kind: 'fatal', message: `${message}; ${whatToDo(err)}` };
  if (err instanceof RangeHttpError) {
    if (err.status === 408 || err.status === 429 || err.status >= 500) return retry(err, message);
    if (err.status === 403) return { kind: 'fatal', message: `${message}: the download URL was refused even when fresh` };
    return { kind: 'fatal', message };
  }
  if (err instanceof HostedApiError) {
    if (err.status === 403 && WITHHELD[err.code]) return { kind: 'withheld', message: WITHHELD[err.code]! };
    if (err.status === 408 || err.status === 429 || err.status >= 500) return retry(err, `the service answered ${err.status}: ${message}`);
    if (err.status === 404) return { kind: 'fatal', message: `the Link or the file is gone: ${message}` };
    if (err.status === 410) return { kind: 'fatal', message: `the Package has expired: ${message}` };
    if (err.status === 401) return { kind: 'fatal', message: `the Link refused its password: ${message}` };
    return { kind: 'fatal', message: `the service answered ${err.status}: ${message}` };
  }
  // File-system errors carry the path they failed on: a full or read-only disk does not heal by retrying.
  if ((err as NodeJS.ErrnoException)?.path !== undefined) return { kind: 'fatal', message };
  // The network (a code retry.ts knows), or something unforeseen: a few tries tell which.
  return retry(err, message);
}
