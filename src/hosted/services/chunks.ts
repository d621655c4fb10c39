// The S3 multipart limits, and the chunk size a file actually uploads with.
export const MiB = 1024 * 1024;

export const CHUNK_LIMITS = {
  max_chunk_count: 10_000,
  max_chunk_size: 5 * 1024 * MiB,
  min_chunk_size: 5 * MiB,
} as const;

export const DEFAULT_CHUNK_SIZE = 100 * MiB;

/**
 * The requested chunk size (or the default) clamped to the limits, raised when the
 * file would otherwise need more than max_chunk_count parts.
 */
export function effectiveChunkSize(requested: number | undefined, fileSize: number | undefined): number {
  let size = requested && requested > 0 ? requested : DEFAULT_CHUNK_SIZE;
  size = Math.min(Math.max(size, CHUNK_LIMITS.min_chunk_size), CHUNK_LIMITS.max_chunk_size);
  if (fileSize && Math.ceil(fileSize / size) > CHUNK_LIMITS.max_chunk_count) {
    size = Math.ceil(fileSize / CHUNK_LIMITS.max_chunk_count / MiB) * MiB;
  }
  return size;
}

export const partCount = (fileSize: number, chunkSize: number) => Math.max(1, Math.ceil(fileSize / chunkSize));

/** Bytes of part `n` (1-based) of an object of `size` in parts of `partSize`: partSize, the last one the remainder. */
export const partLength = (size: number, partSize: number, n: number) => Math.max(0, Math.min(partSize, size - (n - 1) * partSize));
