// scripts/build-native.mjs, run by `npm install` and `npm ci`: each addon is an
// optimisation, so a machine that cannot build one must still install.
import { spawnSync } from 'node:child_process';
import { cpSync, existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, expect, test } from 'vitest';

let dir: string | undefined;
afterEach(() => {
  if (dir) rmSync(dir, { recursive: true, force: true });
});

test.each([
  ['md5lanes', /md5lanes addon did not build; .*node:crypto/],
  ['pagecache', /pagecache addon did not build; downloaded files stay in the page cache/],
])('a failed %s build warns what Ferry does without it, and the install goes on', (name, warning) => {
  dir = mkdtempSync(join(tmpdir(), 'ferry-native-'));
  for (const f of ['binding.gyp', `${name}.c`]) cpSync(join('native', name, f), join(dir, f));
  // No working C compiler: the build fails whichever node-gyp is found.
  const run = spawnSync(process.execPath, ['scripts/build-native.mjs', dir], {
    env: { ...process.env, CC: '/bin/false', CXX: '/bin/false' },
    encoding: 'utf8',
  });
  expect(run.status).toBe(0);
  expect(run.stderr).toMatch(warning);
  expect(existsSync(join(dir, 'build', 'Release', `${name}.node`))).toBe(false);
});
