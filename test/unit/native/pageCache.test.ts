import { randomBytes } from 'node:crypto';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, expect, test } from 'vitest';
import { addonFile } from '../../../src/native/addons.js';
import { dropCache } from '../../../src/native/pageCache.js';
import { cachedBytes } from '../../helpers/pageCache.js';
import { onlyIf, skipBecause } from '../../helpers/skip.js';

const MiB = 1024 * 1024;
let dir: string;
beforeAll(async () => void (dir = await fs.mkdtemp(path.join(os.tmpdir(), 'ferry-pagecache-'))));
afterAll(async () => fs.rm(dir, { recursive: true, force: true }));

const LINUX_ONLY = 'the pagecache addon is Linux only';

test('npm ci builds the pagecache addon on Linux', onlyIf(process.platform === 'linux', LINUX_ONLY), () => {
  // A failed build would quietly leave every download in the page cache.
  expect(addonFile('pagecache')).toBeDefined();
});

// The kernel drops only whole folios (up to 2 MiB, aligned) inside the range, as a download's
// ranges of whole MiB pairs are.
test('dropCache drops the flushed range asked for, and the bytes stay', onlyIf(process.platform === 'linux', LINUX_ONLY), async (ctx) => {
  const file = path.join(dir, 'eight.bin');
  const data = randomBytes(8 * MiB);
  const fh = await fs.open(file, 'w+');
  try {
    for (let at = 0; at < data.length; at += MiB) await fh.write(data, at, MiB, at);
    await fh.datasync();
    const before = cachedBytes(file);
    if (typeof before === 'string') skipBecause(ctx, before);
    expect(before).toBe(8 * MiB);
    expect(dropCache(fh.fd, 2 * MiB, 4 * MiB)).toBe(true);
    expect(cachedBytes(file)).toBe(4 * MiB);
    expect((await fs.readFile(file)).equals(data)).toBe(true);
  } finally {
    await fh.close();
  }
});

test('a closed handle asks nothing, and bad arguments are refused', async ({ skip }) => {
  expect(dropCache(-1, 0, MiB)).toBe(false);
  if (!addonFile('pagecache')) skip('no pagecache addon here: its argument checks were not run');
  expect(() => dropCache('3' as unknown as number, 0, 1)).toThrow(TypeError);
  expect(() => dropCache(3, -1, 1)).toThrow(TypeError);
});
