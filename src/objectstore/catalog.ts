// In-memory index of buckets and keys, rebuilt from the manifests at start.
// Listing then needs no directory walk (manifests are named by key hash, so
// the file system cannot give key order anyway). The loader also removes what
// a crash can leave behind: data directories no manifest points to.

import { mkdir, readdir, readFile, stat } from 'node:fs/promises';
import { eachLimit } from '../threads/eachLimit.js';
import { join } from 'node:path';
import type { Logger } from 'pino';
import { isNotFound, s3err } from './errors.js';
import { isId, readJson, removeQuietly, writeJsonAtomic, type Layout, type Manifest } from './disk.js';

export interface Entry {
  size: number;
  etag: string;
  lastModified: string;
  /** Data directory id of the current version (what a replace or delete must drop). */
  data: string;
}

/** Order of UTF-8 bytes (what S3 lists by), computed on UTF-16 strings without encoding them. */
export function compareKeys(a: string, b: string): number {
  const n = Math.min(a.length, b.length);
  for (let i = 0; i < n; i++) {
    let x = a.charCodeAt(i);
    let y = b.charCodeAt(i);
    if (x === y) continue;
    // Surrogates encode code points above U+FFFF, which sort after U+E000..U+FFFF in UTF-8.
    if (x >= 0xd800) x += x >= 0xe000 ? -0x800 : 0x2000;
    if (y >= 0xd800) y += y >= 0xe000 ? -0x800 : 0x2000;
    return x - y;
  }
  return a.length - b.length;
}

export class BucketIndex {
  readonly entries = new Map<string, Entry>();
  private sorted: string[] | undefined;

  constructor(readonly created: string) {}

  set(key: string, entry: Entry): void {
    if (!this.entries.has(key)) this.sorted = undefined;
    this.entries.set(key, entry);
  }
  delete(key: string): void {
    if (this.entries.delete(key)) this.sorted = undefined;
  }
  /** Keys in S3 order; cached until the key set changes. */
  keys(): string[] {
    this.sorted ??= [...this.entries.keys()].sort(compareKeys);
    return this.sorted;
  }
}

const BUCKET_RE = /^[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]$/;

export function validBucketName(name: string): boolean {
  return BUCKET_RE.test(name) && !name.includes('..') && !/^\d+\.\d+\.\d+\.\d+$/.test(name);
}

async function listDir(path: string): Promise<string[]> {
  try {
    return await readdir(path);
  } catch (err) {
    if (isNotFound(err)) return [];
    throw err;
  }
}

export class Catalog {
  private readonly buckets = new Map<string, BucketIndex>();

  constructor(
    private readonly layout: Layout,
    private readonly logger?: Logger,
  ) {}

  async load(): Promise<void> {
    await mkdir(this.layout.buckets, { recursive: true });
    for (const name of await listDir(this.layout.buckets)) {
      if (validBucketName(name)) this.buckets.set(name, await this.loadBucket(name));
    }
  }

  private async loadBucket(name: string): Promise<BucketIndex> {
    const meta = readJson<{ created: string }>(join(this.layout.bucket(name), 'bucket.json'));
    const created = meta?.created ?? (await stat(this.layout.bucket(name))).mtime.toISOString();
    const index = new BucketIndex(created);
    const referenced = new Set<string>();
    const objects = this.layout.objects(name);
    const files: string[] = [];
    for (const fan of await listDir(objects)) {
      for (const f of await listDir(join(objects, fan))) if (f.endsWith('.json')) files.push(join(objects, fan, f));
    }
    // Read in parallel, not with the synchronous hot-path calls: at start, a cold disk holds them.
    await eachLimit(files, 32, async (file) => {
      const m = await readFile(file, 'utf8').then((text) => JSON.parse(text) as Manifest).catch(() => undefined);
      if (!m || typeof m.key !== 'string') return;
      index.set(m.key, { size: m.size, etag: m.etag, lastModified: m.lastModified, data: m.data });
      referenced.add(m.data);
    });
    // Orphans: an upload completed or a put committed right before a crash, or an old version whose removal was cut short.
    for (const id of await listDir(this.layout.dataRoot(name))) {
      if (isId(id) && !referenced.has(id)) {
        this.logger?.info({ bucket: name, id }, 'objectstore: removing unreferenced data');
        await removeQuietly(this.layout.data(name, id));
      }
    }
    return index;
  }

  names(): string[] {
    return [...this.buckets.keys()].sort();
  }

  get(bucket: string): BucketIndex {
    const index = this.buckets.get(bucket);
    if (!index) throw s3err('NoSuchBucket');
    return index;
  }

  has(bucket: string): boolean {
    return this.buckets.has(bucket);
  }

  async create(bucket: string): Promise<void> {
    if (!validBucketName(bucket)) throw s3err('InvalidBucketName', 'The specified bucket is not valid.');
    if (this.buckets.has(bucket)) return;
    const created = new Date().toISOString();
    for (const dir of [this.layout.objects(bucket), this.layout.dataRoot(bucket), this.layout.uploads(bucket)]) {
      await mkdir(dir, { recursive: true });
    }
    writeJsonAtomic(this.layout, join(this.layout.bucket(bucket), 'bucket.json'), { created });
    if (!this.buckets.has(bucket)) this.buckets.set(bucket, new BucketIndex(created));
  }

  async remove(bucket: string): Promise<void> {
    const index = this.get(bucket);
    if (index.entries.size > 0 || (await listDir(this.layout.uploads(bucket))).length > 0) {
      throw s3err('BucketNotEmpty', 'The bucket you tried to delete is not empty');
    }
    this.buckets.delete(bucket);
    await removeQuietly(this.layout.bucket(bucket));
  }
}
