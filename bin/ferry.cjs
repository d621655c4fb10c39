#!/usr/bin/env node
// Entry point of the `ferry` command. It runs the bundle that `npm run build`
// (run by npm install and npm ci) writes to dist/, which spares tsx's loader
// thread and compiling at start. When that bundle is missing, or older than a
// file under src/ (a checkout being edited), it runs the TypeScript sources
// through tsx instead, so it never runs stale code. CommonJS, so that
// threadPool.cjs runs before libuv's thread pool starts.
require('./threadPool.cjs');
const fs = require('node:fs');
const path = require('node:path');
const { pathToFileURL } = require('node:url');

const root = path.resolve(__dirname, '..');
const bundle = path.join(root, 'dist', 'ferry.mjs');

/** Newest modification time of the files under dir, in ms. */
function newest(dir) {
  let t = 0;
  for (const e of fs.readdirSync(dir, { withFileTypes: true })) {
    const p = path.join(dir, e.name);
    t = Math.max(t, e.isDirectory() ? newest(p) : fs.statSync(p).mtimeMs);
  }
  return t;
}

function bundleIsFresh() {
  try {
    return fs.statSync(bundle).mtimeMs >= newest(path.join(root, 'src'));
  } catch {
    return false;
  }
}

async function run() {
  if (bundleIsFresh()) return import(pathToFileURL(bundle).href);
  const { register } = await import('tsx/esm/api');
  register();
  return import(pathToFileURL(path.join(root, 'src', 'cli', 'main.ts')).href);
}

run().catch((err) => {
  console.error(err);
  process.exitCode = 1;
});
