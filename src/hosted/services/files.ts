// The files of a Package while it is being uploaded: registration (one entry,
// or several in one request: fileBatches.ts) and part blueprints. The per-file
// finalize that completes the multipart upload is in fileFinalize.ts.
import type { HostedContext } from '../context.js';
import { compiledOnce } from '../db/compiled.js';
import { lockRow } from '../db/dialect.js';
import type { FilesTable, PackagesTable } from '../db/schema.js';
import { SINGLE_PUT, type FileObject, type RegisterFileAnswer, type RegisterFileBody, type RegisterFileQuery } from '../../api/hosted/files.js';
import type { Blueprint } from '../../api/hosted/blueprint.js';
import { badRequest, conflict, notFound } from '../errors.js';
import { newOrderedId, nowIso } from '../ids.js';
import { CHUNK_LIMITS, effectiveChunkSize, partCount, partLength } from './chunks.js';
import { joinRel, nameProblem, normalizePath, pathProblem } from './relpath.js';
import { checkPortalFile } from './portalPackages.js';
import { isMissingUpload } from '../storage/failure.js';
import type { Db } from '../db/open.js';
import { filePayload, raiseEvent } from './events.js';

export type Pkg = Pick<PackagesTable, 'id' | 'team_id' | 'state' | 'chunk_size' | 'portal_id'>;

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
  ...(f.scan_state ? { scan_state: f.scan_state } : {}),
});

const fileById = compiledOnce((db: Db, fileId: string, packageId: string) => db.selectFrom('files').selectAll().where('id', '=', fileId).where('package_id', '=', packageId));
const filesAt = compiledOnce((db: Db, packageId: string, path: string, name: string) =>
  db.selectFrom('files').selectAll().where('package_id', '=', packageId).where('path', '=', path).where('name', '=', name));

export async function getFile(ctx: HostedContext, packageId: string, fileId: string): Promise<FilesTable> {
  const [f] = await fileById(ctx.db, fileId, packageId);
  if (!f) throw notFound('file');
  return f;
}

/** A registration checked, signed and (with `count` or `single`) its upload started: its row is next. */
export interface Prepared {
  body: RegisterFileBody;
  row: FilesTable;
  createBlueprint: Blueprint | null;
  /** The upload the service started (SINGLE_PUT for one PutObject), and the part blueprints asked for. */
  started?: { id: string; count: number };
}

/** A file that can go up in one PutObject: its size is known, and one part may hold it. */
const fitsOnePut = (size: number | null | undefined): boolean => !!size && size <= CHUNK_LIMITS.max_chunk_size;

/** The spec's limits table at registration: a chunk size within the store's bounds, a size that fits in max_chunk_count of the largest. */
function checkChunkLimits(body: RegisterFileBody): void {
  const { min_chunk_size: min, max_chunk_size: max, max_chunk_count: count } = CHUNK_LIMITS;
  if (body.chunk_size && (body.chunk_size < min || body.chunk_size > max)) {
    throw badRequest(`chunk_size must be 0 or between ${min} and ${max}`);
  }
  if (body.size !== undefined && body.size > count * max) {
    throw badRequest(`a file may hold at most ${count} chunks of ${max} bytes (${count * max} bytes)`, 'file_too_large');
  }
}

export async function prepare(ctx: HostedContext, pkg: Pkg, body: RegisterFileBody, { count, single }: RegisterFileQuery = {}): Promise<Prepared> {
  requireNew(pkg);
  const problem = nameProblem(body.name) ?? pathProblem(body.path);
  if (problem) throw badRequest(problem, 'invalid_path');
  if (body.kind === 'file') checkChunkLimits(body);
  const path = normalizePath(body.path);
  const now = nowIso();
  const id = newOrderedId('file');
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
  let started: Prepared['started'];
  if (row.object_key && single && fitsOnePut(row.size)) started = { count: 1, id: SINGLE_PUT };
  // No more part blueprints than the registered size has parts.
  else if (row.object_key && count) started = { count: row.size === null ? count : Math.min(count, partCount(row.size, row.chunk_size)), id: await ctx.storage.createUpload(row.object_key) };
  row.upload_id = started?.id ?? null;
  return { body, row, createBlueprint, started };
}

/**
 * Inserts the entry's row; answers the pending entries at the same place, which
 * gave way to it (their uploads are to be aborted). A second entry at the same
 * place would clash in every download; a pending one is a client's earlier
 * attempt that it restarts.
 */
export async function insert(ctx: Pick<HostedContext, 'events'>, trx: Db, pkg: Pkg, { body, row }: Prepared): Promise<FilesTable[]> {
  // Registrations to one Package take turns from here to commit (PostgreSQL; SQLite has one writer at a time).
  await lockRow(trx, 'packages', pkg.id);
  const same = await filesAt(trx, pkg.id, row.path, row.name);
  if (same.some((f) => f.state === 'finalized')) throw conflict(`"${joinRel(row.path, row.name)}" is already in the package`, 'duplicate_path');
  if (same.length > 0) await trx.deleteFrom('files').where('id', 'in', same.map((f) => f.id)).execute();
  // Portal limits (413) are checked here, so concurrent registrations cannot overrun them together.
  await checkPortalFile(trx, pkg, body);
  await trx.insertInto('files').values(row).execute();
  await raiseEvent(ctx, trx, 'file.registered', pkg, filePayload(row), row.created_at);
  return same;
}

