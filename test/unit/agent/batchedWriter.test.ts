// How a range's received chunks reach the partial file: gathered into batches
// written at their offsets, a bounded number at once, going on after short writes.
import { mkdtemp, open, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, test } from 'vitest';
import { BatchedWriter, dropFront, type WriteAt } from '../../../src/agent/engine/batchedWriter.js';

let dir: string;
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'ferry-batch-'));
});
afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

const chunk = (n: number, fill: number) => Buffer.alloc(n, fill);

/** A positional write the test finishes by hand; it records what it was given. */
function heldWrites() {
  const calls: { bytes: number; at: number; finish(n?: number): void; fail(err: Error): void }[] = [];
  const writeAt: WriteAt = (bufs, at) =>
    new Promise<number>((resolve, reject) => {
      const bytes = bufs.reduce((a, b) => a + b.length, 0);
      calls.push({ bytes, at, finish: (n = bytes) => resolve(n), fail: reject });
    });
  return { calls, writeAt };
}

const ticks = () => new Promise((ok) => setImmediate(ok));

describe('BatchedWriter', () => {
  test('writes every byte at its offset in batches of at least the batch size, counting bytes once written', async () => {
    const fh = await open(join(dir, 'f'), 'w+');
    const sizes: number[] = [];
    let counted = 0;
    const w = new BatchedWriter(
      async (bufs, at) => {
        sizes.push(bufs.reduce((a, b) => a + b.length, 0));
        return (await fh.writev(bufs, at)).bytesWritten;
      },
      100,
      (n) => (counted += n),
      1000,
      2,
    );
    const chunks = Array.from({ length: 25 }, (_, i) => chunk(300, i));
    for (const c of chunks) if (!w.push(c)) await new Promise<void>((ok) => (w.onRoom = ok));
    await w.flush();
    await fh.close();
    const file = await readFile(join(dir, 'f'));
    expect(file.subarray(100).equals(Buffer.concat(chunks))).toBe(true);
    expect(counted).toBe(7500);
    // Each full batch is 4 chunks (1200 bytes); the rest goes out on flush.
    expect(sizes).toEqual([1200, 1200, 1200, 1200, 1200, 1200, 300]);
  });

  test('writes maxPending batches while the next one fills, and asks the source to wait once that one is full too', async () => {
    const { calls, writeAt } = heldWrites();
    let rooms = 0;
    const w = new BatchedWriter(writeAt, 0, () => {}, 10, 1);
    w.onRoom = () => rooms++;
    expect(w.push(chunk(10, 1))).toBe(true);
    expect(w.push(chunk(6, 2))).toBe(true);
    expect(w.push(chunk(4, 3))).toBe(false);
    expect(w.hasRoom).toBe(false);
    expect(calls.map((c) => [c.at, c.bytes])).toEqual([[0, 10]]);
    calls[0]!.finish();
    await ticks();
    // The waiting batch went out as the first write ended, and there is room again.
    expect(calls.map((c) => [c.at, c.bytes])).toEqual([
      [0, 10],
      [10, 10],
    ]);
    expect(rooms).toBe(1);
    expect(w.hasRoom).toBe(true);
    expect(w.push(chunk(5, 4))).toBe(true);
    const flushed = w.flush();
    await ticks();
    expect(calls).toHaveLength(2);
    calls[1]!.finish();
    await ticks();
    calls[2]!.finish();
    await flushed;
    expect(calls.map((c) => [c.at, c.bytes])).toEqual([
      [0, 10],
      [10, 10],
      [20, 5],
    ]);
  });

  test('goes on after a short write with the rest of the batch at the right offset', async () => {
    const fh = await open(join(dir, 'f'), 'w+');
    const starts: number[] = [];
    const w = new BatchedWriter(
      async (bufs, at) => {
        starts.push(at);
        // Takes at most 7 bytes per call, as a nearly full disk might.
        const first = Buffer.concat(bufs).subarray(0, 7);
        return (await fh.write(first, 0, first.length, at)).bytesWritten;
      },
      0,
      () => {},
      20,
      1,
    );
    w.push(Buffer.from('0123456789'));
    w.push(Buffer.from('abcdefghij'));
    await w.flush();
    await fh.close();
    expect((await readFile(join(dir, 'f'))).toString()).toBe('0123456789abcdefghij');
    expect(starts).toEqual([0, 7, 14]);
  });

  test('fails a write that takes no bytes instead of trying forever', async () => {
    const w = new BatchedWriter(async () => 0, 0, () => {}, 4, 1);
    w.push(chunk(4, 1));
    await expect(w.flush()).rejects.toThrow(/took none of 4 bytes/);
  });

  test('after a failed write, flush rejects with it, no bytes are counted for it and no batch is started', async () => {
    const { calls, writeAt } = heldWrites();
    let counted = 0;
    const w = new BatchedWriter(writeAt, 0, (n) => (counted += n), 4, 2);
    w.push(chunk(4, 1));
    calls[0]!.fail(new Error('disk full'));
    await ticks();
    expect(w.failure).toBeInstanceOf(Error);
    expect(w.hasRoom).toBe(false);
    expect(w.push(chunk(4, 2))).toBe(false);
    await expect(w.flush()).rejects.toThrow('disk full');
    expect(calls).toHaveLength(1);
    expect(counted).toBe(0);
  });

  test('settle waits for the writes in flight and drops what was only gathered', async () => {
    const { calls, writeAt } = heldWrites();
    const w = new BatchedWriter(writeAt, 0, () => {}, 8, 2);
    w.push(chunk(8, 1));
    w.push(chunk(3, 2));
    let settled = false;
    const s = w.settle().then(() => (settled = true));
    await ticks();
    expect(settled).toBe(false);
    calls[0]!.finish();
    await s;
    expect(calls).toHaveLength(1);
  });
});

describe('dropFront', () => {
  const bufs = () => [Buffer.from('abc'), Buffer.from('de'), Buffer.from('fgh')];
  const text = (b: Buffer[]) => Buffer.concat(b).toString();

  test('drops whole buffers and cuts into the first one left', () => {
    expect(text(dropFront(bufs(), 0))).toBe('abcdefgh');
    expect(text(dropFront(bufs(), 3))).toBe('defgh');
    expect(text(dropFront(bufs(), 4))).toBe('efgh');
    expect(text(dropFront(bufs(), 7))).toBe('h');
    expect(dropFront(bufs(), 8)).toEqual([]);
  });

  test('leaves the buffers it was given untouched', () => {
    const b = bufs();
    dropFront(b, 4);
    expect(text(b)).toBe('abcdefgh');
  });
});
