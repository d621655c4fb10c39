// Whether the desktop app can open here, for `ferry start` (npm start): a display,
// the Electron runtime (its npm package fetches the binary on first use), the
// built app (dist/desktop), and better-sqlite3 built for Electron's ABI. Where it cannot, start says why in one line and
// serves the same window to the browser instead.
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

/** The checkout (or installed package) this code runs from: the nearest folder above with Ferry's package.json. */
function packageRoot(): string {
  let dir = path.dirname(fileURLToPath(import.meta.url));
  for (;;) {
    const pkg = path.join(dir, 'package.json');
    if (fs.existsSync(pkg) && (JSON.parse(fs.readFileSync(pkg, 'utf8')) as { name?: string }).name === 'ferry') return dir;
    const up = path.dirname(dir);
    if (up === dir) throw new Error('cannot find Ferry\'s package.json');
    dir = up;
  }
}

export type Desktop = { ok: true; electron: string; main: string; sqliteBinding: string } | { ok: false; why: string };

/**
 * better-sqlite3's addon built for the Electron of node_modules, which runs the agent
 * on its own Node ABI: built once into .cache/electron-VERSION/ from the same sources
 * (node-gyp fetches Electron's headers), while node_modules keeps the build for the
 * Node that runs the CLI and the tests. The agent's process loads it through
 * FERRY_SQLITE_BINDING (src/sqlite/binding.ts). Answers its path, or why it cannot be had.
 */
export function electronSqlite(root: string, log: (line: string) => void = () => {}): { path: string } | { why: string } {
  const version = (JSON.parse(fs.readFileSync(path.join(root, 'node_modules', 'electron', 'package.json'), 'utf8')) as { version: string }).version;
  const dir = path.join(root, '.cache', `electron-${version}`, 'better-sqlite3');
  const addon = path.join(dir, 'build', 'Release', 'better_sqlite3.node');
  if (fs.existsSync(addon)) return { path: addon };
  log(`Building better-sqlite3 for Electron ${version} (once)…`);
  const from = path.join(root, 'node_modules', 'better-sqlite3');
  fs.rmSync(dir, { recursive: true, force: true });
  fs.mkdirSync(dir, { recursive: true });
  for (const entry of ['binding.gyp', 'src', 'deps', 'package.json']) fs.cpSync(path.join(from, entry), path.join(dir, entry), { recursive: true });
  const gyp = path.join(root, 'node_modules', 'node-gyp', 'bin', 'node-gyp.js');
  // Under npm, npm_config_nodedir (and its kin) would point node-gyp at this Node's headers instead.
  const env = Object.fromEntries(Object.entries(process.env).filter(([k]) => !/^npm_config_(nodedir|target|runtime|dist_?url|devdir|arch)$/i.test(k)));
  const r = spawnSync(process.execPath, [gyp, 'rebuild', '--release', `--target=${version}`, '--runtime=electron', '--dist-url=https://electronjs.org/headers'], {
    cwd: dir, encoding: 'utf8', timeout: 600_000, env,
  });
  if (r.status === 0 && fs.existsSync(addon)) return { path: addon };
  const last = `${r.stderr ?? ''}`.trim().split('\n').filter((l) => /err/i.test(l)).slice(-1)[0] ?? `node-gyp exited ${r.status ?? r.signal}`;
  return { why: `better-sqlite3 could not be built for Electron ${version} (${last.trim()})` };
}

export function desktopRuntime(env: NodeJS.ProcessEnv = process.env, log: (line: string) => void = console.log): Desktop {
  if (env.FERRY_NO_DESKTOP) return { ok: false, why: 'FERRY_NO_DESKTOP is set' };
  if (process.platform === 'linux' && !env.DISPLAY && !env.WAYLAND_DISPLAY) return { ok: false, why: 'there is no display (DISPLAY is not set)' };
  const root = packageRoot();
  const main = path.join(root, 'dist', 'desktop', 'main.cjs');
  if (!fs.existsSync(main)) return { ok: false, why: 'the desktop app is not built (npm run build)' };
  // Requiring the electron package answers the binary's path, fetching it first when missing.
  const r = spawnSync(process.execPath, ['-e', 'process.stdout.write(require("electron"))'], { cwd: root, encoding: 'utf8', timeout: 300_000 });
  const electron = r.status === 0 ? r.stdout.trim() : '';
  if (!electron || !fs.existsSync(electron)) return { ok: false, why: 'the Electron runtime is not installed and could not be fetched' };
  // A build given in the environment is used as it is (the tests' stand-in Electron is Node itself).
  const sqlite = env.FERRY_SQLITE_BINDING ? { path: env.FERRY_SQLITE_BINDING } : electronSqlite(root, log);
  if ('why' in sqlite) return { ok: false, why: sqlite.why };
  return { ok: true, electron, main, sqliteBinding: sqlite.path };
}

/**
 * Opens the desktop app in "Try it on this computer" mode: its agent runs the service
 * with `ferry serve`'s flags (FERRY_SERVE_FLAGS) and signs in as its owner.
 */
export function openDesktop(d: Extract<Desktop, { ok: true }>, serveFlags: Record<string, string | boolean | undefined>): ChildProcess {
  return spawn(d.electron, [d.main], {
    stdio: 'inherit',
    env: { ...process.env, FERRY_AGENT_THIS_COMPUTER: 'true', FERRY_SERVE_FLAGS: JSON.stringify(serveFlags), FERRY_SQLITE_BINDING: d.sqliteBinding },
  });
}
