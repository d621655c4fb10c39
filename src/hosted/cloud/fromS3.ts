// cloud_to_svc for S3-compatible buckets: the objects under the connection's
// source folders (or the keys and folders a manual transfer names) become the
// files of a new Package, then the Package is finalized. Each object goes in
// through the service's own upload flow, as a client's would: registered,
// its parts streamed from ranges of their bucket to our store's part
// blueprints, the file finalized; parts are recorded as they land, so a later
// attempt sends only what is missing.
import { GetObjectCommand, HeadObjectCommand, ListObjectsV2Command } from '@aws-sdk/client-s3';
import type { Readable } from 'node:stream';
import { request } from 'undici';
import type { HostedContext } from '../context.js';
import type { CloudConnectionsTable, CloudTransfersTable, PackagesTable } from '../db/schema.js';
import type { Blueprint } from '../../api/hosted/blueprint.js';
import { FinalJobError } from '../jobs/worker.js';
import { HttpError } from '../errors.js';
import { nameProblem, pathProblem } from '../services/relpath.js';
import { parseFolders } from '../services/cloudConnections.js';
import { getFile, partBlueprints, registerFile } from '../services/files.js';
import { finalizeFile } from '../services/fileFinalize.js';
import { finalizePackage } from '../services/finalize.js';
import { codeOf, statusOf, type S3Target } from './s3Target.js';
import { completeItem, itemsOf, partsOf, pool, recordPart, resetItemUpload, savePlan, startItemUpload, type Item, type PlannedItem } from './progress.js';
import { partLength } from '../services/chunks.js';

/** At most this many objects in one transfer (a Package of more is better split). */
export const MAX_IMPORT_OBJECTS = 10_000;

const under = (key: string, folder: string) => folder === '' || key.startsWith(`${folder}/`);
const lastSegment = (folder: string) => folder.slice(folder.lastIndexOf('/') + 1);

/**
 * Where an object lands in the Package: below the source folder that holds it,
 * kept by its last name ("in/shoot1/a/b.mov" from source "in/shoot1" is
 * "shoot1/a/b.mov"); the key itself when the connection has no source folders.
 */
export function importPath(key: string, sources: string[]): { path: string; name: string } {
  const source = sources.filter((s) => under(key, s)).sort((a, b) => b.length - a.length)[0];
  const rel = source ? `${lastSegment(source)}/${key.slice(source.length + 1)}` : key;
  const i = rel.lastIndexOf('/');
  return { path: i < 0 ? '' : rel.slice(0, i), name: rel.slice(i + 1) };
}

export interface Listed {
  key: string;
  size: number;
  lastModified: string;
}

async function listPrefix(target: S3Target, prefix: string, out: Map<string, Listed>, signal: AbortSignal): Promise<void> {
  let token: string | undefined;
  for (let page = 0; page <= MAX_IMPORT_OBJECTS / 1000 + 1; page++) {
    const r = await target.client.send(new ListObjectsV2Command({ Bucket: target.bucket, Prefix: prefix || undefined, ContinuationToken: token }), { abortSignal: signal });
    for (const o of r.Contents ?? []) {
      if (!o.Key) continue;
      out.set(o.Key, { key: o.Key, size: o.Size ?? 0, lastModified: (o.LastModified ?? new Date()).toISOString() });
    }
    if (out.size > MAX_IMPORT_OBJECTS) throw new FinalJobError(`more than ${MAX_IMPORT_OBJECTS} objects to bring in; name fewer (files) or narrower source folders`);
    if (!r.IsTruncated || !r.NextContinuationToken) return;
    token = r.NextContinuationToken;
  }
}