export async function answer(ctx: HostedContext, { row, createBlueprint, started }: Prepared, replaced: FilesTable[]): Promise<RegisterFileAnswer> {
  for (const old of replaced) await abortQuietly(ctx, old);
  const answer: RegisterFileAnswer = { create_blueprint: createBlueprint, file: { ...fileObject(row), chunk_size: row.chunk_size }, ...CHUNK_LIMITS };
  if (!started) return answer;
  return { ...answer, upload_id: started.id, upload_blueprints: await blueprintsOf(ctx, row as Uploadable, started.id, 1, started.count) };
}

type Uploadable = Pick<FilesTable, 'size' | 'chunk_size'> & { object_key: string };

/**
 * Blueprints of parts first..first+count-1 of the upload; a SINGLE_PUT has one, its
 * PutObject. A file registered with a size gets blueprints bound to it: part n signs
 * its length (chunk_size, the last part the remainder), a PutObject the whole size,
 * so the store refuses any other body (what a Portal's limits were checked against).
 */
async function blueprintsOf(ctx: HostedContext, f: Uploadable, uploadId: string, first: number, count: number): Promise<Blueprint[]> {
  const size = f.size;
  if (uploadId === SINGLE_PUT) return [await ctx.storage.putBlueprint(f.object_key, size ?? undefined)];
  return ctx.storage.partBlueprints(f.object_key, uploadId, first, count, size === null ? undefined : (n) => partLength(size, f.chunk_size, n));
}

/**
 * Registers an entry. With `count` (a file only) the service also starts its
 * multipart upload and signs the first `count` part blueprints: the client skips
 * the create request and its first blueprint request. With `single`, a file that
 * fits one part gets a PutObject blueprint instead, and no multipart upload at all.
 */
export async function registerFile(ctx: HostedContext, pkg: Pkg, body: RegisterFileBody, q: RegisterFileQuery = {}): Promise<RegisterFileAnswer> {
  const p = await prepare(ctx, pkg, body, q);
  const replaced = await ctx.db
    .transaction()
    .execute((trx) => insert(ctx, trx, pkg, p))
    .catch(async (err: unknown) => {
      await abortQuietly(ctx, p.row);
      throw err;
    });
  return answer(ctx, p, replaced);
}

/** Drops what a pending file's upload left in storage: its multipart upload, or the object a SINGLE_PUT may have put. */
export async function abortQuietly(ctx: HostedContext, f: Pick<FilesTable, 'object_key' | 'upload_id'>): Promise<void> {
  if (!f.object_key || !f.upload_id) return;
  const done = f.upload_id === SINGLE_PUT ? ctx.storage.remove(f.object_key) : ctx.storage.abortUpload(f.object_key, f.upload_id);
  await done.catch((err) => {
    if (!isMissingUpload(err)) ctx.log.warn({ err, key: f.object_key }, 'abort of an unfinished upload failed');
  });
}

/** The file, if it still takes parts: 409 for a directory or a finalized file. */
export function pending(f: FilesTable): FilesTable & { object_key: string } {
  if (f.kind !== 'file' || !f.object_key) throw conflict('a directory has no content to upload', 'not_a_file');
  if (f.state !== 'pending') throw conflict('file is already finalized', 'file_finalized');
  return f as FilesTable & { object_key: string };
}

/**
 * Makes `uploadId` the file's upload after checking that it is an open multipart
 * upload of the file's key, or SINGLE_PUT. A client that restarts may begin a new
 * upload: the old one is aborted.
 */
export async function adoptUpload(ctx: HostedContext, f: FilesTable & { object_key: string }, uploadId: string): Promise<void> {
  if (f.upload_id === uploadId) return;
  if (uploadId !== SINGLE_PUT && !(await ctx.storage.uploadExists(f.object_key, uploadId))) {
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
  if (uploadId === SINGLE_PUT && start !== 0) throw badRequest('a file put in one request has only part 1', 'too_many_chunks');
  requireNew(pkg);
  const f = pending(await getFile(ctx, pkg.id, fileId));
  if (f.size !== null && uploadId !== SINGLE_PUT) {
    const parts = partCount(f.size, f.chunk_size);
    if (start + count > parts) {
      throw badRequest(`the file was registered at ${f.size} bytes: ${parts} part(s) of ${f.chunk_size} bytes, so start + count must not exceed ${parts}`, 'too_many_chunks');
    }
  }
  await adoptUpload(ctx, f, uploadId);
  await touch(ctx, f);
  return blueprintsOf(ctx, f, uploadId, start + 1, count);
}

/**
 * A file whose blueprints are asked for is being uploaded: its updated_at tells the
 * sweep of unfinished Packages (expiry.ts) so. Written at most every tenth of that
 * sweep's time (an hour at most), not on every request of a busy upload.
 */
async function touch(ctx: HostedContext, f: FilesTable): Promise<void> {
  const every = Math.min(3600_000, ctx.config.unfinishedPackageTtlMs / 10);
  if (every <= 0 || Date.now() - Date.parse(f.updated_at) < every) return;
  await ctx.db.updateTable('files').set({ updated_at: nowIso() }).where('id', '=', f.id).where('state', '=', 'pending').execute();
}
