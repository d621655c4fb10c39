// How much of a file the page cache holds, read with util-linux's fincore, for
// tests of what Ferry drops from it (src/native/pageCache.ts). Where that cannot
// be observed (no fincore, as off Linux, or a tmpfs, whose files live in the page
// cache and cannot leave it), the answer is why, for the test to skip with.
import { spawnSync } from 'node:child_process';
import path from 'node:path';

export function cachedBytes(file: string): number | string {
  const fsType = spawnSync('stat', ['-f', '-c', '%T', path.dirname(file)], { encoding: 'utf8' });
  if (fsType.status !== 0) return `the page cache cannot be observed: stat cannot tell the file system of ${path.dirname(file)}`;
  if (fsType.stdout.trim() === 'tmpfs') return `the page cache cannot be observed: ${path.dirname(file)} is on a tmpfs`;
  const run = spawnSync('fincore', ['--bytes', '--noheadings', '--output', 'RES', file], { encoding: 'utf8' });
  if (run.error) return 'the page cache cannot be observed: no fincore (util-linux) here';
  if (run.status !== 0) throw new Error(`fincore ${file}: ${run.stderr.trim()}`);
  return Number(run.stdout.trim());
}
