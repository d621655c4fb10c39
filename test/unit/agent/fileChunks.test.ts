import { createHash, randomBytes } from 'node:crypto';
import { mkdtemp, readdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FileShrankError, fileChunks, READ_CHUNK, RING, releaseRing, takeRing } from '../../../src/agent/engine/fileChunks.js';

const openFds = async (): Promise<number> => (await readdir('/proc/self/fd')).length;

/** fileChunks with a ring taken for the range and given back at the end, as objectHttp.ts does. */
async function* chunksOf(file: string, start: number, length: number, onChunk: (c: Buffer) => void = () => undefined): AsyncGenerator<Buffer> {
  const ring = takeRing(length);
  try {
    yield* fileChunks(file, start, length, ring, onChunk);
  } finally {
    releaseRing(ring);
  }
}

describe('fileChunks', () => {
  let dir: string;
  let file: string;
  const data = randomBytes(READ_CHUNK * 5 + 12345);

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'ferry-chunks-'));
    file = join(dir, 'data.bin');
    await writeFile(file, data);
  });
  afterAll(() => rm(dir, { recursive: true, force: true }));

  it('yields exactly the bytes of an unaligned range, each seen by onChunk before it is yielded', async () => {
    const start = 1000;
    const length = READ_CHUNK * 4 + 777;
    const seen = createHash('md5');
    const got = createHash('md5');
    let total = 0;
    for await (const chunk of chunksOf(file, start, length, (c) => seen.update(c))) {
      got.update(chunk); // hashed at once: a buffer is reused RING chunks later
      total += chunk.length;
    }
    const want = createHash('md5').update(data.subarray(start, start + length)).digest('hex');
    expect(total).toBe(length);
    expect(got.digest('hex')).toBe(want);
    expect(seen.digest('hex')).toBe(want);
  });

  it('reads into three reused buffers instead of allocating one per read', async () => {
    const buffers = new Set<ArrayBuffer>();
    const offsets = new Set<number>();
    let chunks = 0;
    for await (const chunk of chunksOf(file, 0, data.length)) {
      buffers.add(chunk.buffer as ArrayBuffer);
      offsets.add(chunk.byteOffset);
      chunks++;
    }
    expect(chunks).toBe(6);
    expect(buffers.size).toBe(1);
    expect(offsets.size).toBe(3);
  });

  it('sizes its buffers to a small range and reads an empty one as nothing', async () => {
    const small: Buffer[] = [];
    const rings = new Set<number>();
    for await (const chunk of chunksOf(file, 5, 10)) {
      rings.add(chunk.buffer.byteLength);
      small.push(Buffer.from(chunk));
    }
    expect(Buffer.concat(small)).toEqual(data.subarray(5, 15));
    // Three slots of the range's own size, not of READ_CHUNK.
    expect([...rings]).toEqual([30]);
    let any = false;
    for await (const _ of chunksOf(file, 0, 0)) any = true;
    expect(any).toBe(false);
  });

  it('gives a full ring back to the next part while parts are under way, and keeps none once no part is', () => {
    const a = takeRing(READ_CHUNK * 10);
    const b = takeRing(READ_CHUNK * 10);
    expect(a.length).toBe(READ_CHUNK * RING);
    releaseRing(a);
    const c = takeRing(READ_CHUNK * 2);
    expect(c).toBe(a);
    // A small range's ring is its own size, and is not kept.
    const small = takeRing(100);
    expect(small.length).toBe(300);
    releaseRing(small);
    const e = takeRing(READ_CHUNK);
    expect(e).not.toBe(small);
    releaseRing(b);
    releaseRing(c);
    releaseRing(e);
    // Nothing under way: the spare rings were dropped.
    const d = takeRing(READ_CHUNK * 10);
    expect([a, b].includes(d)).toBe(false);
    releaseRing(d);
  });

  it('closes the file when the consumer stops early', async () => {
    const before = await openFds();
    const chunks = chunksOf(file, 0, data.length);
    await chunks.next();
    expect(await openFds()).toBe(before + 1);
    await chunks.return(undefined);
    expect(await openFds()).toBe(before);
  });

  it('fails, and closes the file, when the file is shorter than the range', async () => {
    const before = await openFds();
    const read = async (): Promise<void> => {
      for await (const _ of chunksOf(file, data.length - 10, 20)) { /* drain */ }
    };
    await expect(read()).rejects.toBeInstanceOf(FileShrankError);
    expect(await openFds()).toBe(before);
  });
});
