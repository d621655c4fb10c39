import { createHash, randomBytes } from 'node:crypto';
import { mkdtemp, readdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FileShrankError, fileChunks, READ_CHUNK } from '../../../src/agent/engine/fileChunks.js';

const openFds = async (): Promise<number> => (await readdir('/proc/self/fd')).length;

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
    for await (const chunk of fileChunks(file, start, length, (c) => seen.update(c))) {
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
    for await (const chunk of fileChunks(file, 0, data.length, () => undefined)) {
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
    for await (const chunk of fileChunks(file, 5, 10, () => undefined)) {
      rings.add(chunk.buffer.byteLength);
      small.push(Buffer.from(chunk));
    }
    expect(Buffer.concat(small)).toEqual(data.subarray(5, 15));
    // Three slots of the range's own size, not of READ_CHUNK.
    expect([...rings]).toEqual([30]);
    let any = false;
    for await (const _ of fileChunks(file, 0, 0, () => undefined)) any = true;
    expect(any).toBe(false);
  });

  it('closes the file when the consumer stops early', async () => {
    const before = await openFds();
    const chunks = fileChunks(file, 0, data.length, () => undefined);
    await chunks.next();
    expect(await openFds()).toBe(before + 1);
    await chunks.return(undefined);
    expect(await openFds()).toBe(before);
  });

  it('fails, and closes the file, when the file is shorter than the range', async () => {
    const before = await openFds();
    const read = async (): Promise<void> => {
      for await (const _ of fileChunks(file, data.length - 10, 20, () => undefined)) { /* drain */ }
    };
    await expect(read()).rejects.toBeInstanceOf(FileShrankError);
    expect(await openFds()).toBe(before);
  });
});
