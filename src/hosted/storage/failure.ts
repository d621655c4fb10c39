// What a storage call failed with, whichever way it was made: the AWS SDK
// (external stores) names the S3 error code and HTTP status one way, the
// embedded store's in-process calls another.
import { S3Error } from '../../objectstore/index.js';

export interface StorageFailure {
  /** The S3 error code, e.g. NoSuchUpload. */
  code?: string;
  /** The HTTP status S3 answers it with; undefined when no store answered (a network error). */
  status?: number;
}

export function storageFailure(err: unknown): StorageFailure {
  if (err instanceof S3Error) return { code: err.code, status: err.status };
  const e = err as { name?: string; Code?: string; $metadata?: { httpStatusCode?: number } } | undefined;
  return { code: e?.Code ?? e?.name, status: e?.$metadata?.httpStatusCode };
}

export function isMissingUpload(err: unknown): boolean {
  const f = storageFailure(err);
  return f.code === 'NoSuchUpload' || f.status === 404;
}
