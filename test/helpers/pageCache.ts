// How much of a file the page cache holds, read with util-linux's fincore, for
// tests of what Ferry drops from it (src/native/pageCache.ts). Where that cannot
// be observed (no fincore, as off Linux, or a tmpfs, whose files live in the page
// cache and cannot leave it), the answer is why, for the test to skip with.
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
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

/**
 * Starts watching for pages the kernel takes out of the page cache by itself, machine-wide:
 * reclaim under memory pressure, and drop_caches (/proc/vmstat). The answer tells whether
 * any went since (or that cannot be told): until then, what a test wrote through the page
 * cache is all still in it, so it can expect every byte.
 */
export function watchEvictions(): () => boolean {
  const count = (): number | undefined => {
    try {
      const counters = readFileSync('/proc/vmstat', 'utf8').matchAll(/^(?:pgsteal_\w+|drop_pagecache) (\d+)$/gm);
      return [...counters].reduce((n, m) => n + Number(m[1]), 0);
    } catch {
      return undefined;
    }
  };
  const before = count();
  return () => before === undefined || count() !== before;
}
