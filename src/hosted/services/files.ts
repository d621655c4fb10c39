// The files of a Package while it is being uploaded: registration, part
// blueprints and the per-file finalize that completes the multipart upload,
// one at a time or several in one request (Ferry's batch routes).
import type { HostedContext } from '../context.js';
import type { FilesTable, PackagesTable } from '../db/schema.js';
import type {
  ChunkExtra,
  FileObject,
  FileOutcome,
  FinalizeFileBody,
  FinalizeFilesBody,
  RegisterFileAnswer,
  RegisterFileBody,
  RegisterFilesBody,
  RegisterOutcome,
} from '../../api/hosted/files.js';
import type { Blueprint } from '../../api/hosted/blueprint.js';
import { badRequest, conflict, HttpError, notFound } from '../errors.js';
import { newId, nowIso } from '../ids.js';
import { CHUNK_LIMITS, effectiveChunkSize } from './chunks.js';
import { joinRel, nameProblem, normalizePath, pathProblem } from './relpath.js';
import { checkPortalFile, checkPortalFinalSize } from './portalPackages.js';
import { isMissingUpload, storageFailure } from '../storage/failure.js';
import type { StoredPart } from '../storage/s3.js';
import type { Db } from '../db/open.js';
import { sql } from 'kysely';

type Pkg = Pick<PackagesTable, 'id' | 'state' | 'chunk_size' | 'portal_id'>;

/** File writes end with the Package's finalization. */
export function requireNew(pkg: Pick<PackagesTable, 'state'>): void {
  if (pkg.state !== 'new') throw conflict(`package is ${pkg.state}; files can only change while it is new`, 'package_not_new');
}

export const fileObject = (f: FilesTable): FileObject => ({
  id: f.id,
  kind: f.kind,
  name: f.name,
  path: f.path,
  last_modified: f.last_modified,
  size: f.size ?? 0,
  virus_detected: f.virus_detected === 1,
});

export async function getFile(ctx: HostedContext, packageId: string, fileId: string): Promise<FilesTable> {
  const f = await ctx.db.selectFrom('files').selectAll().where('id', '=', fileId).where('package_id', '=', packageId).executeTakeFirst();
  if (!f) throw notFound('file');
  return f;
}

/** A registration checked, signed and (with `count`) its upload started: its row is next. */
interface Prepared {
  body: RegisterFileBody;
  row: FilesTable;
  createBlueprint: Blueprint | null;
  /** The upload the service started, and the part blueprints asked for. */
  started?: { key: string; id: string; count: number };
}

async function prepare(ctx: HostedContext, pkg: Pkg, body: RegisterFileBody, count?: number): Promise<Prepared> {
  requireNew(pkg);
  const problem = nameProblem(body.name) ?? pathProblem(body.path);
  if (problem) throw badRequest(problem, 'invalid_path');
  const path = normalizePath(body.path);
  const now = nowIso();
  const id = newId('file');
  const isFile = body.kind === 'file';
  const row: FilesTable = {
    id,
    package_id: pkg.id,
    kind: body.kind,
    name: body.name,
    path,
    last_modified: new Date(body.last_modified).toISOString(),
    size: isFile ? (body.size ?? null) : 0,
    chunk_size: isFile ? effectiveChunkSize(body.chunk_size ?? pkg.chunk_size, body.size) : 0,
    object_key: isFile ? `packages/${pkg.id}/${id}` : null,
    upload_id: null,
    state: isFile ? 'pending' : 'finalized',
    virus_detected: 0,
    created_at: now,
    updated_at: now,
  };
  // Signing is local work; a blueprint left unused when the insert fails costs nothing.
  const createBlueprint = row.object_key ? await ctx.storage.createUploadBlueprint(row.object_key) : null;
  // Kept in the answer even when the upload is started here: a client that runs it
  // anyway gets a second upload, which the file adopts (the first is aborted).
  const started = row.object_key && count ? { key: row.object_key, count, id: await ctx.storage.createUpload(row.object_key) } : undefined;
  row.upload_id = started?.id ?? null;
  return { body, row, createBlueprint, started };
}

/**
 * Inserts the entry's row; answers the pending entries at the same place, which
 * gave way to it (their uploads are to be aborted). A second entry at the same
 * place would clash in every download; a pending one is a client's earlier
 * attempt that it restarts.
 */
async function insert(trx: Db, pkg: Pkg, { body, row }: Prepared): Promise<FilesTable[]> {
  const same = await trx
    .selectFrom('files')
    .selectAll()
    .where('package_id', '=', pkg.id)
    .where('path', '=', row.path)
    .where('name', '=', row.name)
    .execute();
  if (same.some((f) => f.state === 'finalized')) throw conflict(`"${joinRel(row.path, row.name)}" is already in the package`, 'duplicate_path');
  if (same.length > 0) await trx.deleteFrom('files').where('id', 'in', same.map((f) => f.id)).execute();
  // Portal limits (413) are checked here, so concurrent registrations cannot overrun them together.
  await checkPortalFile(trx, pkg, body);
  await trx.insertInto('files').values(row).execute();
  return same;
}

