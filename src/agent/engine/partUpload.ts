// Sending one part and judging the store's answer: stored (ETag checked against
// the MD5 of what went out), worth a retry, an expired URL, or an upload that
// no longer exists on the store.
import fs from 'node:fs/promises';
import path from 'node:path';
import type { Blueprint } from '../../api/hosted/blueprint.js';
import type { ObjectHttp, PutAnswer } from './objectHttp.js';
import { WHOLE_READ_MAX } from './wholeReads.js';
import { failureKind, isAbort, PermanentError, type RetryCause } from './retry.js';

export type PartOutcome =
  /** `whole`: the part was the whole file, read in one go and checked against the walk around the read. */
  | { kind: 'stored'; etag: string; whole: boolean }
  | { kind: 'retry'; reason: string; cause: RetryCause; retryAfter?: string }
  | { kind: 'expired' }
  | { kind: 'upload_gone' }
  | { kind: 'aborted' }
  /** A growing file no longer holds the part (it shrank or was replaced): its growth watch starts it over. */
  | { kind: 'stale' }
  | { kind: 'fatal'; error: Error };

/** The local file is no longer what was walked: the parts sent so far may not match it. */
export class FileChangedError extends PermanentError {}

type LocalFile = { local_path: string; size: number; mtime_ms: number };
export type Growing = { ino: number | undefined };

const changed = (file: LocalFile) => new FileChangedError(`${file.local_path} changed while it was being uploaded`);

/** The file (or a folder on its way) is gone: no retry brings it back, and the store is not at fault. */
const gone = (file: LocalFile) =>
  new FileChangedError(`${path.basename(file.local_path)} was moved or deleted while it was being sent (it was at ${file.local_path})`);
const isGone = (err: unknown) => ['ENOENT', 'ENOTDIR'].includes((err as NodeJS.ErrnoException)?.code ?? '');

export async function checkUnchanged(file: LocalFile): Promise<void> {
  const st = await fs.stat(file.local_path).catch((err: unknown) => {
    throw isGone(err) ? gone(file) : err;
  });
  if (st.size !== file.size || st.mtimeMs !== file.mtime_ms) throw changed(file);
}

/** A growing file holds the part's bytes and is still the same file (same inode). */
class StalePart extends Error {}
async function checkHolds(file: LocalFile, range: { start: number; length: number }, ino: number | undefined): Promise<void> {
  const st = await fs.stat(file.local_path).catch((err: unknown) => {
    throw isGone(err) ? gone(file) : err;
  });
  if (st.size < range.start + range.length || (ino !== undefined && st.ino !== ino)) throw new StalePart();
}

/** A small file goes in one read (wholeReads.ts); a part of a larger one is streamed. */
async function put(objects: ObjectHttp, bp: Blueprint, file: LocalFile, range: { start: number; length: number }, whole: boolean, signal: AbortSignal, growing?: Growing): Promise<PutAnswer> {
  if (growing) {
    await checkHolds(file, range, growing.ino);
    return objects.putFileRange(bp, file.local_path, range.start, range.length, signal);
  }
  if (whole) {
    const a = await objects.putWholeFile(bp, { path: file.local_path, size: file.size, mtimeMs: file.mtime_ms }, signal);
    if (!a) throw changed(file);
    return a;
  }
  await checkUnchanged(file);
  return objects.putFileRange(bp, file.local_path, range.start, range.length, signal);
}

/** An ETag that is an MD5 (32 hex digits) must be the MD5 we sent; stores that use other ETags are taken at their word. */
const etagMatches = (etag: string, md5: string) => !/^[0-9a-f]{32}$/i.test(etag) || etag.toLowerCase() === md5;

export async function sendPart(
  objects: ObjectHttp,
  bp: Blueprint,
  file: LocalFile,
  range: { start: number; length: number },
  signal: AbortSignal,
  /** The file is still being written: its size and time are not the walk's; its inode, once known, must hold. */
  growing?: Growing,
): Promise<PartOutcome> {
  const whole = !growing && range.start === 0 && range.length === file.size && file.size <= WHOLE_READ_MAX;
  try {
    const a = await put(objects, bp, file, range, whole, signal, growing);
    if (signal.aborted) return { kind: 'aborted' };
    if (a.status === 200) {
      if (!a.etag) return { kind: 'retry', reason: 'the store answered without an ETag', cause: 'suspect' };
      if (!etagMatches(a.etag, a.md5)) return { kind: 'retry', reason: `ETag ${a.etag} is not the MD5 of the part (${a.md5})`, cause: 'suspect' };
      return { kind: 'stored', etag: a.etag, whole };
    }
    if (a.status === 403) return { kind: 'expired' };
    if (a.status === 404 && /NoSuchUpload/.test(a.text)) return { kind: 'upload_gone' };
    const cause = failureKind({ status: a.status });
    const after = a.headers['retry-after'];
    if (cause !== 'permanent') return { kind: 'retry', reason: `the store answered ${a.status}`, cause, retryAfter: Array.isArray(after) ? after[0] : after };
    // Another 4xx: the request was refused as sent; a few tries with a fresh read, then the upload stops.
    return { kind: 'retry', reason: `the store refused the part (${a.status}): ${a.text.slice(0, 200)}`, cause: 'suspect' };
  } catch (err) {
    if (signal.aborted || isAbort(err)) return { kind: 'aborted' };
    if (err instanceof StalePart) return { kind: 'stale' };
    if (err instanceof FileChangedError) return { kind: 'fatal', error: err };
    // Gone between the check and the read (the open, or the reader thread's own stat).
    if (isGone(err)) return { kind: 'fatal', error: gone(file) };
    // A local read that failed (EIO) has a code too: the disk, not the store, is then at fault, and it is not an outage.
    const cause = (err as NodeJS.ErrnoException).path !== undefined ? 'suspect' : failureKind(err);
    return { kind: 'retry', reason: (err as Error).message || String(err), cause: cause === 'permanent' ? 'suspect' : cause };
  }
}
