// svc_to_cloud for the S3 family: a finalized Package copied from our store to
// the connection's bucket, object by object, streamed. An object up to the part
// size goes in one PutObject; a larger one in a multipart upload whose parts are
// ranges read from our store and streamed into UploadPart (the two stores are
// different endpoints, so no server-side copy). Each stored part is recorded, so
// a later attempt (after a failure or a restart) sends only what is missing.
import {
  AbortMultipartUploadCommand,
  CompleteMultipartUploadCommand,
  CreateMultipartUploadCommand,
  HeadObjectCommand,
  ListPartsCommand,
  PutObjectCommand,
  UploadPartCommand,
} from '@aws-sdk/client-s3';
import type { Readable } from 'node:stream';
import type { HostedContext } from '../context.js';
import type { CloudConnectionsTable, CloudTransfersTable, PackagesTable } from '../db/schema.js';
import type { FilterRule } from '../../api/hosted/filters.js';
import { filterMatches } from '../services/filterMatch.js';
import { finalizedPages } from '../services/fileList.js';
import { isWithheld, SCAN_RETRY_AFTER_SECONDS, scanPendingIn } from '../services/malwareScan.js';
import { DeferredJobError } from '../jobs/worker.js';
import { CHUNK_LIMITS, MiB, partLength } from '../services/chunks.js';
import { codeOf, statusOf, type S3Target } from './s3Target.js';
import { completeItem, itemPages, partsOf, pool, recordPart, resetItemUpload, savePlan, startItemUpload, type Item, type PlannedItem } from './progress.js';
import { putManifest } from './manifest.js';

/**
 * A Package's folder in the bucket: its name made safe as one key segment (also
 * for a bucket synced to Windows: no <>:"|?* either), and its id (names repeat).
 */
