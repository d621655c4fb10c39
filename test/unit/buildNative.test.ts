// scripts/build-native.mjs, run by `npm install` and `npm ci`: the md5lanes addon
// is an optimisation, so a machine that cannot build it must still install.
import { spawnSync } from 'node:child_process';
import { cpSync, existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, expect, test } from 'vitest';

let dir: string | undefined;
afterEach(() => {
  if (dir) rmSync(dir, { recursive: true, force: true });
});

test('a failed addon build warns that hashing falls back to node:crypto, and the install goes on', () => {
  dir = mkdtempSync(join(tmpdir(), 'ferry-native-'));
  for (const f of ['binding.gyp', 'md5lanes.c']) cpSync(join('native', 'md5lanes', f), join(dir, f));
  // No working C compiler: the build fails whichever node-gyp is found.
  const run = spawnSync(process.execPath, ['scripts/build-native.mjs', dir], {
    env: { ...process.env, CC: '/bin/false', CXX: '/bin/false' },
    encoding: 'utf8',
  });
  expect(run.status).toBe(0);
  expect(run.stderr).toMatch(/md5lanes addon did not build; .*node:crypto/);
  expect(existsSync(join(dir, 'build', 'Release', 'md5lanes.node'))).toBe(false);
});
