// better-sqlite3 for Electron's ABI, before `npm start` opens the desktop app: a
// build in the cache is used as it is; one that cannot be made says why, in
// words `ferry start` prints before it falls back to the browser.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, expect, test } from 'vitest';
import { electronSqlite } from '../../../src/cli/desktop.js';

let root: string;
beforeEach(() => {
  root = fs.mkdtempSync(path.join(os.tmpdir(), 'ferry-electron-sqlite-'));
  fs.mkdirSync(path.join(root, 'node_modules', 'electron'), { recursive: true });
  fs.writeFileSync(path.join(root, 'node_modules', 'electron', 'package.json'), JSON.stringify({ version: '45.5.0' }));
  // The sources a build copies (empty stand-ins: no build can succeed from them).
  const src = path.join(root, 'node_modules', 'better-sqlite3');
  for (const d of ['src', 'deps']) fs.mkdirSync(path.join(src, d), { recursive: true });
  for (const f of ['binding.gyp', 'package.json']) fs.writeFileSync(path.join(src, f), '{}');
});
afterEach(() => fs.rmSync(root, { recursive: true, force: true }));

test('a build for this Electron in the cache is used without building again', () => {
  const addon = path.join(root, '.cache', 'electron-45.5.0', 'better-sqlite3', 'build', 'Release', 'better_sqlite3.node');
  fs.mkdirSync(path.dirname(addon), { recursive: true });
  fs.writeFileSync(addon, 'built');
  const lines: string[] = [];
  expect(electronSqlite(root, (l) => lines.push(l))).toEqual({ path: addon });
  expect(lines).toEqual([]);
});

test('a build that fails answers why, naming the Electron version', () => {
  const lines: string[] = [];
  const r = electronSqlite(root, (l) => lines.push(l));
  expect(lines).toEqual(['Building better-sqlite3 for Electron 45.5.0 (once)…']);
  expect(r).toEqual({ why: expect.stringMatching(/^better-sqlite3 could not be built for Electron 45\.5\.0 \(.+\)$/) });
});