export function packageFolder(pkg: Pick<PackagesTable, 'id' | 'name'>): string {
  const safe = pkg.name
    .replace(/[\u0000-\u001f\u007f/\\<>:"|?*]/g, '_')
    .trim()
    .slice(0, 200)
    .replace(/^\.{1,2}$/, '_');
  return `${safe || 'package'} (${pkg.id})`;
}

export const joinKey = (...parts: string[]) => parts.filter((p) => p !== '').join('/');

/** The part size for an object: the configured one, raised so that S3's 10,000 parts hold it. */
export function partSizeFor(size: number, configured: number): number {
  const need = Math.ceil(size / CHUNK_LIMITS.max_chunk_count / MiB) * MiB;
  return Math.min(Math.max(configured, need, CHUNK_LIMITS.min_chunk_size), CHUNK_LIMITS.max_chunk_size);
}

const parseRules = (json: string | null): FilterRule[] | null => (json ? (JSON.parse(json) as FilterRule[]) : null);

/**
 * The objects to send, for any destination (a bucket here, a storage gateway's root):
 * the Package's files that pass the filter, each with its key under the connection's
 * folder. `destination` says where they go, for the transfer record. The files are
 * read a page at a time (--cloud-page-size rows) and each page's items saved before the next.
 */
export async function planDelivery(
  ctx: HostedContext,
  transfer: CloudTransfersTable,
  conn: CloudConnectionsTable,
  pkg: PackagesTable,
  destination: (folder: string) => string,
): Promise<void> {
  // Nothing unscanned leaves the service, and nothing the scan withholds.
  if (await scanPendingIn(ctx, pkg.id)) throw new DeferredJobError('waiting for the malware scan of its files', SCAN_RETRY_AFTER_SECONDS * 1000);
  const rules = parseRules(transfer.filter_rules);
  const folder = joinKey(conn.target_directory_id ?? '', packageFolder(pkg));
  let filteredOut = 0;
  async function* batches(): AsyncGenerator<PlannedItem[]> {
    for await (const page of finalizedPages(ctx.db, pkg.id, ctx.config.cloudPageSize)) {
      const files = page.filter((f) => f.kind === 'file' && f.object_key && !isWithheld(f));
      const passing = rules ? files.filter((f) => filterMatches({ rules }, { name: f.name, path: f.path })) : files;
      filteredOut += files.length - passing.length;
      yield passing.map((f) => ({
        file_id: f.id,
        source_key: f.object_key!,
        dest_key: joinKey(folder, f.path, f.name),
        path: f.path,
        name: f.name,
        size: f.size ?? 0,
        last_modified: f.last_modified,
      }));
    }
  }
  await savePlan(ctx.db, transfer.id, batches(), () => ({ files_filtered_out: filteredOut, destination: destination(folder) }));
}

interface Copy {
  ctx: HostedContext;
  target: S3Target;
  signal: AbortSignal;
}

const destroyQuietly = (s: Readable | undefined) => s?.destroy();

/** Reads from our own store, saying so when it fails (the bucket's failures read otherwise). */
async function readOurs(ctx: HostedContext, key: string, range: { start: number; end: number } | undefined, signal: AbortSignal): Promise<Readable> {
  try {
    return await ctx.storage.read(key, range, signal);
  } catch (err) {
    if (signal.aborted) throw err;
    const e = err as { name?: string; message?: string; $metadata?: { httpStatusCode?: number } };
    throw new Error(`reading ${key} from Ferry's storage failed: ${e.$metadata?.httpStatusCode ?? ''} ${e.name ?? ''} ${e.message ?? String(err)}`.replace(/ +/g, ' '));
  }
}

async function putWhole({ ctx, target, signal }: Copy, item: Item): Promise<void> {
  let body: Readable | undefined;
  try {
    body = item.size > 0 ? await readOurs(ctx, item.source_key, undefined, signal) : undefined;
    const r = await target.client.send(
      new PutObjectCommand({ Bucket: target.bucket, Key: item.dest_key!, Body: body ?? new Uint8Array(0), ContentLength: item.size, StorageClass: target.storageClass }),
      { abortSignal: signal },
    );
    await completeItem(ctx.db, item, r.ETag ?? null, item.size);
  } finally {
    destroyQuietly(body);
  }
}

/** The parts the destination holds of `uploadId` as recorded; null when the upload is gone there. */
async function storedParts({ ctx, target, signal }: Copy, item: Item, uploadId: string): Promise<Map<number, string> | null> {
  const recorded = await partsOf(ctx.db, item);
  const there = new Map<number, string>();
  let marker: string | undefined;
  try {
    for (let page = 0; page < 20; page++) {
      const r = await target.client.send(new ListPartsCommand({ Bucket: target.bucket, Key: item.dest_key!, UploadId: uploadId, PartNumberMarker: marker }), { abortSignal: signal });
      for (const p of r.Parts ?? []) if (p.PartNumber && p.ETag) there.set(p.PartNumber, p.ETag);
      if (!r.IsTruncated) break;
      marker = r.NextPartNumberMarker;
    }
  } catch (err) {
    if (codeOf(err) === 'NoSuchUpload' || statusOf(err) === 404) return null;
    throw err;
  }
  // Only parts both recorded and stored, with the same ETag, count as sent.
  return new Map([...recorded].filter(([n, etag]) => there.get(n) === etag));
}

async function putInParts(copy: Copy, item: Item, configuredPartSize: number, concurrency: number): Promise<void> {
  const { ctx, target, signal } = copy;
  let uploadId = item.upload_id;
  let partSize = item.part_size ?? partSizeFor(item.size, configuredPartSize);
  let done = new Map<number, string>();
  if (uploadId) {
    const kept = await storedParts(copy, item, uploadId);
    if (kept) done = kept;
    else {
      await resetItemUpload(ctx.db, item);
      uploadId = null;
      partSize = partSizeFor(item.size, configuredPartSize);
    }
  }
  if (!uploadId) {
    const r = await target.client.send(new CreateMultipartUploadCommand({ Bucket: target.bucket, Key: item.dest_key!, StorageClass: target.storageClass }), { abortSignal: signal });
    if (!r.UploadId) throw new Error(`the bucket's store answered no UploadId for ${item.dest_key}`);
    uploadId = r.UploadId;
    await startItemUpload(ctx.db, item, uploadId, partSize);
  }
  const count = Math.ceil(item.size / partSize);
  const missing = Array.from({ length: count }, (_, i) => i + 1).filter((n) => !done.has(n));
  // One part failing stops the others' reads and uploads at once.
  const local = new AbortController();
  const both = AbortSignal.any([signal, local.signal]);
  const id = uploadId;
  await pool(missing, concurrency, async (n) => {
    const start = (n - 1) * partSize;
    const length = partLength(item.size, partSize, n);
    let body: Readable | undefined;
    try {
      body = await readOurs(ctx, item.source_key, { start, end: start + length - 1 }, both);
      const r = await target.client.send(new UploadPartCommand({ Bucket: target.bucket, Key: item.dest_key!, UploadId: id, PartNumber: n, Body: body, ContentLength: length }), { abortSignal: both });
      if (!r.ETag) throw new Error(`the bucket's store answered no ETag for part ${n} of ${item.dest_key}`);
      done.set(n, r.ETag);
      await recordPart(ctx.db, item, n, r.ETag, length);
    } catch (err) {
      local.abort();
      throw err;
    } finally {
      destroyQuietly(body);
    }
  });
  const Parts = [...done].sort((a, b) => a[0] - b[0]).map(([PartNumber, ETag]) => ({ PartNumber, ETag }));
  try {
    const r = await target.client.send(new CompleteMultipartUploadCommand({ Bucket: target.bucket, Key: item.dest_key!, UploadId: id, MultipartUpload: { Parts } }), { abortSignal: signal });
    // Some stores (Ceph's RADOS Gateway 16) answer an empty <ETag/>: the object's own head then tells it.
    const etag = r.ETag || (await target.client.send(new HeadObjectCommand({ Bucket: target.bucket, Key: item.dest_key! }), { abortSignal: signal })).ETag;
    await completeItem(ctx.db, item, etag || null, 0);
  } catch (err) {
    // A complete that went through before the service stopped leaves no upload: the object is there.
    if (codeOf(err) !== 'NoSuchUpload') throw err;
    const head = await target.client.send(new HeadObjectCommand({ Bucket: target.bucket, Key: item.dest_key! }), { abortSignal: signal }).catch(() => undefined);
    if (head?.ContentLength !== item.size) {
      await resetItemUpload(ctx.db, item);
      throw err;
    }
    await completeItem(ctx.db, item, head.ETag ?? null, 0);
  }
}

export interface DeliverOptions {
  partSize: number;
  concurrency: number;
}

/** One attempt of a svc_to_cloud transfer to an S3 bucket: its items a page at a time, the manifest last. */
export async function deliverToS3(
  ctx: HostedContext,
  transfer: CloudTransfersTable,
  conn: CloudConnectionsTable,
  pkg: PackagesTable,
  target: S3Target,
  signal: AbortSignal,
  opts: DeliverOptions,
): Promise<void> {
  const size = ctx.config.cloudPageSize;
  if (!transfer.planned) await planDelivery(ctx, transfer, conn, pkg, (folder) => `${target.bucket}/${folder}/`);
  const copy: Copy = { ctx, target, signal };
  for await (const items of itemPages(ctx.db, transfer.id, { size, pendingOnly: true })) {
    for (const item of items) {
      signal.throwIfAborted();
      // An object that began in parts finishes in parts, whatever the part size is now.
      if (item.upload_id || item.size > opts.partSize) await putInParts(copy, item, opts.partSize, opts.concurrency);
      else await putWhole(copy, item);
    }
  }
  if (conn.upload_transfer_manifest === 1) {
    const folder = (await ctx.db.selectFrom('cloud_transfers').select('destination').where('id', '=', transfer.id).executeTakeFirstOrThrow()).destination!;
    await putManifest(ctx, target, folder.slice(target.bucket.length + 1).replace(/\/$/, ''), { transfer, conn, pkg, pageSize: size }, signal);
  }
}

/** Drops a multipart upload left open at the destination by an item that will not finish (the transfer was given up). */
export async function abortOpenUploads(ctx: HostedContext, transferId: string, target: S3Target): Promise<void> {
  const open = () =>
    ctx.db.selectFrom('cloud_transfer_items').selectAll().where('transfer_id', '=', transferId).where('state', '=', 'pending').where('upload_id', 'is not', null).where('dest_key', 'is not', null).orderBy('seq').limit(100).execute();
  // Each pass resets the uploads it aborted, so the next pass reads the ones after them.
  for (let items = await open(); items.length > 0; items = await open()) {
    for (const item of items) {
      await target.client.send(new AbortMultipartUploadCommand({ Bucket: target.bucket, Key: item.dest_key!, UploadId: item.upload_id! })).catch(() => undefined);
      await resetItemUpload(ctx.db, item);
    }
  }
}
