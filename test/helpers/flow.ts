// The client side of the upload and download flows, done the way a real client
// does them: plain fetch against the blueprints, the service and the store.
import { createHash } from 'node:crypto';
import yauzl from 'yauzl';
import { expect } from 'vitest';
import { call, type TestService } from './hosted.js';
import type { Actor } from './auth.js';

export const MiB = 1024 * 1024;
export const sha256 = (b: Buffer) => createHash('sha256').update(b).digest('hex');

export interface Pkg { id: string; token: string; h: Record<string, string>; body: any }

export async function createPackage(svc: TestService, actor: Actor, body: Record<string, unknown> = {}): Promise<Pkg> {
  const r = await call(svc.url, 'POST', `/v1/teams/${actor.teamId}/packages`, {
    headers: actor.h,
    body: { name: 'Holiday footage', description: 'raw clips', recipients: [], ...body },
  });
  expect(r.status, JSON.stringify(r.body)).toBe(201);
  return { id: r.body.id, token: r.body.access_token, h: { 'x-package-token': r.body.access_token }, body: r.body };
}

/** The part size the helpers upload with unless told otherwise (the smallest S3 allows). */
export const PART = 5 * MiB;

/**
 * Registers an entry; `count` and `single` are Ferry's additions (RegisterFileQuery).
 * A file is registered with chunk_size `entry.chunk_size` (PART unless given; null
 * sends none: the service's default): a file registered with a size takes parts of
 * exactly its chunk size, which putParts and putWith send.
 */
export async function register(svc: TestService, pkg: Pkg, entry: { kind?: 'file' | 'directory'; name: string; path?: string; size?: number; chunk_size?: number | null }, count?: number, single?: boolean) {
  const q = new URLSearchParams();
  if (count !== undefined) q.set('count', String(count));
  if (single !== undefined) q.set('single', String(single));
  const kind = entry.kind ?? 'file';
  const chunk = entry.chunk_size === null || kind !== 'file' ? undefined : (entry.chunk_size ?? PART);
  const r = await call(svc.url, 'POST', `/v1/packages/${pkg.id}/files${q.size ? `?${q}` : ''}`, {
    headers: pkg.h,
    body: { kind, name: entry.name, path: entry.path ?? '', last_modified: '2024-05-01T10:00:00Z', size: entry.size, ...(chunk === undefined ? {} : { chunk_size: chunk }) },
  });
  expect(r.status, JSON.stringify(r.body)).toBe(201);
  return r.body as { create_blueprint: any; file: any; max_chunk_count: number; upload_id?: string; upload_blueprints?: any[] };
}

/** Runs create_blueprint exactly as given and reads the UploadId out of the XML answer. */
export async function startUpload(blueprint: { url: string; method: string; headers: Record<string, string>; body: string }): Promise<string> {
  const res = await fetch(blueprint.url, { method: blueprint.method, headers: blueprint.headers, body: blueprint.body || undefined });
  const xml = await res.text();
  expect(res.status, xml).toBe(200);
  const m = /<UploadId>([^<]+)<\/UploadId>/.exec(xml);
  expect(m, xml).not.toBeNull();
  return m![1]!;
}

export interface Part { part_number: string; etag: string }

/** Asks for part blueprints and PUTs `data` in parts of `partSize` (the file's chunk size); returns the parts as finalize wants them. */
export async function putParts(svc: TestService, pkg: Pkg, fileId: string, uploadId: string, data: Buffer, partSize = PART): Promise<Part[]> {
  const count = Math.max(1, Math.ceil(data.length / partSize));
  const r = await call(svc.url, 'POST', `/v1/packages/${pkg.id}/files/${fileId}?start=0&count=${count}`, {
    headers: pkg.h,
    body: { upload_id: uploadId },
  });
  expect(r.status, JSON.stringify(r.body)).toBe(200);
  expect(r.body).toHaveLength(count);
  return putWith(r.body, data, partSize);
}

/** PUTs `data` in parts of `partSize` through part blueprints 1, 2, ..., with their headers; returns the parts as finalize wants them. */
export async function putWith(blueprints: { url: string; method: string; headers: Record<string, string> }[], data: Buffer, partSize = PART): Promise<Part[]> {
  const parts: Part[] = [];
  for (let i = 0; i * partSize < data.length || i === 0; i++) {
    const bp = blueprints[i]!;
    expect(bp.method).toBe('PUT');
    const res = await fetch(bp.url, { method: 'PUT', headers: bp.headers, body: data.subarray(i * partSize, (i + 1) * partSize) });
    expect(res.status, await res.clone().text()).toBe(200);
    parts.push({ part_number: String(i + 1), etag: res.headers.get('etag')! });
  }
  return parts;
}

