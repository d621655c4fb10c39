// How much of a file the page cache holds, read with util-linux's fincore, for
// tests of what Ferry drops from it (src/native/pageCache.ts). Undefined where
// that cannot be observed: no fincore (not Linux), or a tmpfs, whose files live
// in the page cache and cannot leave it.
import { spawnSync } from 'node:child_process';
import path from 'node:path';

export function cachedBytes(file: string): number | undefined {
  const fsType = spawnSync('stat', ['-f', '-c', '%T', path.dirname(file)], { encoding: 'utf8' });
  if (fsType.status !== 0 || fsType.stdout.trim() === 'tmpfs') return undefined;
  const run = spawnSync('fincore', ['--bytes', '--noheadings', '--output', 'RES', file], { encoding: 'utf8' });
  return run.status === 0 ? Number(run.stdout.trim()) : undefined;
}
