#!/usr/bin/env node
// Entry point of the `ferry` command. It runs the bundle that `npm run build`
// (run by npm install and npm ci) writes to dist/, which spares tsx's loader
// thread and compiling at start. When that bundle is missing, or older than a
// file under src/ (a checkout being edited), it runs the TypeScript sources
// through tsx instead, so it never runs stale code.
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
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

if (bundleIsFresh()) await import(pathToFileURL(bundle).href);
else {
  const { register } = await import('tsx/esm/api');
  register();
  await import('../src/cli/main.ts');
}
