// The store's control calls for the service that embeds it, made in-process:
// starting, listing parts, completing and aborting, or looking up an object put
// in one request, happen once or twice for every file, and over HTTP each would
// cost a request, a SigV4 check, XML both ways and the SDK's middleware on the
// service side. Failures are the same S3Error (code and status) an HTTP client
// would have been answered with.
import { abort, complete, isOpen, openUpload, partsOf } from './multipart.js';
import type { StoreContext } from './store.js';

export interface LocalPart { partNumber: number; etag: string; size: number }

export interface LocalStore {
  /** Starts a multipart upload of `key` (no stored headers); resolves its id. */
  createUpload(bucket: string, key: string): Promise<string>;
  listParts(bucket: string, key: string, uploadId: string): Promise<LocalPart[]>;
  /** Whether `uploadId` is an open upload of `key` (its record is cached: no part is looked at). */
  uploadExists(bucket: string, key: string, uploadId: string): Promise<boolean>;
  /** With `size`, parts that add up to another size are refused (InvalidPart) in the same pass. */
  completeUpload(bucket: string, key: string, uploadId: string, parts: { partNumber: number; etag: string }[], size?: number): Promise<void>;
  abortUpload(bucket: string, key: string, uploadId: string): Promise<void>;
  /** The current object's size and ETag (quoted), from the bucket's index; null when there is none. */
  objectInfo(bucket: string, key: string): Promise<{ size: number; etag: string } | null>;
}

export function localStore(ctx: StoreContext): LocalStore {
  return {
    createUpload: async (bucket, key) => openUpload(ctx, bucket, key, { headers: {}, meta: {} }),
    async listParts(bucket, key, uploadId) {
      return (await partsOf(ctx, bucket, key, uploadId)).map((p) => ({ partNumber: p.n, etag: `"${p.md5}"`, size: p.size }));
    },
    uploadExists: (bucket, key, uploadId) => isOpen(ctx, bucket, key, uploadId),
    async completeUpload(bucket, key, uploadId, parts, size) {
      await complete(ctx, bucket, key, uploadId, parts, size);
    },
    abortUpload: (bucket, key, uploadId) => abort(ctx, bucket, key, uploadId),
    async objectInfo(bucket, key) {
      const e = ctx.catalog.get(bucket).entries.get(key);
      return e ? { size: e.size, etag: e.etag } : null;
    },
  };
}
