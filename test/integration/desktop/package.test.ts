// What the desktop app's package holds (electron-builder --linux dir, with a
// stand-in Electron binary, which cannot be downloaded here, and without the
// fuses and the native rebuild, which need the real one): main, preload, the
// agent and the window; the native addons unpacked from the ASAR; the icons and
// the update feed; no tests, no sources, no development packages.
import { execFile } from 'node:child_process';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { createRequire } from 'node:module';
import { promisify } from 'node:util';
import { afterAll, beforeAll, expect, test, vi } from 'vitest';
import { repoRoot } from '../../helpers/cli.js';

vi.setConfig({ testTimeout: 240_000, hookTimeout: 240_000 });
const run = promisify(execFile);
const asar = createRequire(import.meta.url)('@electron/asar') as { listPackage(p: string): string[]; extractFile(archive: string, file: string): Buffer };

let tmp: string;
let out: string;

beforeAll(async () => {
  tmp = await fs.mkdtemp(path.join(os.tmpdir(), 'ferry-package-'));
  const stub = path.join(tmp, 'electron-dist');
  await fs.mkdir(stub);
  await fs.writeFile(path.join(stub, 'electron'), '#!/bin/sh\n', { mode: 0o755 });
  out = path.join(tmp, 'release');
  const config = path.join(tmp, 'electron-builder.yml');
  await fs.writeFile(config, ['extends: electron-builder.yml', 'electronFuses: null', 'npmRebuild: false', `electronDist: ${stub}`, 'directories:', `  output: ${out}`, '  buildResources: resources', ''].join('\n'));
  await run(path.join(repoRoot, 'node_modules', '.bin', 'electron-builder'), ['--linux', 'dir', '--config', config, '--projectDir', repoRoot], { cwd: repoRoot, maxBuffer: 64 * 1024 * 1024 });
});

afterAll(async () => {
  if (tmp) await fs.rm(tmp, { recursive: true, force: true });
});

test('the package holds the app and the production packages, the native addons unpacked, and nothing of development', async () => {
  const resources = path.join(out, 'linux-unpacked', 'resources');
  const files = asar.listPackage(path.join(resources, 'app.asar'));
  for (const f of ['/package.json', '/dist/desktop/main.cjs', '/dist/desktop/preload.cjs', '/dist/desktop/agent.mjs', '/dist/renderer/index.html']) expect(files, f).toContain(f);
  expect(files.some((f) => /^\/dist\/renderer\/assets\/index-[\w-]+\.js$/.test(f))).toBe(true);
  // The packaged package.json starts the app's main.
  expect(JSON.parse(asar.extractFile(path.join(resources, 'app.asar'), 'package.json').toString()).main).toBe('dist/desktop/main.cjs');
  // Native code is outside the ASAR, where it can be loaded.
  const unpacked = (await fs.readdir(path.join(resources, 'app.asar.unpacked'), { recursive: true })).map(String);
  expect(unpacked).toEqual(expect.arrayContaining([
    path.join('native', 'md5lanes', 'build', 'Release', 'md5lanes.node'),
    path.join('native', 'pagecache', 'build', 'Release', 'pagecache.node'),
    path.join('node_modules', 'better-sqlite3', 'build', 'Release', 'better_sqlite3.node'),
  ]));
  // Production packages only: what the agent and the service need, nothing for tests or builds.
  const modules = new Set(files.filter((f) => f.startsWith('/node_modules/')).map((f) => f.split('/').slice(2, f.split('/')[2]!.startsWith('@') ? 4 : 3).join('/')));
  for (const m of ['fastify', 'better-sqlite3', 'undici', 'pino', '@fastify/websocket']) expect(modules, m).toContain(m);
  for (const m of ['vitest', '@playwright/test', 'electron', 'electron-builder', 'esbuild', 'tsx', 'typescript', 'mockttp', 'react', 'vite']) expect(modules, m).not.toContain(m);
  // No sources or tests of Ferry itself.
  expect(files.filter((f) => /^\/(src|test|main|renderer|scripts)\//.test(f))).toEqual([]);
  // The tray's images and the update feed sit beside the ASAR.
  const beside = await fs.readdir(resources);
  expect(beside).toEqual(expect.arrayContaining(['app.asar', 'app-update.yml', 'trayTemplate.png', 'icons']));
  expect(await fs.readFile(path.join(resources, 'app-update.yml'), 'utf8')).toMatch(/provider: generic\nurl: http:\/\/127\.0\.0\.1:7400\/updates\//);
});
