// A file's finalize: the named parts are checked against storage and the
// multipart upload completed (or, for a file put in one request, the object
// checked), then the file is marked finalized. Batches of finalizes
// (fileBatches.ts) use the two steps apart.
import type { HostedContext } from '../context.js';
import type { FilesTable } from '../db/schema.js';
import type { Db } from '../db/open.js';
import { lockRow } from '../db/dialect.js';
import { SINGLE_PUT, type ChunkExtra, type FinalizeFileBody } from '../../api/hosted/files.js';
import { badRequest, conflict } from '../errors.js';
import { nowIso } from '../ids.js';
import { CHUNK_LIMITS } from './chunks.js';
import { checkPortalFinalSize } from './portalPackages.js';
import { isMissingUpload, storageFailure } from '../storage/failure.js';
import type { StoredPart } from '../storage/s3.js';
import { queueScan } from './malwareScan.js';
import { abortQuietly, adoptUpload, getFile, pending, requireNew, type Pkg } from './files.js';
import { filePayload, raiseEvent } from './events.js';

const unquote = (etag: string) => etag.trim().replace(/^"+|"+$/g, '');

/** The named parts as numbers, checked and sorted; 400 on anything malformed. */
function namedParts(extras: ChunkExtra[]): { partNumber: number; etag: string }[] {
  const seen = new Set<number>();
  const parts = extras.map((x, i) => {
    const raw = x.part_number ?? x.partNumber;
    const n = typeof raw === 'string' && /^\d{1,5}$/.test(raw.trim()) ? Number(raw.trim()) : raw;
    if (typeof n !== 'number' || !Number.isInteger(n) || n < 1 || n > CHUNK_LIMITS.max_chunk_count) {
      throw badRequest(`chunk_extras[${i}].part_number must be an integer from 1 to ${CHUNK_LIMITS.max_chunk_count}`, 'invalid_part');
    }
    if (seen.has(n)) throw badRequest(`part ${n} is named twice`, 'invalid_part');
    seen.add(n);
    return { partNumber: n, etag: unquote(x.etag) };
  });
  return parts.sort((a, b) => a.partNumber - b.partNumber);
}

/** 409 unless the named parts are stored with those ETags, all but the last of min_chunk_size, and sum to `size`. */
function checkStored(stored: StoredPart[], parts: { partNumber: number; etag: string }[], size: number): void {
  const byNumber = new Map(stored.map((p) => [p.partNumber, p]));
  let total = 0;
  parts.forEach((p, i) => {
    const s = byNumber.get(p.partNumber);
    if (!s) throw conflict(`part ${p.partNumber} is not stored`, 'part_missing');
    if (unquote(s.etag) !== p.etag) throw conflict(`part ${p.partNumber} has another ETag in storage`, 'etag_mismatch');
    if (i < parts.length - 1 && s.size < CHUNK_LIMITS.min_chunk_size) {
      throw conflict(`part ${p.partNumber} is smaller than min_chunk_size; only the last part may be`, 'part_too_small');
    }
    total += s.size;
  });
  if (total !== size) throw conflict(`the named parts hold ${total} bytes, not ${size}`, 'size_mismatch');
}

/**
 * A refusal of the store that is the client's to fix (409), or the failure as it came.
 * `unnamed`: parts the store holds that the finalize leaves out. S3 discards them, but
 * some stores (Ceph's RADOS Gateway) complete an upload only with every part it holds.
 */
function refused(err: unknown, unnamed: number[] = []): unknown {
  const { code, status } = storageFailure(err);
  if (isMissingUpload(err) || !status || status >= 500) return err;
  const why = `storage refused to complete the upload: ${code ?? (err as Error).name}`;
  if (code !== 'InvalidPart' || unnamed.length === 0) return conflict(why, 'upload_rejected');
  const list = unnamed.length > 5 ? `${unnamed.slice(0, 5).join(', ')}…` : unnamed.join(', ');
  return conflict(
    `${why}; it also holds part${unnamed.length > 1 ? 's' : ''} ${list}, which the finalize does not name, and this store completes an upload only with all its parts: name them, or upload the file again under a new upload`,
    'upload_rejected',
  );
}

/** Completes the upload if the named parts are stored, well-sized and sum to `size`; 409 otherwise. */
async function completeChecked(ctx: HostedContext, key: string, uploadId: string, parts: { partNumber: number; etag: string }[], size: number): Promise<void> {
  const { storage } = ctx;
  if (storage.completeSized) {
    // One pass when all is well; the listing is read only to say precisely what is wrong.
    try {
      return await storage.completeSized(key, uploadId, parts, size);
    } catch (err) {
      const why = refused(err);
      if (why === err) throw err;
      checkStored(await storage.listParts(key, uploadId), parts, size);
      throw why;
    }
  }
  const stored = await storage.listParts(key, uploadId);
  checkStored(stored, parts, size);
  try {
    await storage.completeUpload(key, uploadId, parts);
  } catch (err) {
    const named = new Set(parts.map((p) => p.partNumber));
    throw refused(err, stored.map((p) => p.partNumber).filter((n) => !named.has(n)));
  }
}

/**
 * A file's finalize up to its row: completes the upload only when the named parts
 * are stored and add up to `size`, otherwise answers 409 and leaves the upload
 * open, so the client can fix it. Resolves the file to mark finalized, or
 * undefined when it already is.
 */
