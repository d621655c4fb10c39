// With the embedded store, the per-file control calls (start, list parts,
// complete, abort, an object's size and ETag) go in-process instead of over S3
// HTTP (see objectstore/local.ts), and a file's finalize checks and completes in
// one pass (completeSized); blueprints, download URLs and everything else stay
// plain S3, so clients see no difference between the embedded store and an
// external one.
import type { LocalStore } from '../../objectstore/index.js';
import type { Storage } from './s3.js';

export function withEmbeddedStore(storage: Storage, local: LocalStore): Storage {
  const bucket = storage.bucket;
  return {
    ...storage,
    createUpload: (key) => local.createUpload(bucket, key),
    listParts: (key, uploadId) => local.listParts(bucket, key, uploadId),
    uploadExists: (key, uploadId) => local.uploadExists(bucket, key, uploadId),
    completeUpload: (key, uploadId, parts) => local.completeUpload(bucket, key, uploadId, parts),
    completeSized: (key, uploadId, parts, size) => local.completeUpload(bucket, key, uploadId, parts, size),
    abortUpload: (key, uploadId) => local.abortUpload(bucket, key, uploadId),
    objectInfo: (key) => local.objectInfo(bucket, key),
  };
}
