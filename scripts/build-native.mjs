#!/usr/bin/env node
// `npm install` and `npm ci` run this (the `install` script): builds the addons
// under native/ with node-gyp, which npm provides to its scripts. Each addon is
// an optimisation with a plain-Node fallback: when one cannot be built (no C
// compiler, say), the build warns what Ferry does instead and the install goes on.
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const FALLBACK = {
  md5lanes: 'parts will be hashed one at a time with node:crypto (slower uploads, same bytes)',
  pagecache: 'downloaded files stay in the page cache (more memory pressure on large downloads, same bytes)',
};

const native = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', 'native');
// Addon folders; another may be given (the tests build a copy).
const dirs = process.argv[2] ? [path.resolve(process.argv[2])] : Object.keys(FALLBACK).map((name) => path.join(native, name));
const gyp = process.env.npm_config_node_gyp;
for (const dir of dirs) {
  const name = JSON.parse(readFileSync(path.join(dir, 'binding.gyp'), 'utf8')).targets[0].target_name;
  const run = gyp ? spawnSync(process.execPath, [gyp, 'rebuild', '--loglevel=warn'], { cwd: dir, stdio: 'inherit' }) : spawnSync('node-gyp', ['rebuild', '--loglevel=warn'], { cwd: dir, stdio: 'inherit', shell: true });
  if (run.status !== 0) console.warn(`ferry: the ${name} addon did not build; ${FALLBACK[name] ?? 'Ferry goes without it'}.`);
}