export async function finalizeFile(svc: TestService, pkg: Pkg, fileId: string, uploadId: string, parts: Part[], size: number) {
  return call(svc.url, 'POST', `/v1/packages/${pkg.id}/files/${fileId}/finalize`, {
    headers: pkg.h,
    body: { chunk_extras: parts, file_extras: { upload_id: uploadId }, size },
  });
}

/** Registers, uploads and finalizes one file; returns its id. */
export async function uploadFile(svc: TestService, pkg: Pkg, name: string, path: string, data: Buffer, partSize = PART): Promise<string> {
  const reg = await register(svc, pkg, { name, path, size: data.length, chunk_size: partSize });
  const uploadId = await startUpload(reg.create_blueprint);
  const parts = data.length === 0 ? [] : await putParts(svc, pkg, reg.file.id, uploadId, data, partSize);
  const fin = await finalizeFile(svc, pkg, reg.file.id, uploadId, parts, data.length);
  expect(fin.status, JSON.stringify(fin.body)).toBe(204);
  return reg.file.id;
}

export async function finalizePackage(svc: TestService, pkg: Pkg) {
  const r = await call(svc.url, 'POST', `/v1/packages/${pkg.id}/finalize`, { headers: pkg.h });
  expect(r.status, JSON.stringify(r.body)).toBe(204);
}

export async function makeLink(svc: TestService, pkg: Pkg, body: Record<string, unknown> = {}) {
  const r = await call(svc.url, 'POST', `/v1/packages/${pkg.id}/links`, { headers: pkg.h, body });
  expect(r.status, JSON.stringify(r.body)).toBe(201);
  return r.body as { id: string; secret: string; url: string; locked: boolean; expiry: string | null };
}

export async function fetchBytes(url: string, init?: RequestInit): Promise<{ status: number; data: Buffer; headers: Headers }> {
  const res = await fetch(url, init);
  return { status: res.status, data: Buffer.from(await res.arrayBuffer()), headers: res.headers };
}

/** Every entry of a ZIP: name to content (directories map to an empty buffer). */
export function readZip(zip: Buffer): Promise<Map<string, Buffer>> {
  return new Promise((resolve, reject) => {
    yauzl.fromBuffer(zip, { lazyEntries: true, decodeStrings: true, strictFileNames: true }, (err, zf) => {
      if (err || !zf) return reject(err);
      const out = new Map<string, Buffer>();
      zf.on('error', reject);
      zf.on('end', () => resolve(out));
      zf.on('entry', (entry: yauzl.Entry) => {
        if (entry.fileName.endsWith('/')) {
          out.set(entry.fileName, Buffer.alloc(0));
          return zf.readEntry();
        }
        if (entry.compressionMethod !== 0) return reject(new Error(`${entry.fileName} is compressed`));
        zf.openReadStream(entry, (e, s) => {
          if (e || !s) return reject(e);
          const chunks: Buffer[] = [];
          s.on('data', (c: Buffer) => chunks.push(c));
          s.on('error', reject);
          s.on('end', () => {
            out.set(entry.fileName, Buffer.concat(chunks));
            zf.readEntry();
          });
        });
      });
      zf.readEntry();
    });
  });
}

/** X-Amz-Date + X-Amz-Expires of a pre-signed URL: when it stops working. */
export function presignedUntil(url: string): Date {
  const q = new URL(url).searchParams;
  const d = q.get('X-Amz-Date')!; // 20240501T100000Z
  const start = Date.UTC(+d.slice(0, 4), +d.slice(4, 6) - 1, +d.slice(6, 8), +d.slice(9, 11), +d.slice(11, 13), +d.slice(13, 15));
  return new Date(start + Number(q.get('X-Amz-Expires')) * 1000);
}

/** As a recipient: resolves a Link and downloads every file of its Package, keyed by path/name. */
export async function downloadAll(svc: TestService, link: { id: string; secret: string }, password?: string): Promise<Map<string, Buffer>> {
  const r = await call(svc.url, 'GET', `/v1/links/${link.id}?secret=${encodeURIComponent(link.secret)}`, {
    headers: password ? { 'x-link-password': password } : {},
  });
  expect(r.status, JSON.stringify(r.body)).toBe(200);
  const h = { 'x-package-token': r.body.package_token };
  const files = await call(svc.url, 'GET', `/v1/packages/${r.body.package_id}/files`, { headers: h });
  const out = new Map<string, Buffer>();
  for (const f of files.body) {
    if (f.kind !== 'file') continue;
    const dl = await call(svc.url, 'GET', `/v1/packages/${r.body.package_id}/files/${f.id}/download`, { headers: h });
    const got = await fetchBytes(dl.body.url);
    expect(got.status).toBe(200);
    out.set(f.path ? `${f.path}/${f.name}` : f.name, got.data);
  }
  return out;
}