export async function completeFile(ctx: HostedContext, pkg: Pkg, fileId: string, body: FinalizeFileBody): Promise<FilesTable | undefined> {
  requireNew(pkg);
  const parts = namedParts(body.chunk_extras);
  const current = await getFile(ctx, pkg.id, fileId);
  // A retry of a finalize that went through (its answer lost) is not an error.
  if (current.state === 'finalized' && current.kind === 'file' && current.size === body.size) return undefined;
  const f = pending(current);
  const uploadId = body.file_extras.upload_id;
  if (parts.length === 0) {
    if (body.size !== 0) throw conflict(`no parts named, but size is ${body.size}`, 'size_mismatch');
    // An empty file needs no multipart upload; whatever the client opened is closed.
    await abortQuietly(ctx, { object_key: f.object_key, upload_id: uploadId });
    if (f.upload_id && f.upload_id !== uploadId) await abortQuietly(ctx, f);
    await ctx.storage.putEmpty(f.object_key);
    return f;
  }
  const single = uploadId === SINGLE_PUT;
  if (single && (parts.length !== 1 || parts[0]!.partNumber !== 1)) throw badRequest('a file put in one request names part 1 only', 'invalid_part');
  // Its part URLs took no more than the registered size; a store that does not check signed headers is held to it here.
  if (f.size !== null && body.size > f.size) throw conflict(`the file was registered at ${f.size} bytes, not ${body.size}`, 'size_mismatch');
  await checkPortalFinalSize(ctx.db, pkg, f.id, body.size).catch(async (err: unknown) => {
    await dropStored(ctx, f, uploadId);
    throw err;
  });
  await adoptUpload(ctx, f, uploadId);
  if (single) {
    // Nothing to complete: the object is there or not.
    const stored = await ctx.storage.objectInfo(f.object_key);
    checkStored(stored ? [{ partNumber: 1, ...stored }] : [], parts, body.size);
    return f;
  }
  try {
    await completeChecked(ctx, f.object_key, uploadId, parts, body.size);
  } catch (err) {
    if (!isMissingUpload(err)) throw err;
    // A concurrent finalize of the same file completed the upload first.
    const again = await getFile(ctx, pkg.id, fileId);
    if (again.state === 'finalized' && again.size === body.size) return undefined;
    throw conflict('the upload is no longer open', 'unknown_upload');
  }
  return f;
}

/**
 * A file refused over a Portal limit keeps no bytes: its upload (and the one the
 * finalize named, if another) is aborted and its object removed. The entry stays
 * pending without an upload; the client registers it again to retry.
 */
async function dropStored(ctx: HostedContext, f: FilesTable & { object_key: string }, uploadId: string): Promise<void> {
  await abortQuietly(ctx, f);
  if (uploadId !== f.upload_id) await abortQuietly(ctx, { object_key: f.object_key, upload_id: uploadId });
  await ctx.storage.remove(f.object_key).catch(() => undefined);
  await ctx.db.updateTable('files').set({ upload_id: null, updated_at: nowIso() }).where('id', '=', f.id).where('state', '=', 'pending').execute();
}

/**
 * First in a transaction that marks files finalized, before any file row: file
 * finalizes take turns with the Package's registrations and its finalize, which
 * lock the Package first too (PostgreSQL), so that no two hold rows the other wants.
 */
export const holdPackage = (trx: Db, pkg: Pkg) => lockRow(trx, 'packages', pkg.id);

/**
 * Marks a completed file finalized, raises file.finalized, and queues its
 * malware scan when a scanner is configured (`db` should be a transaction begun
 * with holdPackage; wake the jobs worker after it commits). False when the file is no longer pending.
 */
export async function markFinalized(ctx: HostedContext, db: Db, pkg: Pkg, f: FilesTable, body: FinalizeFileBody): Promise<boolean> {
  const now = nowIso();
  const r = await db
    .updateTable('files')
    .set({ state: 'finalized', size: body.size, chunk_size: body.chunk_size ?? f.chunk_size, upload_id: null, updated_at: now })
    .where('id', '=', f.id)
    .where('state', '=', 'pending')
    .executeTakeFirst();
  if (r.numUpdatedRows === 0n) return false;
  await raiseEvent(ctx, db, 'file.finalized', pkg, filePayload({ ...f, size: body.size }), now);
  await queueScan(ctx, db, f.id);
  return true;
}

/**
 * A completed file that could not be marked finalized. A concurrent finalize of
 * the same size marked it first (the check of a SINGLE_PUT's object passes for
 * both): done. Otherwise the Package was finalized meanwhile and dropped the
 * file, and its object must not linger.
 */
export async function notMarked(ctx: HostedContext, f: FilesTable, body: FinalizeFileBody): Promise<void> {
  const now = await ctx.db.selectFrom('files').select(['state', 'size']).where('id', '=', f.id).executeTakeFirst();
  if (now?.state === 'finalized' && now.size === body.size) return;
  await ctx.storage.remove(f.object_key!).catch(() => undefined);
  throw conflict('the file was dropped while it was being finalized', 'package_not_new');
}

export async function finalizeFile(ctx: HostedContext, pkg: Pkg, fileId: string, body: FinalizeFileBody): Promise<void> {
  const f = await completeFile(ctx, pkg, fileId, body);
  if (!f) return;
  const marked = await ctx.db.transaction().execute(async (trx) => {
    await holdPackage(trx, pkg);
    return markFinalized(ctx, trx, pkg, f, body);
  });
  if (!marked) return notMarked(ctx, f, body);
  if (ctx.config.clamd) ctx.jobs.notify();
}
