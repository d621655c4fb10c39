import { createHash, randomBytes } from 'node:crypto';
import { appendFile, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { md5Lanes } from '../../src/hash/md5Lanes.js';
import { md5Pool } from '../../src/hash/md5Workers.js';

const MiB = 1 << 20;
const md5 = (b: Buffer) => createHash('md5').update(b).digest();

// Both ways of hashing: a round's slices together in SIMD lanes, and node:crypto one job at a time.
describe.each([
  { mode: 'lanes', lanes: true },
  { mode: 'node:crypto', lanes: false },
])('md5Workers ($mode)', ({ lanes }) => {
  const pool = md5Pool(lanes);
  const startMd5 = (path: string, start?: number) => pool.start(path, start);
  let dir: string;
  let file: string;
  // Larger than the worker's 1 MiB read slice, so ranges take several slices.
  const data = randomBytes(9 * MiB + 17);

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'md5w-'));
    file = join(dir, 'data.bin');
    await writeFile(file, data);
  });
  afterAll(() => rm(dir, { recursive: true, force: true }));

  test('hashes the byte range [start, start + length) of a written file', async () => {
    const start = 1_234_567;
    const length = 6 * MiB + 3;
    const got = await startMd5(file, start).finish(length);
    expect(got.equals(md5(data.subarray(start, start + length)))).toBe(true);
  });

  test('without a start, hashes from the beginning of the file', async () => {
    const got = await startMd5(file).finish(data.length);
    expect(got.equals(md5(data))).toBe(true);
  });

  test('hashes a file as it grows, up to the size given to finish', async () => {
    const growing = join(dir, 'growing.bin');
    await writeFile(growing, Buffer.alloc(0));
    const job = startMd5(growing);
    const pieces = [randomBytes(3 * MiB), randomBytes(5 * MiB + 1), randomBytes(11)];
    let size = 0;
    for (const p of pieces) {
      await appendFile(growing, p);
      size += p.length;
      job.grow(size);
    }
    const got = await job.finish(size);
    expect(got.equals(md5(Buffer.concat(pieces)))).toBe(true);
  });

  test('an empty range has the MD5 of no bytes', async () => {
    const got = await startMd5(file, 100).finish(0);
    expect(got.equals(md5(Buffer.alloc(0)))).toBe(true);
  });

  test('many ranges hashed at once each get their own MD5', async () => {
    // More ranges than AVX-512 has lanes: lanes that finish take the next range.
    const ranges = Array.from({ length: 20 }, (_, i) => ({ start: i * 400_001, length: MiB / 2 + i * 30_001 }));
    const got = await Promise.all(ranges.map((r) => startMd5(file, r.start).finish(r.length)));
    got.forEach((g, i) => {
      const r = ranges[i]!;
      expect(g.equals(md5(data.subarray(r.start, r.start + r.length)))).toBe(true);
    });
  });

  test('a cancelled job rejects instead of resolving', async () => {
    const job = startMd5(file);
    job.grow(MiB);
    job.cancel();
    await expect(job.finish(data.length)).rejects.toThrow(/cancelled/);
  });

  test('a range past the end of the file rejects', async () => {
    await expect(startMd5(file, data.length - 10).finish(20)).rejects.toThrow(/shorter/);
  });

  test('fed buffers are hashed in order, and each comes back whole', async () => {
    const back: Buffer[] = [];
    const job = pool.startFed((b) => back.push(b));
    const pieces = [MiB, MiB, 5, 0, MiB - 3].map((n) => randomBytes(n));
    const sent = pieces.map((p) => {
      // A view into a larger buffer of its own, as the store's aligned buffers are.
      const buf = Buffer.allocUnsafeSlow(MiB + 100).subarray(7, 7 + MiB);
      p.copy(buf);
      job.feed(buf, p.length);
      expect(buf.buffer.byteLength).toBe(0); // moved, not copied
      return buf;
    });
    const got = await job.finish();
    expect(got.equals(md5(Buffer.concat(pieces)))).toBe(true);
    expect(back.map((b) => [b.byteOffset, b.length])).toEqual(sent.map(() => [7, MiB]));
    // The same bytes came back: the first piece is still at the start of the first buffer.
    expect(back[0]!.subarray(0, MiB).equals(pieces[0]!)).toBe(true);
  });

  test('fed jobs hashed together each get their own MD5', async () => {
    const bodies = Array.from({ length: 10 }, (_, i) => randomBytes(2 * MiB + i * 1001));
    const got = await Promise.all(bodies.map((b) => {
      const job = pool.startFed(() => undefined);
      for (let at = 0; at < b.length; at += MiB) {
        const buf = Buffer.allocUnsafeSlow(MiB);
        const n = b.copy(buf, 0, at, at + MiB);
        job.feed(buf, n);
      }
      return job.finish();
    }));
    got.forEach((g, i) => expect(g.equals(md5(bodies[i]!))).toBe(true));
  });

  test('a cancelled fed job rejects', async () => {
    const job = pool.startFed(() => undefined);
    job.feed(Buffer.allocUnsafeSlow(MiB), MiB);
    job.cancel();
    await expect(job.finish()).rejects.toThrow(/cancelled/);
  });

  test('a missing file rejects', async () => {
    await expect(startMd5(join(dir, 'missing.bin')).finish(1)).rejects.toThrow(/ENOENT/);
  });
});
