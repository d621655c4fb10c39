import { spawnSync } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { describe, expect, test } from 'vitest';
import { Md5Batch, md5Lanes } from '../../src/hash/md5Lanes.js';
import { interleavedStreams } from '../helpers/md5Streams.js';

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
const laneTest = test.runIf(md5Lanes() > 0);

describe('md5Lanes', () => {
  test.runIf(cpuHasAvx2)('the addon is built and in use on a CPU with AVX2', () => {
    // npm ci builds it (scripts/build-native.mjs); a failed build would quietly fall back to node:crypto.
    expect(md5Lanes()).toBeGreaterThanOrEqual(8);
  });

  test('streams fed in interleaved chunks of any size each get their own MD5', () => {
    expect(interleavedStreams(7)).toEqual({ lanes: md5Lanes(), streams: 37, wrong: [] });
  });

  test.runIf(cpuHasAvx2)('the AVX2 kernel (8 lanes) hashes them alike', () => {
    expect(inChild('8', 'interleavedStreams(11)')).toEqual({ lanes: 8, streams: 37, wrong: [] });
  });

  laneTest('a hasher hashes its held chunks before taking more than `hold`, so the oldest buffer may be reused', () => {
    const batch = new Md5Batch();
    // Idle streams keep the batch from flushing on its own count (a chunk per open stream).
    for (let i = 0; i < 4; i++) batch.hasher(2);
    const h = batch.hasher(2);
    const a = randomBytes(1000);
    const b = randomBytes(2000);
    const c = randomBytes(3000);
    const aCopy = Buffer.from(a);
    h.update(a);
    h.update(b);
    h.update(c); // holds two already: a and b are hashed first
    a.fill(0); // a reused buffer
    expect(h.digest().equals(md5(aCopy, b, c))).toBe(true);
  });

  laneTest("one hasher's flush hashes the chunks other hashers hold", () => {
    const batch = new Md5Batch();
    const first = batch.hasher(8);
    const second = batch.hasher(1);
    const held = randomBytes(5000);
    const heldCopy = Buffer.from(held);
    first.update(held);
    second.update(randomBytes(10));
    second.update(randomBytes(10)); // flushes the batch, `first` included
    held.fill(1);
    expect(first.digest().equals(md5(heldCopy))).toBe(true);
  });

  laneTest('a batch flushes once its streams hold a chunk each, not before', () => {
    const batch = new Md5Batch();
    const hashers = [batch.hasher(4), batch.hasher(4), batch.hasher(4)];
    const chunks = hashers.map(() => randomBytes(100));
    const copies = chunks.map((c) => Buffer.from(c));
    hashers[0]!.update(chunks[0]!);
    hashers[1]!.update(chunks[1]!);
    chunks[0]!.fill(0); // still held: this changes what will be hashed
    hashers[2]!.update(chunks[2]!); // three held for three streams: all hashed now
    chunks[1]!.fill(0);
    chunks[2]!.fill(0);
    expect(hashers[0]!.digest().equals(md5(chunks[0]!))).toBe(true);
    expect(hashers[1]!.digest().equals(md5(copies[1]!))).toBe(true);
    expect(hashers[2]!.digest().equals(md5(copies[2]!))).toBe(true);
  });

  test('a discarded hasher leaves the batch, and the others are unaffected', () => {
    const batch = new Md5Batch();
    const gone = batch.hasher(4);
    const kept = batch.hasher(4);
    gone.update(randomBytes(100));
    const data = randomBytes(100);
    kept.update(data);
    gone.discard();
    expect(kept.digest().equals(md5(data))).toBe(true);
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