async function plan(ctx: HostedContext, transfer: CloudTransfersTable, conn: CloudConnectionsTable, target: S3Target, signal: AbortSignal): Promise<void> {
  const sources = parseFolders(conn.source_directory_ids);
  const refs: string[] = transfer.requested_files ? (JSON.parse(transfer.requested_files) as string[]) : sources.length ? sources.map((s) => (s ? `${s}/` : '')) : [''];
  const found = new Map<string, Listed>();
  for (const ref of refs) {
    if (ref === '' || ref.endsWith('/')) {
      await listPrefix(target, ref, found, signal);
      continue;
    }
    try {
      const h = await target.client.send(new HeadObjectCommand({ Bucket: target.bucket, Key: ref }), { abortSignal: signal });
      found.set(ref, { key: ref, size: h.ContentLength ?? 0, lastModified: (h.LastModified ?? new Date()).toISOString() });
    } catch (err) {
      if (statusOf(err) !== 404 && codeOf(err) !== 'NotFound') throw err;
      // A folder named without its trailing "/".
      const before = found.size;
      await listPrefix(target, `${ref}/`, found, signal);
      if (found.size === before) throw new FinalJobError(`the bucket ${target.bucket} has no object ${ref}`);
    }
  }
  await saveImportPlan(ctx, transfer.id, [...found.values()], sources);
}

/**
 * Saves the items of an import from what was found (bucket objects, or a
 * storage gateway's files): each at its place in the Package. Folder markers
 * ("x/"), names a Package cannot hold, and a second object at the same place
 * are left out (counted as filtered out).
 */
export async function saveImportPlan(ctx: HostedContext, transferId: string, found: Listed[], sources: string[]): Promise<void> {
  const taken = new Set<string>();
  const items: PlannedItem[] = [];
  let left = 0;
  for (const o of [...found].sort((a, b) => (a.key < b.key ? -1 : 1))) {
    const { path, name } = importPath(o.key, sources);
    const rel = path ? `${path}/${name}` : name;
    if (o.key.endsWith('/') || nameProblem(name) || pathProblem(path) || taken.has(rel)) {
      left++;
      continue;
    }
    taken.add(rel);
    items.push({ file_id: null, source_key: o.key, dest_key: null, path, name, size: o.size, last_modified: o.lastModified });
  }
  await savePlan(ctx.db, transferId, [items], () => ({ files_filtered_out: left, destination: null }));
}

/**
 * Sends part `n` (bytes `start`..`start + length - 1` of the item's source) to
 * our store with the part blueprint `bp`; answers the part's ETag.
 */
export type PartSender = (item: Item, n: number, range: { start: number; length: number }, bp: Blueprint, signal: AbortSignal) => Promise<string>;

export interface Import {
  ctx: HostedContext;
  pkg: PackagesTable;
  signal: AbortSignal;
  partSize: number;
  concurrency: number;
  sendPart: PartSender;
}

/** Registers the item's file (replacing an earlier attempt's pending one) and starts its upload. */
async function register(im: Import, item: Item): Promise<{ fileId: string; uploadId: string; partSize: number }> {
  const answer = await registerFile(
    im.ctx,
    im.pkg,
    { kind: 'file', name: item.name, path: item.path, last_modified: item.last_modified, size: item.size, chunk_size: im.partSize },
    item.size > 0 ? { count: 1 } : {},
  );
  const uploadId = answer.upload_id ?? '';
  await startItemUpload(im.ctx.db, item, uploadId, answer.file.chunk_size, answer.file.id);
  return { fileId: answer.file.id, uploadId, partSize: answer.file.chunk_size };
}

/** PUTs `body` (`length` bytes) to a part blueprint of our store; answers the part's ETag. */
async function putPart(url: string, headers: Record<string, string>, body: Readable, length: number, signal: AbortSignal): Promise<string> {
  const res = await request(url, { method: 'PUT', headers: { ...headers, 'content-length': String(length) }, body, signal });
  const text = await res.body.text();
  const etag = res.headers.etag;
  if (res.statusCode !== 200 || typeof etag !== 'string') throw new Error(`our store answered ${res.statusCode} to a part: ${text.slice(0, 200)}`);
  return etag;
}

/**
 * The service's own refusals (a Portal limit, a Package finalized meanwhile)
 * will not change on a retry: they end the transfer. Its failures (5xx) are retried.
 */
export async function ours<T>(run: () => Promise<T>): Promise<T> {
  try {
    return await run();
  } catch (err) {
    if (err instanceof HttpError && err.status < 500) throw new FinalJobError(`Ferry refused a file: ${err.message}`);
    throw err;
  }
}

