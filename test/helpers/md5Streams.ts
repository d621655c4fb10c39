// Many MD5 streams fed through one Md5Batch in interleaved chunks of random sizes,
// each compared with node:crypto. Shared by the md5Lanes tests, in process and in
// child processes that pick another kernel (FERRY_MD5_LANES).
import { createHash, randomBytes } from 'node:crypto';
import { Md5Batch, md5Lanes } from '../../src/hash/md5Lanes.js';

/** A small deterministic generator, so a failing case can be rerun. */
function rng(seed: number): (n: number) => number {
  let x = seed;
  return (n) => {
    x = (Math.imul(x, 1_103_515_245) + 12_345) >>> 0;
    return x % n;
  };
}

/** Hashes 37 streams (more than AVX-512 has lanes); `wrong` lists those whose MD5 differs from node:crypto's. */
export function interleavedStreams(seed: number): { lanes: number; streams: number; wrong: number[] } {
  const rand = rng(seed);
  const batch = new Md5Batch();
  // Lengths around the 64-byte block and the 55-byte padding edge, then larger ones.
  const edges = [0, 1, 55, 56, 63, 64, 65, 119, 120, 128];
  const datas = Array.from({ length: 37 }, (_, i) => randomBytes(i < edges.length ? edges[i]! : rand(300_000)));
  const hashers = datas.map(() => batch.hasher(1 + rand(4)));
  const fed = datas.map(() => 0);
  for (let round = 0; fed.some((f, i) => f < datas[i]!.length) && round < 10_000; round++) {
    const i = rand(datas.length);
    const n = Math.min(datas[i]!.length - fed[i]!, rand(3) === 0 ? rand(70) : rand(40_000));
    // Each chunk is its own copy, as a reused read buffer would be until the hasher flushes.
    hashers[i]!.update(Buffer.from(datas[i]!.subarray(fed[i], fed[i]! + n)));
    fed[i]! += n;
  }
  const wrong: number[] = [];
  hashers.forEach((h, i) => {
    if (fed[i] !== datas[i]!.length || !h.digest().equals(createHash('md5').update(datas[i]!).digest())) wrong.push(i);
  });
  return { lanes: md5Lanes(), streams: datas.length, wrong };
}