async function answer(ctx: HostedContext, { row, createBlueprint, started }: Prepared, replaced: FilesTable[]): Promise<RegisterFileAnswer> {
  for (const old of replaced) await abortQuietly(ctx, old);
  const answer: RegisterFileAnswer = { create_blueprint: createBlueprint, file: { ...fileObject(row), chunk_size: row.chunk_size }, ...CHUNK_LIMITS };
  if (!started) return answer;
  return { ...answer, upload_id: started.id, upload_blueprints: await ctx.storage.partBlueprints(started.key, started.id, 1, started.count) };
}

/**
 * Registers an entry. With `count` (a file only) the service also starts its
 * multipart upload and signs the first `count` part blueprints: the client skips
 * the create request and its first blueprint request.
 */
export async function registerFile(ctx: HostedContext, pkg: Pkg, body: RegisterFileBody, count?: number): Promise<RegisterFileAnswer> {
  const p = await prepare(ctx, pkg, body, count);
  const replaced = await ctx.db
    .transaction()
    .execute((trx) => insert(trx, pkg, p))
    .catch(async (err: unknown) => {
      await abortQuietly(ctx, p.row);
      throw err;
    });
  return answer(ctx, p, replaced);
}

export async function abortQuietly(ctx: HostedContext, f: Pick<FilesTable, 'object_key' | 'upload_id'>): Promise<void> {
  if (!f.object_key || !f.upload_id) return;
  await ctx.storage.abortUpload(f.object_key, f.upload_id).catch((err) => {
    if (!isMissingUpload(err)) ctx.log.warn({ err, key: f.object_key }, 'abort of multipart upload failed');
  });
}

/** The file, if it still takes parts: 409 for a directory or a finalized file. */
function pending(f: FilesTable): FilesTable & { object_key: string } {
  if (f.kind !== 'file' || !f.object_key) throw conflict('a directory has no content to upload', 'not_a_file');
  if (f.state !== 'pending') throw conflict('file is already finalized', 'file_finalized');
  return f as FilesTable & { object_key: string };
}

/**
 * Makes `uploadId` the file's multipart upload after checking it exists for the
 * file's key. A client that restarts may begin a new upload: the old one is aborted.
 */
async function adoptUpload(ctx: HostedContext, f: FilesTable & { object_key: string }, uploadId: string): Promise<void> {
  if (f.upload_id === uploadId) return;
  if (!(await ctx.storage.uploadExists(f.object_key, uploadId))) {
    throw badRequest('upload_id names no open upload of this file', 'unknown_upload');
  }
  const r = await ctx.db
    .updateTable('files')
    .set({ upload_id: uploadId, updated_at: nowIso() })
    .where('id', '=', f.id)
    .where('state', '=', 'pending')
    .executeTakeFirst();
  if (r.numUpdatedRows === 0n) throw conflict('file is no longer pending', 'file_finalized');
  if (f.upload_id) await abortQuietly(ctx, f);
}

export async function partBlueprints(
  ctx: HostedContext,
  pkg: Pkg,
  fileId: string,
  start: number,
  count: number,
  uploadId: string,
): Promise<Blueprint[]> {
  if (start + count > CHUNK_LIMITS.max_chunk_count) {
    throw badRequest(`start + count must not exceed max_chunk_count (${CHUNK_LIMITS.max_chunk_count})`, 'too_many_chunks');
  }
  requireNew(pkg);
  const f = pending(await getFile(ctx, pkg.id, fileId));
  await adoptUpload(ctx, f, uploadId);
  return ctx.storage.partBlueprints(f.object_key, uploadId, start + 1, count);
}

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

/** A refusal of the store that is the client's to fix (409), or the failure as it came. */
function refused(err: unknown): unknown {
  const { code, status } = storageFailure(err);
  if (isMissingUpload(err) || !status || status >= 500) return err;
  return conflict(`storage refused to complete the upload: ${code ?? (err as Error).name}`, 'upload_rejected');
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
  checkStored(await storage.listParts(key, uploadId), parts, size);
  try {
    await storage.completeUpload(key, uploadId, parts);
  } catch (err) {
    throw refused(err);
  }
}

/**
 * A file's finalize up to its row: completes the upload only when the named parts
 * are stored and add up to `size`, otherwise answers 409 and leaves the upload
 * open, so the client can fix it. Resolves the file to mark finalized, or
 * undefined when it already is.
 */
