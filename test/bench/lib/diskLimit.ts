// The disk's limit: what the store's disk takes of direct 1 MiB writes from
// several writers at once, as the store writes a large upload's bodies
// (docs/hosted-api-notes/uploads-downloads.md). The raw limit's server discards
// what it receives, so on a machine whose disk is slower than its loopback an
// upload that is kept can reach at most this, whatever the raw limit says.
import { spawn } from 'node:child_process';
import { rm } from 'node:fs/promises';
import { join } from 'node:path';
import { MiB, mbps } from './loopback.js';

function dd(file: string, mib: number): Promise<void> {
  return new Promise((ok, fail) => {
    const child = spawn('dd', ['if=/dev/zero', `of=${file}`, 'bs=1M', `count=${mib}`, 'oflag=direct'], { stdio: 'ignore' });
    child.on('error', fail);
    child.on('close', (code) => (code === 0 ? ok() : fail(new Error(`dd exited ${code}`))));
  });
}

/** MiB/s of `writers` dd processes writing `mib` MiB in all under `dir`; undefined where dd or O_DIRECT is missing. */
export async function measureDisk(dir: string, mib: number, writers: number): Promise<number | undefined> {
  const files = Array.from({ length: writers }, (_, i) => join(dir, `disk-${i}.bin`));
  const each = Math.ceil(mib / writers);
  const t = performance.now();
  try {
    await Promise.all(files.map((f) => dd(f, each)));
    return mbps(writers * each * MiB, performance.now() - t);
  } catch {
    return undefined;
  } finally {
    await Promise.all(files.map((f) => rm(f, { force: true })));
  }
}
