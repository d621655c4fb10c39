// Object operations: PutObject, GetObject/HeadObject (ranges across part
// files), DeleteObject, DeleteObjects, CopyObject.

import { mkdirSync, renameSync } from 'node:fs';
import { copyFile, link, unlink } from 'node:fs/promises';
import { join } from 'node:path';
import { receiveSmall, receiveToFile } from './body.js';
import { isNotFound, s3err } from './errors.js';
import { newId, paddedPart, removeQuietly, type Manifest, type PartRef } from './disk.js';
import { checkConditions, objectHeaders, parseRange, sendEmpty, sendXml, storedHeaders } from './http.js';
import { sendSegments, type Segment } from './send.js';
import { commitObject, pinCurrent, removeObject, type S3Request, type StoreContext } from './store.js';
import { el, parseDelete, xmlDocument } from './xml.js';

export async function putObject(ctx: StoreContext, r: S3Request): Promise<void> {
  const copySource = r.req.headers['x-amz-copy-source'];
  if (typeof copySource === 'string') return copyObject(ctx, r, copySource);
  ctx.catalog.get(r.bucket);
  const tmp = ctx.layout.tempFile();
  const { size, md5 } = await receiveToFile(r.req, r.auth, tmp);
  const id = newId();
  const dataDir = ctx.layout.data(r.bucket, id);
  try {
    mkdirSync(dataDir);
    renameSync(tmp, join(dataDir, 'part'));
    const md5hex = md5.toString('hex');
    const manifest: Manifest = {
      v: 1,
      key: r.key,
      size,
      etag: `"${md5hex}"`,
      lastModified: new Date().toISOString(),
      ...storedHeaders(r.req),
      data: id,
      parts: [{ n: 1, file: 'part', size, md5: md5hex }],
    };
    await commitObject(ctx, r.bucket, manifest);
    sendEmpty(r.res, 200, { ETag: manifest.etag });
  } catch (err) {
    await unlink(tmp).catch(() => undefined);
    await removeQuietly(dataDir);
    throw err;
  }
}

/** The part-file slices covering bytes [start, end] of the object. */
function segments(m: Manifest, dataDir: string, start: number, end: number): Segment[] {
  const out: Segment[] = [];
  let offset = 0;
  for (const part of m.parts) {
    const partEnd = offset + part.size - 1;
    if (part.size > 0 && partEnd >= start && offset <= end) {
      out.push([join(dataDir, part.file), Math.max(start, offset) - offset, Math.min(end, partEnd) - offset]);
    }
    offset += part.size;
    if (offset > end) break;
  }
  return out;
}

export async function getObject(ctx: StoreContext, r: S3Request, headOnly: boolean): Promise<void> {
  const pinned = await pinCurrent(ctx, r.bucket, r.key);
  if (!pinned) throw s3err('NoSuchKey');
  r.res.once('close', pinned.release);
  const m = pinned.manifest;
  const headers = objectHeaders(m, r.query);
  if (checkConditions(r.req, m) === 'not-modified') {
    r.res.writeHead(304, { ETag: m.etag, 'Last-Modified': headers['Last-Modified']! });
    r.res.end();
    return;
  }
  const range = partRange(m, r.query) ?? parseRange(r.req.headers.range, m.size);
  const [start, end] = range ?? [0, m.size - 1];
  headers['Content-Length'] = String(end - start + 1);
  if (range) headers['Content-Range'] = `bytes ${start}-${end}/${m.size}`;
  if (r.query.has('partNumber')) headers['x-amz-mp-parts-count'] = String(m.parts.length);
  r.res.writeHead(range ? 206 : 200, headers);
  if (headOnly || end < start) {
    r.res.end();
    return;
  }
  await sendSegments(r.res, segments(m, ctx.layout.data(r.bucket, m.data), start, end));
}