async function completeFile(ctx: HostedContext, pkg: Pkg, fileId: string, body: FinalizeFileBody): Promise<FilesTable | undefined> {
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
  await checkPortalFinalSize(ctx.db, pkg, f.id, body.size);
  await adoptUpload(ctx, f, uploadId);
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

/** Marks a completed file finalized; false when it is no longer pending. */
async function markFinalized(db: Db, f: FilesTable, body: FinalizeFileBody): Promise<boolean> {
  const r = await db
    .updateTable('files')
    .set({ state: 'finalized', size: body.size, chunk_size: body.chunk_size ?? f.chunk_size, upload_id: null, updated_at: nowIso() })
    .where('id', '=', f.id)
    .where('state', '=', 'pending')
    .executeTakeFirst();
  return r.numUpdatedRows > 0n;
}

/** The Package was finalized meanwhile and dropped the file: its object must not linger. */
async function dropped(ctx: HostedContext, f: FilesTable): Promise<never> {
  await ctx.storage.remove(f.object_key!).catch(() => undefined);
  throw conflict('the file was dropped while it was being finalized', 'package_not_new');
}

export async function finalizeFile(ctx: HostedContext, pkg: Pkg, fileId: string, body: FinalizeFileBody): Promise<void> {
  const f = await completeFile(ctx, pkg, fileId, body);
  if (f && !(await markFinalized(ctx.db, f, body))) await dropped(ctx, f);
}

type Refusal = { status: number; code: string; message: string };

/**
 * One entry of a batch: what `run` answers, or its refusal as the error handler
 * would have sent it (unexpected failures are logged and answered as 500).
 */
async function orRefusal<T>(ctx: HostedContext, what: string, run: () => Promise<T>): Promise<T | Refusal> {
  try {
    return await run();
  } catch (err) {
    if (err instanceof HttpError) return { status: err.status, code: err.code, message: err.message };
    ctx.log.error({ err, what }, 'unexpected error in a batch');
    return { status: 500, code: 'internal', message: 'internal error' };
  }
}

const isRefusal = (x: unknown): x is Refusal => typeof x === 'object' && x !== null && 'code' in x && 'status' in x;

/** `run` in a savepoint of `trx`: when it throws, only its own writes are undone. */
async function inSavepoint<T>(trx: Db, run: () => Promise<T>): Promise<T> {
  await sql`savepoint entry`.execute(trx);
  try {
    const out = await run();
    await sql`release entry`.execute(trx);
    return out;
  } catch (err) {
    await sql`rollback to entry`.execute(trx);
    await sql`release entry`.execute(trx);
    throw err;
  }
}

/**
 * Registers each entry as registerFile does; one entry's refusal is its outcome
 * and does not stop the others. The entries are checked and signed side by side,
 * and their rows go in as one transaction with a savepoint each: one commit
 * instead of one per entry (docs/benchmarks.md).
 */
export async function registerFiles(ctx: HostedContext, pkg: Pkg, files: RegisterFilesBody['files']): Promise<RegisterOutcome[]> {
  const prepared = await Promise.all(files.map(({ count, ...body }) => orRefusal(ctx, body.name, () => prepare(ctx, pkg, body, count))));
  const inserted = await ctx.db
    .transaction()
    .execute(async (trx) => {
      const out: (FilesTable[] | Refusal)[] = [];
      for (const p of prepared) out.push(isRefusal(p) ? p : await orRefusal(ctx, p.body.name, () => inSavepoint(trx, () => insert(trx, pkg, p))));
      return out;
    })
    .catch(async (err: unknown) => {
      for (const p of prepared) if (!isRefusal(p)) await abortQuietly(ctx, p.row);
      throw err;
    });
  return Promise.all(
    prepared.map(async (p, i): Promise<RegisterOutcome> => {
      if (isRefusal(p)) return p;
      const replaced = inserted[i]!;
      if (!isRefusal(replaced)) return orRefusal(ctx, p.body.name, async () => ({ status: 201, registration: await answer(ctx, p, replaced) }));
      await abortQuietly(ctx, p.row);
      return replaced;
    }),
  );
}

/**
 * Finalizes each file as finalizeFile does; one file's refusal is its outcome and
 * does not stop the others. The uploads are completed side by side, and the rows
 * marked in one transaction.
 */
export async function finalizeFiles(ctx: HostedContext, pkg: Pkg, files: FinalizeFilesBody['files']): Promise<FileOutcome[]> {
  const completed = await Promise.all(files.map((f) => orRefusal(ctx, f.file_id, () => completeFile(ctx, pkg, f.file_id, f))));
  const marked = await ctx.db.transaction().execute(async (trx) => {
    const out: boolean[] = [];
    for (const [i, f] of completed.entries()) out.push(f !== undefined && !isRefusal(f) ? await markFinalized(trx, f, files[i]!) : true);
    return out;
  });
  return Promise.all(
    files.map(async ({ file_id }, i) => {
      const f = completed[i];
      if (isRefusal(f)) return { file_id, ...f };
      return { file_id, ...(await orRefusal(ctx, file_id, async () => (f && !marked[i] ? dropped(ctx, f) : { status: 204 }))) };
    }),
  );
}

/** The finalized entries of a Package, folders first within a folder, then by name. */
export async function finalizedFiles(ctx: HostedContext, packageId: string): Promise<FilesTable[]> {
  return ctx.db
    .selectFrom('files')
    .selectAll()
    .where('package_id', '=', packageId)
    .where('state', '=', 'finalized')
    .orderBy('path')
    .orderBy('kind')
    .orderBy('name')
    .execute();
}