/** Brings one item in: registers its file (unless an open one is recorded), sends the parts not yet stored, finalizes the file. */
export async function importItem(im: Import, item: Item): Promise<void> {
  const { ctx, pkg } = im;
  let fileId = item.file_id;
  let uploadId = item.upload_id;
  let partSize = item.part_size;
  if (fileId) {
    const file = await getFile(ctx, pkg.id, fileId).catch(() => undefined);
    if (file?.state === 'finalized') return completeItem(ctx.db, item, null, 0);
    const open = file && uploadId !== null && (uploadId === '' || (await ctx.storage.uploadExists(file.object_key!, uploadId)));
    if (!open) {
      await resetItemUpload(ctx.db, item);
      fileId = null;
    }
  }
  if (!fileId || uploadId === null || !partSize) ({ fileId, uploadId, partSize } = await ours(() => register(im, { ...item, file_id: null })));
  const done = await partsOf(ctx.db, item);
  const count = item.size === 0 ? 0 : Math.ceil(item.size / partSize!);
  const missing = Array.from({ length: count }, (_, i) => i + 1).filter((n) => !done.has(n));
  const local = new AbortController();
  const both = AbortSignal.any([im.signal, local.signal]);
  const [fid, uid, size] = [fileId, uploadId!, partSize!];
  await pool(missing, im.concurrency, async (n) => {
    const start = (n - 1) * size;
    const length = partLength(item.size, size, n);
    try {
      const [bp] = await partBlueprints(ctx, pkg, fid, n - 1, 1, uid);
      const etag = await im.sendPart(item, n, { start, length }, bp!, both);
      done.set(n, etag);
      await recordPart(ctx.db, item, n, etag, length);
    } catch (err) {
      local.abort();
      throw err;
    }
  });
  const chunk_extras = [...done].sort((a, b) => a[0] - b[0]).map(([n, etag]) => ({ part_number: String(n), etag }));
  // An empty object has no upload ('' names none): its finalize puts an empty object.
  await ours(() => finalizeFile(ctx, pkg, fid, { chunk_extras, file_extras: { upload_id: uid }, size: item.size, chunk_size: size }));
  await completeItem(ctx.db, item, null, 0);
}

/**
 * One attempt of a cloud_to_svc transfer: fills the Package (state new) and
 * finalizes it. A Package finalized or deleted meanwhile by someone else ends it.
 */
/** Every file of the plan not brought in yet (a resumed transfer skips those that are), then the Package is finalized. */
export async function importAll(im: Import, transferId: string): Promise<void> {
  for (const item of await itemsOf(im.ctx.db, transferId)) {
    if (item.state === 'complete') continue;
    im.signal.throwIfAborted();
    await importItem(im, item);
  }
  await ours(() => finalizePackage(im.ctx, im.pkg));
}

export async function importFromS3(
  ctx: HostedContext,
  transfer: CloudTransfersTable,
  conn: CloudConnectionsTable,
  pkg: PackagesTable,
  target: S3Target,
  signal: AbortSignal,
  opts: { partSize: number; concurrency: number },
): Promise<void> {
  if (pkg.state !== 'new') {
    const items = await itemsOf(ctx.db, transfer.id);
    // The previous attempt finalized it and stopped before saying so.
    if (pkg.state === 'finalized' && transfer.planned && items.every((i) => i.state === 'complete')) return;
    throw new FinalJobError(`the package is ${pkg.state}; a cloud_to_svc transfer fills a new package`);
  }
  if (!transfer.planned) await plan(ctx, transfer, conn, target, signal);
  // Each part: a range of their object, streamed into our store's part blueprint.
  const sendPart: PartSender = async (item, _n, { start, length }, bp, partSignal) => {
    let body: Readable | undefined;
    try {
      const got = await target.client.send(new GetObjectCommand({ Bucket: target.bucket, Key: item.source_key, Range: `bytes=${start}-${start + length - 1}` }), { abortSignal: partSignal });
      body = got.Body as Readable;
      return await putPart(bp.url, bp.headers, body, length, partSignal);
    } finally {
      body?.destroy();
    }
  };
  await importAll({ ctx, pkg, signal, ...opts, sendPart }, transfer.id);
}