/** GET/HEAD ?partNumber=N: the bytes of that part (a plain object has one part). */
function partRange(m: Manifest, query: Map<string, string>): [number, number] | undefined {
  const raw = query.get('partNumber');
  if (raw === undefined) return undefined;
  const n = Number(raw);
  if (!/^\d+$/.test(raw) || n < 1 || n > 10_000) throw s3err('InvalidArgument', 'Part number must be an integer between 1 and 10000, inclusive');
  let offset = 0;
  for (const part of m.parts) {
    if (part.n === n) return [offset, offset + part.size - 1];
    offset += part.size;
  }
  throw s3err('InvalidPartNumber', 'The requested partnumber is not satisfiable', { 'Content-Range': `bytes */${m.size}` });
}

export async function deleteObject(ctx: StoreContext, r: S3Request): Promise<void> {
  await removeObject(ctx, r.bucket, r.key);
  sendEmpty(r.res, 204);
}

export async function deleteObjects(ctx: StoreContext, r: S3Request): Promise<void> {
  ctx.catalog.get(r.bucket);
  const request = parseDelete((await receiveSmall(r.req, r.auth, 2 << 20)).toString('utf8'));
  const results = [];
  for (const key of request.keys) {
    try {
      await removeObject(ctx, r.bucket, key);
      if (!request.quiet) results.push(el('Deleted', [el('Key', key)]));
    } catch (err) {
      ctx.logger?.error({ err, key }, 'objectstore: delete failed');
      results.push(el('Error', [el('Key', key), el('Code', 'InternalError'), el('Message', 'We encountered an internal error.')]));
    }
  }
  sendXml(r.res, 200, xmlDocument('DeleteResult', results));
}

function parseCopySource(source: string): { bucket: string; key: string } {
  const path = source.split('?')[0]!.replace(/^\//, '');
  const slash = path.indexOf('/');
  if (slash <= 0 || slash === path.length - 1) throw s3err('InvalidArgument', 'Copy Source must mention the source bucket and key: sourcebucket/sourcekey');
  try {
    return { bucket: decodeURIComponent(path.slice(0, slash)), key: decodeURIComponent(path.slice(slash + 1)) };
  } catch {
    throw s3err('InvalidArgument', 'Invalid copy source encoding');
  }
}

/** Hard links: part files are immutable, so the copy shares bytes with its source and costs O(parts). */
async function linkOrCopy(from: string, to: string): Promise<void> {
  try {
    await link(from, to);
  } catch (err) {
    if (isNotFound(err)) throw err;
    await copyFile(from, to);
  }
}

async function copyObject(ctx: StoreContext, r: S3Request, source: string): Promise<void> {
  ctx.catalog.get(r.bucket);
  const src = parseCopySource(source);
  ctx.catalog.get(src.bucket);
  const directive = r.req.headers['x-amz-metadata-directive'] ?? 'COPY';
  if (directive !== 'COPY' && directive !== 'REPLACE') throw s3err('InvalidArgument', 'Unknown metadata directive.');
  if (src.bucket === r.bucket && src.key === r.key && directive === 'COPY') {
    throw s3err('InvalidRequest', 'This copy request is illegal because it is trying to copy an object to itself without changing the object\'s metadata, storage class, website redirect location or encryption attributes.');
  }
  const pinned = await pinCurrent(ctx, src.bucket, src.key);
  if (!pinned) throw s3err('NoSuchKey');
  const m = pinned.manifest;
  const id = newId();
  const dataDir = ctx.layout.data(r.bucket, id);
  const srcDir = ctx.layout.data(src.bucket, m.data);
  try {
    mkdirSync(dataDir);
    const parts: PartRef[] = [];
    for (const part of m.parts) {
      const file = paddedPart(part.n);
      await linkOrCopy(join(srcDir, part.file), join(dataDir, file));
      parts.push({ ...part, file });
    }
    const manifest: Manifest = {
      ...m,
      ...(directive === 'REPLACE' ? storedHeaders(r.req) : {}),
      key: r.key,
      lastModified: new Date().toISOString(),
      data: id,
      parts,
    };
    await commitObject(ctx, r.bucket, manifest);
    sendXml(r.res, 200, xmlDocument('CopyObjectResult', [el('LastModified', manifest.lastModified), el('ETag', manifest.etag)]));
  } catch (err) {
    await removeQuietly(dataDir);
    throw err;
  } finally {
    pinned.release();
  }
}
