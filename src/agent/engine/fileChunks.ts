// A file range read as a request body through a small ring of reused buffers.
// fs.createReadStream allocates a fresh buffer per read: external memory that V8
// only reclaims with full mark-compacts, which at upload speeds meant ~35 major
// GCs per GiB and about a fifth of the agent's CPU (docs/benchmarks.md).
//
// Reuse is safe because the consumer (undici writing to a socket) pulls the next
// chunk only once the socket has taken the previous one: it awaits 'drain' when
// write() returns false, and write() returns true only while the socket holds
// less than its high-water mark (16 KiB), far under one chunk. So when chunk n+1 is
// read, at most the tail of chunk n is still queued and the buffer of chunk n-2
// is free. Should a consumer ever break that rule, the part's bytes would not
// match the MD5 its hasher took of each chunk before the buffer was reused, and
// the store's ETag would say so (partUpload.ts).
import { open } from 'node:fs/promises';

/** Bytes read at a time; a part in flight holds RING of them. */
export const READ_CHUNK = 1024 * 1024;
/** Buffers per range: chunk n is overwritten when chunk n + RING is read. */
export const RING = 3;

export class FileShrankError extends Error {}

/**
 * Yields `length` bytes of `file` from `start`, each chunk passed to `onChunk`
 * before it is yielded. A chunk's bytes stay in place until chunk n + RING is
 * read, which is when the consumer asks for it.
 */
export async function* fileChunks(file: string, start: number, length: number, onChunk: (chunk: Buffer) => void): AsyncGenerator<Buffer> {
  const size = Math.max(1, Math.min(READ_CHUNK, length));
  const ring = Buffer.allocUnsafeSlow(size * RING);
  const fh = await open(file, 'r');
  try {
    let pos = start;
    for (let n = 0; pos < start + length; n++) {
      const slot = (n % RING) * size;
      const want = Math.min(size, start + length - pos);
      const { bytesRead } = await fh.read(ring, slot, want, pos);
      if (bytesRead === 0) throw new FileShrankError(`${file} ended at ${pos}, before ${start + length}`);
      const chunk = ring.subarray(slot, slot + bytesRead);
      pos += bytesRead;
      onChunk(chunk);
      yield chunk;
    }
  } finally {
    await fh.close();
  }
}
