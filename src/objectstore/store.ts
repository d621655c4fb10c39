// What every handler shares, and the two ways an object version changes:
// commit (manifest swap) and removal. Both run under a per-key lock so two
// racing writers cannot both believe they replaced the same old version.
// Readers pin the version they stream, so replacing or deleting an object
// never cuts a download of the old bytes short.

import { renameSync, unlinkSync } from 'node:fs';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Logger } from 'pino';
import type { Catalog } from './catalog.js';
import { readManifest, removeQuietly, writeJsonAtomic, type KeyedLock, type Layout, type Manifest, type UploadInfo } from './disk.js';
import { isNotFound } from './errors.js';
import type { AuthContext } from './sigv4.js';

/** What the store keeps in memory of an open multipart upload. */
export interface OpenRecord {
  info: UploadInfo;
  /** Part number -> hex MD5 of the file this process last stored for it. */
  parts: Map<number, string>;
  /** Part number -> size of that file: what a part-stored report sums. */
  sizes: Map<number, number>;
  /** The sum of `sizes`. */
  bytes: number;
}

/** A part stored into an open upload, as reported to the embedding service (onPartStored). */
export interface PartStored {
  bucket: string;
  key: string;
  uploadId: string;
  partNumber: number;
  /** The upload's parts and their bytes, this one included. */
  parts: number;
  bytes: number;
}

export interface StoreContext {
  layout: Layout;
  catalog: Catalog;
  locks: KeyedLock;
  region: string;
  logger: Logger | undefined;
  /** Deletions still running after their request was answered; close() waits for them. */
  background: Set<Promise<void>>;
  /**
   * Open uploads by `${bucket}/${uploadId}`: upload.json read once, not on every part.
   * A record is read from disk and changed only under its upload's lock (multipart.ts).
   */
  uploads: Map<string, OpenRecord>;
  /** Data directories being read -> number of readers; dropping them waits for zero. */
  readers: Map<string, number>;
  /** Data directories dropped while read: discarded when their last reader leaves. */
  doomed: Set<string>;
  /** Told of every part stored, after its answer is decided (the service's upload progress). */
  onPartStored?: ((p: PartStored) => void) | undefined;
}

/** One parsed, authenticated request. */
export interface S3Request {
  req: IncomingMessage;
  res: ServerResponse;
  bucket: string;
  key: string;
  query: Map<string, string>;
  auth: AuthContext;
}

const lockId = (bucket: string, key: string): string => `${bucket}\u0000${key}`;

/**
 * Removes a directory of object data: an O(1) rename out of the bucket now,
 * the (possibly 50 GB) unlink after the answer. A crash in between leaves it
 * in .incoming, which is emptied at start. False if `path` did not exist.
 */
export async function discard(ctx: StoreContext, path: string): Promise<boolean> {
  if (ctx.readers.has(path)) {
    ctx.doomed.add(path);
    return true;
  }
  const trash = ctx.layout.tempFile();
  try {
    renameSync(path, trash);
  } catch (err) {
    if (isNotFound(err)) return false;
    throw err;
  }
  const done = removeQuietly(trash).finally(() => ctx.background.delete(done));
  ctx.background.add(done);
  return true;
}

/**
 * Pins the current version of `key` for reading: resolves its manifest with a
 * release function, or undefined if the key does not exist. A version that is
 * replaced meanwhile stays on disk until released.
 */
export async function pinCurrent(
  ctx: StoreContext,
  bucket: string,
  key: string,
): Promise<{ manifest: Manifest; release: () => void } | undefined> {
  const index = ctx.catalog.get(bucket);
  for (let attempt = 0; attempt < 10; attempt++) {
    const manifest = readManifest(ctx.layout, bucket, key);
    if (!manifest) return undefined;
    // No await between the check and the pin: a commit either ran before (we retry) or finds us pinned.
    if (index.entries.get(key)?.data !== manifest.data) continue;
    const dir = ctx.layout.data(bucket, manifest.data);
    ctx.readers.set(dir, (ctx.readers.get(dir) ?? 0) + 1);
    let released = false;
    const release = (): void => {
      if (released) return;
      released = true;
      const left = (ctx.readers.get(dir) ?? 1) - 1;
      if (left > 0) return void ctx.readers.set(dir, left);
      ctx.readers.delete(dir);
      if (ctx.doomed.delete(dir)) {
        discard(ctx, dir).catch((err: unknown) => ctx.logger?.warn({ err, dir }, 'objectstore: could not drop old data'));
      }
    };
    return { manifest, release };
  }
  throw new Error(`objectstore: manifest of ${bucket}/${key} keeps disagreeing with the index`);
}

/**
 * Makes `manifest` the current version of its key and drops the version it
 * replaces. `tmp`: a file of no further use to write the manifest into before
 * it is renamed into place (see writeJsonAtomic).
 */
export async function commitObject(ctx: StoreContext, bucket: string, manifest: Manifest, tmp?: string): Promise<void> {
  const index = ctx.catalog.get(bucket);
  await ctx.locks.run(lockId(bucket, manifest.key), async () => {
    // The index is authoritative (loaded at start, changed only under this lock): no manifest read needed.
    const old = index.entries.get(manifest.key);
    writeJsonAtomic(ctx.layout, ctx.layout.manifest(bucket, manifest.key), manifest, tmp);
    index.set(manifest.key, { size: manifest.size, etag: manifest.etag, lastModified: manifest.lastModified, data: manifest.data });
    if (old && old.data !== manifest.data) await discard(ctx, ctx.layout.data(bucket, old.data));
  });
}

/** Deletes a key's manifest and data. Missing keys are fine (S3 answers 204 either way). */
export async function removeObject(ctx: StoreContext, bucket: string, key: string): Promise<void> {
  const index = ctx.catalog.get(bucket);
  await ctx.locks.run(lockId(bucket, key), async () => {
    const old = index.entries.get(key);
    if (!old) return;
    try {
      unlinkSync(ctx.layout.manifest(bucket, key));
    } catch (err) {
      if (!isNotFound(err)) throw err;
    }
    index.delete(key);
    await discard(ctx, ctx.layout.data(bucket, old.data));
  });
}
