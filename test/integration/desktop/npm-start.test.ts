// `ferry start` (npm start) where the desktop app can open: a display, and an
// Electron runtime, here a stand-in (ELECTRON_OVERRIDE_DIST_PATH points the
// electron package at a script that runs the built main process under Node with
// electron-stub.cjs). It opens the app in "Try it on this computer" mode: the
// app's agent process runs the service and signs in as its first owner, and
// quitting the app stops everything.
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, expect, test, vi } from 'vitest';
import { startFerry, type Running } from '../../helpers/cli.js';
import { freePort } from '../../helpers/ports.js';

vi.setConfig({ testTimeout: 90_000, hookTimeout: 30_000 });
const here = path.dirname(fileURLToPath(import.meta.url));

let tmp: string;
let start: Running | undefined;

beforeAll(async () => {
  tmp = await fs.mkdtemp(path.join(os.tmpdir(), 'ferry-npm-start-'));
  // The stand-in Electron: the built main process under Node, electron's modules stubbed.
  const bin = path.join(tmp, 'electron-dist');
  await fs.mkdir(bin);
  await fs.writeFile(path.join(bin, 'electron'), `#!/bin/sh\nexec "${process.execPath}" --require "${path.join(here, 'electron-stub.cjs')}" "$@"\n`, { mode: 0o755 });
});

afterAll(async () => {
  await start?.stop('SIGKILL');
  if (tmp) await fs.rm(tmp, { recursive: true, force: true });
});

const logged = async (log: string) => (await fs.readFile(log, 'utf8').catch(() => '')).split('\n').filter(Boolean).map((l) => JSON.parse(l));

/** Whether a process is still there. */
const alive = (pid: number) => {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
};
/** Whether something still answers at 127.0.0.1:port. */
const answers = (port: number) => fetch(`http://127.0.0.1:${port}/`).then(() => true, () => false);

/** Starts `ferry start` with the stand-in app; answers once the app's agent is signed in. */
async function startApp(name: string) {
  const log = path.join(tmp, `${name}.log`);
  const agentPort = await freePort();
  const data = path.join(tmp, `data-${name}`);
  const running = startFerry(['start', '--listen', '127.0.0.1:0', '--s3-listen', '127.0.0.1:0', '--data-dir', data], {
    DISPLAY: ':99',
    FERRY_NO_DESKTOP: undefined,
    ELECTRON_OVERRIDE_DIST_PATH: path.join(tmp, 'electron-dist'),
    FERRY_STUB_LOG: log,
    FERRY_STUB_USERDATA: path.join(tmp, `app-data-${name}`),
    FERRY_AGENT_LISTEN: `127.0.0.1:${agentPort}`,
    // The stand-in Electron is this Node: the addon built for it, not one for Electron's ABI.
    FERRY_SQLITE_BINDING: path.join(here, '..', '..', '..', 'node_modules', 'better-sqlite3', 'build', 'Release', 'better_sqlite3.node'),
  });
  start = running;
  const line = await running.waitFor((l) => l.startsWith('Ferry is open in its desktop window'), 'the desktop line', 60_000);
  expect(line).toBe(`Ferry is open in its desktop window, on a service on this computer (data in ${data}). Quit the app or press Ctrl+C to stop.`);
  // The app's window loads; its agent runs the service and signs in with the first owner's API key.
  await vi.waitFor(async () => {
    const r = await fetch(`http://127.0.0.1:${agentPort}/api/v1/login`);
    expect(((await r.json()) as { user?: { email: string } }).user?.email).toBe('admin@ferry.local');
  }, { timeout: 60_000, interval: 300 });
  await expect(fs.readFile(path.join(data, 'first-owner.txt'), 'utf8')).resolves.toMatch(/^API key +\S+$/m);
  const events = await logged(log);
  expect(events.find((e) => e.stub === 'loadURL')?.detail).toBe('app://ferry/index.html');
  const appPid = events.find((e) => e.stub === 'pid')?.detail as number;
  const agentPid = events.find((e) => e.stub === 'utilityProcess')?.detail.pid as number;
  expect([alive(appPid), alive(agentPid), await answers(agentPort)]).toEqual([true, true, true]);
  return { running, appPid, agentPid, agentPort, log };
}

/** Nothing of the app is left: its process, its agent's process (with the service in it), the agent's port. */
async function allGone(app: { appPid: number; agentPid: number; agentPort: number }) {
  await vi.waitFor(() => expect([alive(app.appPid), alive(app.agentPid)]).toEqual([false, false]), { timeout: 15_000, interval: 100 });
  expect(await answers(app.agentPort)).toBe(false);
}

test('with a display and an Electron runtime, start opens the desktop app on its own service, signed in as the first owner; quitting the app stops start, the agent and the service', async () => {
  const app = await startApp('quit');
  // The user quits the app (as Electron does on the tray's Quit, and on SIGTERM): start ends with it.
  process.kill(app.appPid, 'SIGTERM');
  expect(await app.running.done()).toBe(0);
  await allGone(app);
  // main let the agent record its state first: its quit came after before-quit, not a kill.
  expect((await logged(app.log)).some((e) => e.stub === 'quit')).toBe(true);
});

test('Ctrl+C on start quits the app, its agent and the service', async () => {
  const app = await startApp('ctrl-c');
  expect(await app.running.stop('SIGINT')).toBe(0);
  await allGone(app);
});
