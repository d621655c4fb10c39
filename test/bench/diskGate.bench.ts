// What the disk gates cost an upload's reads when no disk has a setting: a large
// file read through fileChunks (1 MiB reads) and small files read whole on the
// reader thread, each with and without its disk's gate, interleaved in one
// process so the machine's noise falls on both alike. Prints MiB/s and files/s
// of each, their ratio, and the load average (docs/benchmarks.md, "Disk gates").
// Run: npx tsx test/bench/diskGate.bench.ts  (env BENCH_SIZE_MB, BENCH_SMALL_FILES, BENCH_ROUNDS, BENCH_DIR)
import { randomBytes } from 'node:crypto';
import { mkdtemp, rm, writeFile, mkdir } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fileChunks, releaseRing, takeRing } from '../../src/agent/engine/fileChunks.js';
import { WholeFileReader } from '../../src/agent/engine/wholeReads.js';
import { Disks } from '../../src/agent/engine/disks.js';
import { DiskGate } from '../../src/agent/engine/diskGate.js';
import { statSync } from 'node:fs';

const MiB = 1024 * 1024;
const sizeMiB = Number(process.env.BENCH_SIZE_MB ?? 512);
const smallCount = Number(process.env.BENCH_SMALL_FILES ?? 4000);
const rounds = Math.max(1, Number(process.env.BENCH_ROUNDS ?? 5));
const PART = 16 * MiB;

async function readLarge(file: string, disks: Disks | undefined): Promise<number> {
  const t = process.hrtime.bigint();
  for (let start = 0; start < sizeMiB * MiB; start += PART) {
    const ring = takeRing(PART);
    const gate = await disks?.gateOf(path.dirname(file));
    for await (const _ of fileChunks(file, start, PART, ring, () => {}, gate));
    releaseRing(ring);
  }
  return Number(process.hrtime.bigint() - t) / 1e9;
}

async function readSmall(files: { path: string; size: number; mtimeMs: number }[], reader: WholeFileReader, disks: Disks | undefined): Promise<number> {
  const t = process.hrtime.bigint();
  // 16 at a time, as an upload's parts in flight.
  let next = 0;
  await Promise.all(
    Array.from({ length: 16 }, async () => {
      while (next < files.length) {
        const f = files[next++]!;
        const read = () => reader.read(f);
        const whole = await (disks ? disks.run('read', f.path, read) : read());
        whole?.release();
      }
    }),
  );
  return Number(process.hrtime.bigint() - t) / 1e9;
}

/** Nanoseconds a free slot adds to one operation: a million resolved operations with and without the gate. */
async function perOp(): Promise<[number, number]> {
  const gate = new DiskGate();
  const N = 1_000_000;
  const op = () => Promise.resolve(1);
  let best: [number, number] = [Infinity, Infinity];
  for (let r = 0; r < rounds; r++) {
    let t = process.hrtime.bigint();
    for (let i = 0; i < N; i++) await op();
    const plain = Number(process.hrtime.bigint() - t) / N;
    t = process.hrtime.bigint();
    for (let i = 0; i < N; i++) await gate.run('read', op);
    const gated = Number(process.hrtime.bigint() - t) / N;
    best = [Math.min(best[0], plain), Math.min(best[1], gated)];
  }
  return best;
}

async function main(): Promise<void> {
  const work = await mkdtemp(path.join(process.env.BENCH_DIR ?? os.tmpdir(), 'ferry-disk-gate-bench-'));
  try {
    const big = path.join(work, 'big.bin');
    await writeFile(big, randomBytes(sizeMiB * MiB));
    const small: { path: string; size: number; mtimeMs: number }[] = [];
    for (let i = 0; i < smallCount; i++) {
      const dir = path.join(work, 'small', String(i % 20));
      if (i < 20) await mkdir(dir, { recursive: true });
      const p = path.join(dir, `f${i}.bin`);
      await writeFile(p, randomBytes(16 * 1024));
      const st = statSync(p);
      small.push({ path: p, size: st.size, mtimeMs: st.mtimeMs });
    }
    const disks = new Disks();
    const reader = new WholeFileReader();
    // One untimed pass of each: the page cache holds the files, the reader thread runs.
    await readLarge(big, disks);
    await readSmall(small, reader, disks);
    const best = { large: [Infinity, Infinity], small: [Infinity, Infinity] };
    for (let r = 0; r < rounds; r++) {
      // Alternate which goes first.
      for (const gated of r % 2 ? [true, false] : [false, true]) {
        const i = gated ? 1 : 0;
        best.large[i] = Math.min(best.large[i]!, await readLarge(big, gated ? disks : undefined));
        best.small[i] = Math.min(best.small[i]!, await readSmall(small, reader, gated ? disks : undefined));
      }
    }
    await reader.close();
    const [plainNs, gatedNs] = await perOp();
    const [lo, lg] = best.large.map((s) => sizeMiB / s);
    const [so, sg] = best.small.map((s) => smallCount / s);
    console.log(`load average ${os.loadavg().map((l) => l.toFixed(2)).join(' ')}, ${os.cpus().length} cores, best of ${rounds} rounds`);
    console.log(`large file, 1 MiB reads (page cache): no gate ${lo!.toFixed(0)} MiB/s, gate ${lg!.toFixed(0)} MiB/s, ratio ${(lg! / lo!).toFixed(3)}`);
    console.log(`16 KiB files read whole, 16 at once:   no gate ${so!.toFixed(0)} files/s, gate ${sg!.toFixed(0)} files/s, ratio ${(sg! / so!).toFixed(3)}`);
    console.log(`one operation (a resolved promise):    no gate ${plainNs.toFixed(0)} ns, gate ${gatedNs.toFixed(0)} ns: the gate adds ${(gatedNs - plainNs).toFixed(0)} ns`);
  } finally {
    await rm(work, { recursive: true, force: true });
  }
}

await main();
