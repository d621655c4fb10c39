// Whether the desktop app can open here, for `ferry start` (npm start): a display,
// the Electron runtime (its npm package fetches the binary on first use), and the
// built app (dist/desktop). Where it cannot, start says why in one line and
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

export type Desktop = { ok: true; electron: string; main: string } | { ok: false; why: string };

export function desktopRuntime(env: NodeJS.ProcessEnv = process.env): Desktop {
  if (env.FERRY_NO_DESKTOP) return { ok: false, why: 'FERRY_NO_DESKTOP is set' };
  if (process.platform === 'linux' && !env.DISPLAY && !env.WAYLAND_DISPLAY) return { ok: false, why: 'there is no display (DISPLAY is not set)' };
  const root = packageRoot();
  const main = path.join(root, 'dist', 'desktop', 'main.cjs');
  if (!fs.existsSync(main)) return { ok: false, why: 'the desktop app is not built (npm run build)' };
  // Requiring the electron package answers the binary's path, fetching it first when missing.
  const r = spawnSync(process.execPath, ['-e', 'process.stdout.write(require("electron"))'], { cwd: root, encoding: 'utf8', timeout: 300_000 });
  const electron = r.status === 0 ? r.stdout.trim() : '';
  if (!electron || !fs.existsSync(electron)) return { ok: false, why: 'the Electron runtime is not installed and could not be fetched' };
  return { ok: true, electron, main };
}

/**
 * Opens the desktop app in "Try it on this computer" mode: its agent runs the service
 * with `ferry serve`'s flags (FERRY_SERVE_FLAGS) and signs in as its owner.
 */
export function openDesktop(d: Extract<Desktop, { ok: true }>, serveFlags: Record<string, string | boolean | undefined>): ChildProcess {
  return spawn(d.electron, [d.main], {
    stdio: 'inherit',
    env: { ...process.env, FERRY_AGENT_THIS_COMPUTER: 'true', FERRY_SERVE_FLAGS: JSON.stringify(serveFlags) },
  });
}
