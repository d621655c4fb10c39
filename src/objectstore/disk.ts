// On-disk layout. Keys never become paths: an object's manifest lives at
// objects/<sha256(key)[0..2]>/<sha256(key)>.json and its bytes in a data
// directory named by a random id, so no key (`../`, NUL, 2 KB of UTF-8) can
// reach outside dataDir or hit a file-name limit.
//
//   <dataDir>/.incoming/<id>                      bodies being received (renamed when whole), data being deleted
//   <dataDir>/buckets/<bucket>/objects/ab/<hash>.json   manifest: key, size, etag, headers, parts
//   <dataDir>/buckets/<bucket>/data/<id>/...       immutable part files of one object version
//   <dataDir>/buckets/<bucket>/uploads/<uploadId>/upload.json + <NNNNN>.<md5hex>
//
// A completed multipart upload's directory is renamed into data/, so its part
// files are served in place: completing never copies bytes; its upload.json
// becomes the manifest. A small object so costs three new inodes (directory,
// upload.json, part), as a PutObject does: on ext4 each costs a search of the
// inode bitmap, which grows long after many deletions.
//
// Metadata calls (mkdir, rename, stat, unlink, the small JSON files) are
// synchronous: they take a few microseconds on a local disk and the store has a
// thread of its own (thread.ts), while a trip through libuv's thread pool costs
// 25-140 µs of CPU on a 2-core VM (wakeups on both sides). A small object takes
// some 16 of them. Bodies and deletions of whole directories stay asynchronous.

import { createHash, randomBytes } from 'node:crypto';
import { mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { rm } from 'node:fs/promises';
import { join } from 'node:path';
import { isNotFound } from './errors.js';

export interface PartRef {
  /** Part number (1 for a plain PutObject). */
  n: number;
  /** File path relative to the object's data directory. */
  file: string;
  size: number;
  /** Hex MD5 of the part's bytes. */
  md5: string;
}

export interface Manifest {
  v: 1;
  key: string;
  size: number;
  /** Quoted ETag as S3 answers it: "<md5>" or "<md5-of-md5s>-N". */
  etag: string;
  lastModified: string;
  /** Content-Type, Content-Disposition, Cache-Control, ... as stored with the object. */
  headers: Record<string, string>;
  /** x-amz-meta-* (lower-case names, without the prefix). */
  meta: Record<string, string>;
  /** Directory id under data/. */
  data: string;
  parts: PartRef[];
}

export interface UploadInfo {
  v: 1;
  key: string;
  initiated: string;
  headers: Record<string, string>;
  meta: Record<string, string>;
}

const ID_RE = /^[0-9a-f]{32}$/;
let idPool = Buffer.alloc(0);
let idAt = 0;
/** 32 random hex digits; random bytes are drawn 4 KiB at a time (three ids per small object). */
export function newId(): string {
  if (idAt === idPool.length) {
    idPool = randomBytes(4096);
    idAt = 0;
  }
  idAt += 16;
  return idPool.toString('hex', idAt - 16, idAt);
}
export const isId = (s: string): boolean => ID_RE.test(s);
export const keyHash = (key: string): string => createHash('sha256').update(key, 'utf8').digest('hex');
export const paddedPart = (n: number): string => String(n).padStart(5, '0');
/** A part's file: its number and, so that a stat checks its ETag, the hex MD5 of its bytes. */
export const partFileName = (n: number, md5hex: string): string => `${paddedPart(n)}.${md5hex}`;

export class Layout {
  readonly buckets: string;
  readonly incoming: string;

  constructor(readonly root: string) {
    this.buckets = join(root, 'buckets');
    this.incoming = join(root, '.incoming');
  }

  bucket(bucket: string): string {
    return join(this.buckets, bucket);
  }
  objects(bucket: string): string {
    return join(this.buckets, bucket, 'objects');
  }
  manifest(bucket: string, key: string): string {
    const h = keyHash(key);
    return join(this.buckets, bucket, 'objects', h.slice(0, 2), `${h}.json`);
  }
  dataRoot(bucket: string): string {
    return join(this.buckets, bucket, 'data');
  }
  data(bucket: string, id: string): string {
    return join(this.buckets, bucket, 'data', id);
  }
  uploads(bucket: string): string {
    return join(this.buckets, bucket, 'uploads');
  }
  upload(bucket: string, uploadId: string): string {
    return join(this.buckets, bucket, 'uploads', uploadId);
  }
  tempFile(): string {
    return join(this.incoming, newId());
  }
}

export function readJson<T>(path: string): T | undefined {
  try {
    return JSON.parse(readFileSync(path, 'utf8')) as T;
  } catch (err) {
    if (isNotFound(err)) return undefined;
    throw err;
  }
}

/**
 * Write to a temp name then rename, so readers see the old or the new file, never
 * half of one. `tmp` may be a file nobody reads any more: it is overwritten, and
 * its inode reused.
 */
export function writeJsonAtomic(layout: Layout, path: string, value: unknown, tmp = layout.tempFile()): void {
  writeFileSync(tmp, JSON.stringify(value));
  try {
    renameSync(tmp, path);
  } catch (err) {
    if (!isNotFound(err)) throw err;
    mkdirSync(join(path, '..'), { recursive: true });
    renameSync(tmp, path);
  }
}

export function readManifest(layout: Layout, bucket: string, key: string): Manifest | undefined {
  const m = readJson<Manifest>(layout.manifest(bucket, key));
  // A sha256 collision is not a realistic threat, but never serve another key's bytes.
  return m && m.key === key ? m : undefined;
}

export async function removeQuietly(path: string): Promise<void> {
  await rm(path, { recursive: true, force: true }).catch(() => undefined);
}

/**
 * Serialises async critical sections per key (in this process). Used for the
 * short commit steps only (rename + manifest swap), never while bytes stream.
 */
export class KeyedLock {
  private readonly tails = new Map<string, Promise<unknown>>();

  async run<T>(key: string, fn: () => Promise<T>): Promise<T> {
    const prev = this.tails.get(key) ?? Promise.resolve();
    const result = prev.then(fn, fn);
    const tail = result.catch(() => undefined);
    this.tails.set(key, tail);
    try {
      return await result;
    } finally {
      if (this.tails.get(key) === tail) this.tails.delete(key);
    }
  }
}
