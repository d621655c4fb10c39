// Multipart uploads. Each part lands in uploads/<id>/<NNNNN>.<md5hex>: the
// name carries the ETag, so Complete checks a part with one stat and never
// reads its bytes. Completing renames the upload directory into data/ and
// writes the manifest over upload.json, O(number of parts) whatever the object
// size.

import { createHash } from 'node:crypto';
import { mkdirSync, readdirSync, renameSync, statSync, unlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { receiveSmall, receiveToFile } from './body.js';
import { isNotFound, S3Error, s3err } from './errors.js';
import { isId, newId, partFileName, readJson, removeQuietly, type Manifest, type PartRef, type UploadInfo } from './disk.js';
import { sendEmpty, sendXml, storedHeaders } from './http.js';
import { awsUriEncode } from '../sigv4/sign.js';
import { commitObject, discard, type OpenRecord, type PartStored, type S3Request, type StoreContext } from './store.js';
import { el, parseCompleteMultipartUpload, xmlDocument, type CompletePart } from './xml.js';

const MIN_PART_SIZE = 5 * 1024 * 1024;
const MAX_PARTS = 10_000;

export async function createUpload(ctx: StoreContext, r: S3Request): Promise<void> {
  const uploadId = openUpload(ctx, r.bucket, r.key, storedHeaders(r.req));
  sendXml(r.res, 200, xmlDocument('InitiateMultipartUploadResult', [
    el('Bucket', r.bucket),
    el('Key', r.key),
    el('UploadId', uploadId),
  ]));
}

/** Starts a multipart upload of `key` whose object will carry `stored` headers; returns its id. */
export function openUpload(ctx: StoreContext, bucket: string, key: string, stored: Pick<UploadInfo, 'headers' | 'meta'>): string {
  ctx.catalog.get(bucket);
  const uploadId = newId();
  const dir = ctx.layout.upload(bucket, uploadId);
  mkdirSync(dir, { recursive: true });
  const info: UploadInfo = { v: 1, key, initiated: new Date().toISOString(), ...stored };
  // Written in place, not through a temp file: nobody knows the id before this answer, and
  // a half-written record (a crash now) only loses an upload whose id never reached a client.
  writeFileSync(join(dir, 'upload.json'), JSON.stringify(info), { flag: 'wx' });
  rememberUpload(ctx, `${bucket}/${uploadId}`, info);
  return uploadId;
}

function rememberUpload(ctx: StoreContext, id: string, info: UploadInfo, parts = new Map<number, string>(), sizes = new Map<number, number>()): OpenRecord {
  if (ctx.uploads.size >= 10_000) ctx.uploads.clear(); // only a cache; abandoned uploads must not grow it forever
  let bytes = 0;
  for (const size of sizes.values()) bytes += size;
  const record = { info, parts, sizes, bytes };
  ctx.uploads.set(id, record);
  return record;
}

/** An open upload as a request found it; its parts are read under its lock (partsNow). */
interface OpenUpload { id: string; key: string; dir: string; cacheId: string; info: UploadInfo }

async function loadUpload(ctx: StoreContext, bucket: string, key: string, id: string): Promise<OpenUpload> {
  ctx.catalog.get(bucket);
  if (!isId(id)) throw s3err('NoSuchUpload');
  const dir = ctx.layout.upload(bucket, id);
  const cacheId = `${bucket}/${id}`;
  const found = { id, key, dir, cacheId };
  const record = ctx.uploads.get(cacheId) ?? (await ctx.locks.run(uploadLock(id), async () => recordNow(ctx, found)));
  if (record.info.key !== key) throw s3err('NoSuchUpload');
  return { ...found, info: record.info };
}

/**
 * The upload's record: the cached one, or read from disk. Called under the
 * upload's lock, as every change to a record is, so a record read from disk
 * (after a restart, or after the cache dropped it) misses no part.
 */
function recordNow(ctx: StoreContext, u: { key: string; dir: string; cacheId: string }): OpenRecord {
  const cached = ctx.uploads.get(u.cacheId);
  if (cached) return cached;
  const info = readJson<UploadInfo>(join(u.dir, 'upload.json'));
  if (!info || info.key !== u.key) throw s3err('NoSuchUpload');
  // Of several files for one part, the newest is the part; the older ones (a part sent
  // again just before a crash) go, so the record names every file.
  const stale: string[] = [];
  const found = storedPartsOrGone(u.dir, stale);
  const record = rememberUpload(ctx, u.cacheId, info, new Map(found.map((p) => [p.n, p.md5])), new Map(found.map((p) => [p.n, p.size])));
  for (const name of stale) unlinkQuietly(join(u.dir, name));
  return record;
}

/** The upload's parts, number -> hex MD5 of its file; under the upload's lock only. */
const partsNow = (ctx: StoreContext, upload: OpenUpload): Map<number, string> => recordNow(ctx, upload).parts;

const uploadOf = (ctx: StoreContext, r: S3Request) => loadUpload(ctx, r.bucket, r.key, r.query.get('uploadId') ?? '');

const uploadLock = (uploadId: string): string => `upload\u0000${uploadId}`;

function partNumber(r: S3Request): number {
  const raw = r.query.get('partNumber') ?? '';
  const n = Number(raw);
  if (!/^\d+$/.test(raw) || n < 1 || n > MAX_PARTS) {
    throw s3err('InvalidArgument', 'Part number must be an integer between 1 and 10000, inclusive');
  }
  return n;
}

export async function uploadPart(ctx: StoreContext, r: S3Request): Promise<void> {
  if (r.req.headers['x-amz-copy-source'] !== undefined) throw s3err('NotImplemented', 'UploadPartCopy is not supported.');
  const n = partNumber(r);
  const upload = await uploadOf(ctx, r);
  const tmp = ctx.layout.tempFile();
  const { md5, size } = await receiveToFile(r.req, r.auth, tmp);
  const md5hex = md5.toString('hex');
  let stored: PartStored | undefined;
  try {
    // Per-upload lock: Complete never sees a part replaced between its check and its rename (completeUpload).
    await ctx.locks.run(uploadLock(upload.id), async () => {
      // ENOENT here means the upload was completed or aborted meanwhile: never recreate it.
      renameSync(tmp, join(upload.dir, partFileName(n, md5hex)));
      // A part sent again with other bytes: only its latest file stays.
      const record = recordNow(ctx, upload);
      const was = record.parts.get(n);
      record.parts.set(n, md5hex);
      record.bytes += size - (record.sizes.get(n) ?? 0);
      record.sizes.set(n, size);
      if (was !== undefined && was !== md5hex) unlinkQuietly(join(upload.dir, partFileName(n, was)));
      if (ctx.onPartStored) stored = { bucket: r.bucket, key: r.key, uploadId: upload.id, partNumber: n, parts: record.parts.size, bytes: record.bytes };
    });
  } catch (err) {
    unlinkQuietly(tmp);
    throw isNotFound(err) ? s3err('NoSuchUpload') : err;
  }
  sendEmpty(r.res, 200, { ETag: `"${md5hex}"` });
  if (stored) ctx.onPartStored!(stored);
}

function unlinkQuietly(path: string): void {
  try {
    unlinkSync(path);
  } catch {
    // already gone
  }
}

const statOrUndefined = (path: string) => statSync(path, { throwIfNoEntry: false });

export interface StoredPart {
  n: number;
  md5: string;
  size: number;
  mtime: Date;
}

const PART_FILE = /^(\d{5})\.([0-9a-f]{32})$/;

/** Parts currently in an upload, by number; of two files for one number, the newest (`stale` gets the others' names). */
function storedParts(dir: string, stale?: string[]): StoredPart[] {
  const parts: StoredPart[] = [];
  for (const name of readdirSync(dir)) {
    const m = PART_FILE.exec(name);
    const st = m ? statOrUndefined(join(dir, name)) : undefined;
    if (st) parts.push({ n: Number(m![1]), md5: m![2]!, size: st.size, mtime: st.mtime });
  }
  return parts.sort((a, b) => a.n - b.n || b.mtime.getTime() - a.mtime.getTime()).filter((p, i, all) => {
    const newest = i === 0 || all[i - 1]!.n !== p.n;
    if (!newest) stale?.push(partFileName(p.n, p.md5));
    return newest;
  });
}

/** storedParts, or NoSuchUpload when the directory went (completed or aborted meanwhile). */
function storedPartsOrGone(dir: string, stale?: string[]): StoredPart[] {
  try {
    return storedParts(dir, stale);
  } catch (err) {
    throw isNotFound(err) ? s3err('NoSuchUpload') : err;
  }
}

/** Whether `uploadId` is an open upload of `key`. */
export async function isOpen(ctx: StoreContext, bucket: string, key: string, uploadId: string): Promise<boolean> {
  try {
    await loadUpload(ctx, bucket, key, uploadId);
    return true;
  } catch (err) {
    if (err instanceof S3Error && err.code === 'NoSuchUpload') return false;
    throw err;
  }
}

/** The parts of an open upload (NoSuchUpload when it is not open for `key`). */
export async function partsOf(ctx: StoreContext, bucket: string, key: string, uploadId: string): Promise<StoredPart[]> {
  return storedParts((await loadUpload(ctx, bucket, key, uploadId)).dir);
}

export async function listParts(ctx: StoreContext, r: S3Request): Promise<void> {
  const upload = await uploadOf(ctx, r);
  const maxParts = Math.min(Number(r.query.get('max-parts') ?? 1000) || 1000, 1000);
  const marker = Number(r.query.get('part-number-marker') ?? 0) || 0;
  const all = storedParts(upload.dir).filter((p) => p.n > marker);
  const page = all.slice(0, maxParts);
  const truncated = all.length > page.length;
  sendXml(r.res, 200, xmlDocument('ListPartsResult', [
    el('Bucket', r.bucket),
    el('Key', r.key),
    el('UploadId', upload.id),
    el('PartNumberMarker', marker),
    el('NextPartNumberMarker', page.at(-1)?.n ?? marker),
    el('MaxParts', maxParts),
    el('IsTruncated', truncated),
    el('StorageClass', 'STANDARD'),
    el('Initiated', upload.info.initiated),
    ...page.map((p) => el('Part', [
      el('PartNumber', p.n),
      el('LastModified', p.mtime.toISOString()),
      el('ETag', `"${p.md5}"`),
      el('Size', p.size),
    ])),
  ]));
}

/** Drops an open upload and its parts. */
export async function abort(ctx: StoreContext, bucket: string, key: string, uploadId: string): Promise<void> {
  const upload = await loadUpload(ctx, bucket, key, uploadId);
  // A rename, so it is atomic against a racing Complete (one of them gets ENOENT).
  const found = await discard(ctx, upload.dir);
  ctx.uploads.delete(upload.cacheId);
  if (!found) throw s3err('NoSuchUpload');
}

export async function abortUpload(ctx: StoreContext, r: S3Request): Promise<void> {
  await abort(ctx, r.bucket, r.key, r.query.get('uploadId') ?? '');
  sendEmpty(r.res, 204);
}

/** Each listed part must be the upload's current one; one stat each for its size: O(parts), no byte is read. */
function checkParts(upload: OpenUpload, stored: Map<number, string>, requested: CompletePart[]): PartRef[] {
  return requested.map((p, i) => {
    // Clients send ETags quoted or bare. Only a known MD5 makes a file name: no path tricks.
    const md5 = p.etag.replace(/"/g, '').trim().toLowerCase();
    const file = partFileName(p.partNumber, md5);
    const st = stored.get(p.partNumber) === md5 ? statOrUndefined(join(upload.dir, file)) : undefined;
    if (!st) throw s3err('InvalidPart');
    if (st.size < MIN_PART_SIZE && i < requested.length - 1) throw s3err('EntityTooSmall');
    return { n: p.partNumber, file, size: st.size, md5 };
  });
}

export async function completeUpload(ctx: StoreContext, r: S3Request): Promise<void> {
  const upload = await uploadOf(ctx, r);
  const requested = parseCompleteMultipartUpload((await receiveSmall(r.req, r.auth, 4 << 20)).toString('utf8'));
  const manifest = await completeOpen(ctx, r.bucket, upload, requested);
  const location = `http://${r.req.headers.host ?? 'localhost'}/${r.bucket}/${r.key.split('/').map(awsUriEncode).join('/')}`;
  sendXml(r.res, 200, xmlDocument('CompleteMultipartUploadResult', [
    el('Location', location),
    el('Bucket', r.bucket),
    el('Key', r.key),
    el('ETag', manifest.etag),
  ]));
}

/**
 * Completes an open upload from the listed parts (ascending, each stored with that
 * ETag); resolves the object's manifest. With `size`, parts that add up to another
 * size are refused too (InvalidPart), checked in the same pass over the parts.
 */
export async function complete(ctx: StoreContext, bucket: string, key: string, uploadId: string, requested: CompletePart[], size?: number): Promise<Manifest> {
  return completeOpen(ctx, bucket, await loadUpload(ctx, bucket, key, uploadId), requested, size);
}

async function completeOpen(ctx: StoreContext, bucket: string, upload: OpenUpload, requested: CompletePart[], size?: number): Promise<Manifest> {
  if (requested.length > MAX_PARTS) throw s3err('MalformedXML', 'Too many parts');
  requested.forEach((p, i) => {
    if (p.partNumber < 1 || p.partNumber > MAX_PARTS) throw s3err('InvalidPart');
    if (i > 0 && p.partNumber <= requested[i - 1]!.partNumber) throw s3err('InvalidPartOrder');
  });
  const dataDir = ctx.layout.data(bucket, upload.id);
  const { parts, stored, total } = await ctx.locks.run(uploadLock(upload.id), async () => {
    const stored = partsNow(ctx, upload);
    const found = checkParts(upload, stored, requested);
    const total = found.reduce((sum, p) => sum + p.size, 0);
    if (size !== undefined && total !== size) throw s3err('InvalidPart', `the parts hold ${total} bytes, not ${size}`);
    try {
      renameSync(upload.dir, dataDir);
    } catch (err) {
      throw isNotFound(err) ? s3err('NoSuchUpload') : err;
    } finally {
      ctx.uploads.delete(upload.cacheId);
    }
    return { parts: found, stored, total };
  });
  const combined = createHash('md5');
  for (const p of parts) combined.update(Buffer.from(p.md5, 'hex'));
  const manifest: Manifest = {
    v: 1,
    key: upload.info.key,
    size: total,
    etag: `"${combined.digest('hex')}-${parts.length}"`,
    lastModified: new Date().toISOString(),
    headers: upload.info.headers,
    meta: upload.info.meta,
    data: upload.id,
    parts,
  };
  try {
    // upload.json is read no more: the manifest is written over it, so it takes no new inode.
    await commitObject(ctx, bucket, manifest, join(dataDir, 'upload.json'));
  } catch (err) {
    await removeQuietly(dataDir);
    throw err;
  }
  // Parts uploaded but left out of the list are discarded, as S3 does. The record names every
  // part file (an older file of a part sent again is removed when it is replaced), so no listing.
  const listed = new Set(parts.map((p) => p.n));
  for (const [n, md5] of stored) if (!listed.has(n)) unlinkQuietly(join(dataDir, partFileName(n, md5)));
  return manifest;
}
