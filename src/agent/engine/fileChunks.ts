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
import type { DiskGate } from './diskGate.js';

/** Bytes read at a time; a part in flight holds RING of them. */
export const READ_CHUNK = 1024 * 1024;
/** Buffers per range: chunk n is overwritten when chunk n + RING is read. */
export const RING = 3;

export class FileShrankError extends Error {}

const FULL_RING = READ_CHUNK * RING;
/** Full rings of parts that ended, for the next parts; dropped when no part is under way. */
const spare: Buffer[] = [];
let inUse = 0;

/**
 * A ring for a range of `length` bytes. Full rings are used again rather than
 * allocated per part: a 3 MiB allocation per part soon comes from glibc's heap
 * (its threshold for mapping large blocks rises as they are freed), which
 * fragments and kept the agent's peak RSS 10-40 MiB higher in a 4 GiB upload.
 * Give it back with releaseRing once nothing reads its bytes any more.
 */
export function takeRing(length: number): Buffer {
  inUse++;
  const size = Math.max(1, Math.min(READ_CHUNK, length));
  return (size === READ_CHUNK && spare.pop()) || Buffer.allocUnsafeSlow(size * RING);
}

export function releaseRing(ring: Buffer): void {
  inUse--;
  if (ring.length === FULL_RING && inUse > 0) spare.push(ring);
  else if (inUse === 0) spare.length = 0;
}

/**
 * Yields `length` bytes of `file` from `start` through `ring` (takeRing), each
 * chunk passed to `onChunk` before it is yielded. A chunk's bytes stay in place
 * until chunk n + RING is read, which is when the consumer asks for it. Each
 * read takes a reader slot of `gate` (the file's disk) for that read alone.
 */
export async function* fileChunks(file: string, start: number, length: number, ring: Buffer, onChunk: (chunk: Buffer) => void, gate?: DiskGate): AsyncGenerator<Buffer> {
  const size = ring.length / RING;
  const fh = await open(file, 'r');
  try {
    let pos = start;
    for (let n = 0; pos < start + length; n++) {
      const slot = (n % RING) * size;
      const want = Math.min(size, start + length - pos);
      const { bytesRead } = await (gate ? gate.run('read', () => fh.read(ring, slot, want, pos)) : fh.read(ring, slot, want, pos));
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
