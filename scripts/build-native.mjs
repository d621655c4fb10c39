#!/usr/bin/env node
// `npm install` and `npm ci` run this (the `install` script): builds the md5lanes
// addon (native/md5lanes) with node-gyp, which npm provides to its scripts. The
// addon is an optimisation: when it cannot be built (no C compiler, say), Ferry
// hashes with node:crypto instead, so a failed build warns and does not fail the install.
import { spawnSync } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

// The addon's folder; another may be given (the tests build a copy).
const dir = process.argv[2] ? path.resolve(process.argv[2]) : path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', 'native', 'md5lanes');
const gyp = process.env.npm_config_node_gyp;
const run = gyp ? spawnSync(process.execPath, [gyp, 'rebuild', '--loglevel=warn'], { cwd: dir, stdio: 'inherit' }) : spawnSync('node-gyp', ['rebuild', '--loglevel=warn'], { cwd: dir, stdio: 'inherit', shell: true });
if (run.status !== 0) {
  console.warn('ferry: the md5lanes addon did not build; parts will be hashed one at a time with node:crypto (slower uploads, same bytes).');
}
