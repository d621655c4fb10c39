import { spawnSync } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { describe, expect, test } from 'vitest';
import { Md5Batch, md5LaneStats, md5Lanes } from '../../src/hash/md5Lanes.js';
import { interleavedStreams } from '../helpers/md5Streams.js';
import { onlyIf } from '../helpers/skip.js';

const md5 = (...parts: Uint8Array[]) => {
  const h = createHash('md5');
  for (const p of parts) h.update(p);
  return h.digest();
};

const cpuHasAvx2 = (() => {
  try {
    return process.arch === 'x64' && /\bavx2\b/.test(readFileSync('/proc/cpuinfo', 'utf8'));
  } catch {
    return false;
  }
})();

// Holding chunks is what lanes do; node:crypto hashes each chunk as it is given.
const NO_AVX2 = 'needs an x64 CPU with AVX2';
const laneTest = (name: string, fn: () => void) => test(name, onlyIf(md5Lanes() > 0, 'the md5Lanes addon is not built here'), fn);

describe('md5Lanes', () => {
  test('the addon is built and in use on a CPU with AVX2', onlyIf(cpuHasAvx2, NO_AVX2), () => {
    // npm ci builds it (scripts/build-native.mjs); a failed build would quietly fall back to node:crypto.
    expect(md5Lanes()).toBeGreaterThanOrEqual(8);
  });

  test('streams fed in interleaved chunks of any size each get their own MD5', () => {
    const before = md5LaneStats();
    expect(interleavedStreams(7)).toEqual({ lanes: md5Lanes(), streams: 37, wrong: [] });
    if (md5Lanes() === 16) {
      // Calls with more than 8 streams went 16 lanes wide, the others 8.
      const after = md5LaneStats()!;
      expect(after.wideSteps).toBeGreaterThan(before!.wideSteps);
      expect(after.narrowSteps).toBeGreaterThan(before!.narrowSteps);
    }
  });

  test('the AVX2 kernel (8 lanes) hashes them alike', onlyIf(cpuHasAvx2, NO_AVX2), () => {
    expect(inChild('8', 'interleavedStreams(11)')).toEqual({ lanes: 8, streams: 37, wrong: [] });
  });

  /** Feeds `count` streams six 64 KiB chunks each, in step; checks every MD5 and answers the lane stats meanwhile. */
  function inStep(count: number): { steps: number; wide: number; busy: number; scalar: number } {
    const batch = new Md5Batch();
    const streams = Array.from({ length: count }, () => ({ h: batch.hasher(2), data: [] as Buffer[] }));
    const before = md5LaneStats()!;
    for (let round = 0; round < 6; round++) {
      for (const s of streams) {
        const chunk = randomBytes(64 * 1024);
        s.data.push(chunk);
        s.h.update(chunk);
      }
    }
    streams.forEach((s) => expect(s.h.digest().equals(md5(...s.data))).toBe(true));
    const after = md5LaneStats()!;
    const wide = after.wideSteps - before.wideSteps;
    return { steps: wide + after.narrowSteps - before.narrowSteps, wide, busy: after.laneBlocks - before.laneBlocks, scalar: after.scalarBlocks - before.scalarBlocks };
  }

  laneTest('eight streams fed in step are hashed eight lanes at a time, by the 8-lane kernel', () => {
    const got = inStep(8);
    expect(got.scalar).toBe(0);
    expect(got.busy).toBe((8 * 6 * 64 * 1024) / 64); // padding is hashed apart, by digest
    expect(got.wide).toBe(0); // 16 lanes half empty would cost more
    expect(got.busy / got.steps).toBeGreaterThan(7.5);
  });

  test('sixteen streams fed in step are hashed sixteen lanes at a time', onlyIf(md5Lanes() === 16, 'needs a CPU with AVX-512 (16 lanes)'), () => {
    const got = inStep(16);
    expect(got.scalar).toBe(0);
    expect(got.busy).toBe((16 * 6 * 64 * 1024) / 64);
    expect(got.wide).toBe(got.steps);
    expect(got.busy / got.steps).toBeGreaterThan(15.5);
  });

  laneTest('a hasher hashes its held chunks before taking more than `hold`, so the oldest buffer may be reused', () => {
    const batch = new Md5Batch();
    const h = batch.hasher(2);
    const a = randomBytes(1000);
    const b = randomBytes(2000);
    const c = randomBytes(3000);
    const aCopy = Buffer.from(a);
    h.update(a);
    h.update(b);
    h.update(c); // holds two already: the oldest, a, is hashed first
    a.fill(0); // a reused buffer
    expect(h.digest().equals(md5(aCopy, b, c))).toBe(true);
  });

  laneTest('when one stream hashes its oldest chunk, the others hash as many of their held bytes', () => {
    const batch = new Md5Batch();
    const first = batch.hasher(8);
    const second = batch.hasher(1);
    const held = randomBytes(5000);
    const heldCopy = Buffer.from(held);
    first.update(held);
    const a = randomBytes(3000);
    second.update(a);
    second.update(randomBytes(10)); // second holds one already: its 3000 bytes are hashed, and 3000 of first's
    held.fill(1, 0, 3000); // hashed already: no effect
    expect(first.digest().equals(md5(heldCopy))).toBe(true);

    const third = batch.hasher(8);
    const fourth = batch.hasher(1);
    const tail = randomBytes(5000);
    third.update(tail);
    fourth.update(randomBytes(3000));
    fourth.update(randomBytes(10));
    tail.fill(2, 3000); // still held: this is what third hashes
    expect(third.digest().equals(md5(Buffer.concat([tail.subarray(0, 3000), Buffer.alloc(2000, 2)])))).toBe(true);
  });

  laneTest('a discarded hasher leaves the batch: its held chunks are never hashed, and the others are unaffected', () => {
    const batch = new Md5Batch();
    const gone = batch.hasher(4);
    const kept = batch.hasher(4);
    gone.update(randomBytes(64 * 100));
    const data = randomBytes(64 * 3);
    kept.update(data);
    gone.discard();
    const before = md5LaneStats()!;
    expect(kept.digest().equals(md5(data))).toBe(true);
    const after = md5LaneStats()!;
    // kept's three blocks alone, one stream at a time; had gone stayed, its blocks would go along in a second lane.
    expect(after.scalarBlocks - before.scalarBlocks).toBe(3);
    expect(after.laneBlocks - before.laneBlocks).toBe(0);
  });

  test('with FERRY_MD5_LANES=0 the addon is not loaded and hashers use node:crypto', () => {
    expect(inChild('0', 'interleavedStreams(13)')).toEqual({ lanes: 0, streams: 37, wrong: [] });
  });
});

/** Runs `expr` (of test/helpers/md5Streams.ts) in a process with FERRY_MD5_LANES set: the addon picks its kernel once, at load. */
function inChild(lanes: string, expr: string): unknown {
  const script = `import { interleavedStreams } from './test/helpers/md5Streams.ts'; console.log(JSON.stringify(${expr}));`;
  const run = spawnSync(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], {
    env: { ...process.env, FERRY_MD5_LANES: lanes },
    encoding: 'utf8',
  });
  expect(run.status, run.stderr).toBe(0);
  return JSON.parse(run.stdout);
}
