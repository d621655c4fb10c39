// Sending one part and judging the store's answer: stored (ETag checked against
// the MD5 of what went out), worth a retry, an expired URL, or an upload that
// no longer exists on the store.
import fs from 'node:fs/promises';
import type { Blueprint } from '../../api/hosted/blueprint.js';
import type { ObjectHttp } from './objectHttp.js';
import { isAbort, isTransientStatus, PermanentError } from './retry.js';

export type PartOutcome =
  | { kind: 'stored'; etag: string }
  | { kind: 'retry'; reason: string }
  | { kind: 'expired' }
  | { kind: 'upload_gone' }
  | { kind: 'aborted' }
  | { kind: 'fatal'; error: Error };

/** The local file is no longer what was walked: the parts sent so far may not match it. */
export class FileChangedError extends PermanentError {}

export async function checkUnchanged(file: { local_path: string; size: number; mtime_ms: number }): Promise<void> {
  const st = await fs.stat(file.local_path);
  if (st.size !== file.size || st.mtimeMs !== file.mtime_ms) {
    throw new FileChangedError(`${file.local_path} changed while it was being uploaded`);
  }
}

/** An ETag that is an MD5 (32 hex digits) must be the MD5 we sent; stores that use other ETags are taken at their word. */
const etagMatches = (etag: string, md5: string) => !/^[0-9a-f]{32}$/i.test(etag) || etag.toLowerCase() === md5;

export async function sendPart(
  objects: ObjectHttp,
  bp: Blueprint,
  file: { local_path: string; size: number; mtime_ms: number },
  range: { start: number; length: number },
  signal: AbortSignal,
): Promise<PartOutcome> {
  try {
    await checkUnchanged(file);
    const a = await objects.putFileRange(bp, file.local_path, range.start, range.length, signal);
    if (signal.aborted) return { kind: 'aborted' };
    if (a.status === 200) {
      if (!a.etag) return { kind: 'retry', reason: 'the store answered without an ETag' };
      if (!etagMatches(a.etag, a.md5)) return { kind: 'retry', reason: `ETag ${a.etag} is not the MD5 of the part (${a.md5})` };
      return { kind: 'stored', etag: a.etag };
    }
    if (a.status === 403) return { kind: 'expired' };
    if (a.status === 404 && /NoSuchUpload/.test(a.text)) return { kind: 'upload_gone' };
    if (isTransientStatus(a.status)) return { kind: 'retry', reason: `the store answered ${a.status}` };
    // Another 4xx: the request was refused as sent; a few tries with a fresh read, then the upload stops.
    return { kind: 'retry', reason: `the store refused the part (${a.status}): ${a.text.slice(0, 200)}` };
  } catch (err) {
    if (signal.aborted || isAbort(err)) return { kind: 'aborted' };
    if (err instanceof FileChangedError) return { kind: 'fatal', error: err };
    return { kind: 'retry', reason: (err as Error).message || String(err) };
  }
}
