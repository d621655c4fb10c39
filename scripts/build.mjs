#!/usr/bin/env node
// `npm run build` (also run by npm install and npm ci, as `prepare`): bundles the
// `ferry` command into dist/ (dist/ferry.mjs and its chunks), which bin/ferry.cjs runs. Running compiled
// code spares each process tsx's loader thread and its on-the-fly compiling
// (about 17 MiB of RSS for an idle agent, and a faster start). Packages stay
// external: they load from node_modules as they are (better-sqlite3 is native).
import { build } from 'esbuild';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
export const OUTDIR = path.join(root, 'dist');

export async function buildCli(outdir = OUTDIR) {
  // Chunk names carry a hash: clear out the previous build's (only the CLI's: dist/ also holds the app's).
  fs.rmSync(path.join(outdir, 'chunks'), { recursive: true, force: true });
  await build({
    // The embedded store's thread has an entry of its own (src/objectstore/thread.ts finds it here).
    entryPoints: { ferry: path.join(root, 'src', 'cli', 'main.ts'), 'objectstore-thread': path.join(root, 'src', 'objectstore', 'threadMain.ts') },
    outdir,
    outExtension: { '.js': '.mjs' },
    bundle: true,
    platform: 'node',
    format: 'esm',
    target: 'node20',
    packages: 'external',
    // Each subcommand is its own chunk, loaded by import() when named, so that
    // `ferry agent` never loads the service's packages (the AWS SDK, Kysely...).
    splitting: true,
    chunkNames: 'chunks/[name]-[hash]',
    logLevel: 'warning',
  });
}

/**
 * The desktop app's own code, into dist/desktop: main (CommonJS, as Electron
 * loads it), the preload (CommonJS, sandboxed, only the channel names inside),
 * and the agent's process (ESM, run by a utilityProcess).
 */
export async function buildDesktop(outdir = path.join(OUTDIR, 'desktop')) {
  const common = { bundle: true, platform: 'node', target: 'node22', logLevel: 'warning', external: ['electron'] };
  await build({ ...common, entryPoints: [path.join(root, 'main', 'main.ts')], outfile: path.join(outdir, 'main.cjs'), format: 'cjs', packages: 'external' });
  await build({ ...common, entryPoints: [path.join(root, 'main', 'preload.ts')], outfile: path.join(outdir, 'preload.cjs'), format: 'cjs' });
  await build({ ...common, entryPoints: [path.join(root, 'src', 'cli', 'agentProcess.ts')], outfile: path.join(outdir, 'agent.mjs'), format: 'esm', packages: 'external' });
}

/** The Portal upload page's script (web/portal/), served by the service (src/hosted/webAssets.ts). */
export async function buildWeb() {
  const opts = {
    entryPoints: [path.join(root, 'web', 'portal', 'main.ts')],
    bundle: true,
    format: 'esm',
    target: 'es2022',
    minify: true,
    logLevel: 'warning',
  };
  await build({ ...opts, outfile: path.join(OUTDIR, 'web', 'portal-upload.js') });
}

/** The app's window (renderer/), bundled by Vite into dist/renderer. */
export async function buildRenderer() {
  const { build: vite } = await import('vite');
  await vite({ configFile: path.join(root, 'scripts', 'renderer.vite.config.ts') });
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  // --renderer: the window alone (the test run's, after the CLI build of npm install); --cli: the command alone.
  const only = process.argv.find((a) => a === '--renderer' || a === '--cli');
  if (only !== '--renderer') await buildCli();
  if (only !== '--renderer') await buildWeb();
  if (!only) await buildDesktop();
  if (only !== '--cli') await buildRenderer();
}
