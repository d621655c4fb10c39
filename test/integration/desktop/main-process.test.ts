// The built desktop main process (dist/desktop/main.cjs) run under plain Node with
// a stand-in for the `electron` module (electron-stub.cjs): it opens one locked-down
// window on app://ferry/, starts the agent's process (dist/desktop/agent.mjs) beside
// it, relays the window's requests to that real agent (refusing a foreign frame),
// tells the window the agent's connection, shows the tray, and on quit lets the
// agent stop first. The window's handlers refuse navigation, new windows and
// permissions; app:// serves nothing outside the renderer's folder; a Link handed
// over by a second instance or open-url opens Receive; the app's settings persist.
import { fork, type ChildProcess } from 'node:child_process';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { afterAll, beforeAll, expect, test, vi } from 'vitest';
import { startTestService, type TestService } from '../../helpers/hosted.js';
import { repoRoot } from '../../helpers/cli.js';

vi.setConfig({ testTimeout: 60_000, hookTimeout: 60_000 });
const here = path.dirname(fileURLToPath(import.meta.url));

let svc: TestService;
let tmp: string;
let main: ChildProcess | undefined;
const stub: { stub: string; detail: any }[] = [];
const answers = new Map<number, unknown>();

beforeAll(async () => {
  svc = await startTestService();
  tmp = await fs.mkdtemp(path.join(os.tmpdir(), 'ferry-desktop-'));
});

afterAll(async () => {
  if (main && main.exitCode === null && main.signalCode === null) main.kill('SIGKILL');
  await svc?.close();
  if (tmp) await fs.rm(tmp, { recursive: true, force: true });
});

let seq = 0;
async function ask(channel: string, request: unknown = {}, foreign = false): Promise<any> {
  const id = ++seq;
  main!.send({ invoke: channel, request, id, foreign });
  await vi.waitFor(() => expect(answers.has(id)).toBe(true), { timeout: 20_000 });
  return answers.get(id);
}
/** What Electron would do with the window's handlers and the app's events (electron-stub.cjs's probes). */
async function probe(what: Record<string, unknown>): Promise<any> {
  const id = ++seq;
  main!.send({ ...what, id });
  await vi.waitFor(() => expect(answers.has(id)).toBe(true), { timeout: 20_000 });
  return answers.get(id);
}
const seen = (what: string) => stub.filter((s) => s.stub === what).map((s) => s.detail);

/** Runs the built main process on the stand-in Electron, its app data in `userData`. */
function startMain(userData: string): ChildProcess {
  stub.length = 0;
  const m = fork(path.join(repoRoot, 'dist', 'desktop', 'main.cjs'), [], {
    execArgv: ['--require', path.join(here, 'electron-stub.cjs')],
    env: { ...process.env, FERRY_AGENT_HOSTED_URL: svc.url, FERRY_AGENT_LISTEN: '127.0.0.1:0', FERRY_STUB_USERDATA: userData },
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  });
  m.on('message', (x: any) => (x?.stub ? stub.push(x) : x?.id !== undefined && answers.set(x.id, x.probed ?? x.answer)));
  return m;
}
async function quitMain(): Promise<void> {
  const exited = new Promise((r) => main!.once('exit', r));
  main!.send({ quit: true });
  await exited;
}

test('main opens the window, runs the agent beside it, relays to it, and stops it on quit', async () => {
  main = startMain(tmp);

  // One window, locked down, on the app's own scheme.
  // A process's start, on a machine that may be busy with other suites.
  await vi.waitFor(() => expect(seen('loadURL')).toEqual(['app://ferry/index.html']), { timeout: 20_000 });
  expect(seen('window')).toEqual([{ width: 1100, height: 720, webPreferences: expect.objectContaining({ contextIsolation: true, sandbox: true, nodeIntegration: false, webSecurity: true }) }]);
  expect(seen('protocol')).toEqual(['app']);
  expect(seen('scheme')).toEqual(['ferry']);
  expect(seen('utilityProcess')[0].modulePath).toBe(path.join(repoRoot, 'dist', 'desktop', 'agent.mjs'));

  // The window hears that the agent is connected, and the tray shows there is nothing to transfer.
  await vi.waitFor(() => expect(seen('send').some((s) => s.channel === 'ferry:event:agent.connection' && s.payload === 'connected')).toBe(true), { timeout: 30_000 });
  await vi.waitFor(() => expect(seen('tooltip')).toContain('Ferry: nothing to transfer'));
  await vi.waitFor(() => expect(seen('menu')[0]).toEqual(['Open Ferry', 'Pause all', 'Resume all', 'Quit']));

  // Requests of the app's own frame reach the real agent; a foreign frame's do not.
  expect(await ask('session.current')).toEqual({ ok: true, value: null });
  const login = await ask('session.login', { email: svc.owner.email, password: svc.owner.password });
  expect(login.ok).toBe(true);
  expect(login.value.user.email).toBe(svc.owner.email);
  expect(await ask('teams.list', {}, true)).toEqual({ ok: false, error: { code: 262148, message: "not the app's own window" } });

  // Quit: the agent records its state and stops, then main exits.
  const agentPid = seen('utilityProcess')[0].pid as number;
  const exited = new Promise((r) => main!.once('exit', r));
  main.send({ quit: true });
  await exited;
  expect(seen('quit').length).toBeGreaterThan(0);
  expect(() => process.kill(agentPid, 0)).toThrow(); // the agent's process is gone
});

test('the window is locked down: no navigation, no new windows (web links go to the browser), no permissions, app:// serves only the renderer\'s folder; Links handed over open Receive; the app\'s settings persist', async () => {
  const userData = path.join(tmp, 'locked-down');
  main = startMain(userData);
  // A process's start, on a machine that may be busy with other suites.
  await vi.waitFor(() => expect(seen('loadURL')).toEqual(['app://ferry/index.html']), { timeout: 20_000 });
  await vi.waitFor(() => expect(seen('send').some((s) => s.channel === 'ferry:event:agent.connection' && s.payload === 'connected')).toBe(true), { timeout: 30_000 });

  expect(await probe({ probe: 'navigate', url: 'https://evil.example/' })).toEqual({ prevented: true });
  expect(await probe({ probe: 'windowOpen', url: 'https://example.com/help' })).toEqual({ action: 'deny' });
  expect(await probe({ probe: 'windowOpen', url: 'file:///etc/passwd' })).toEqual({ action: 'deny' });
  expect(await probe({ probe: 'windowOpen', url: 'javascript:alert(1)' })).toEqual({ action: 'deny' });
  expect(seen('openExternal')).toEqual(['https://example.com/help']); // only the web link went to the browser
  for (const permission of ['media', 'geolocation', 'notifications', 'clipboard-read']) expect(await probe({ probe: 'permission', permission }), permission).toBe(false);

  const renderer = path.join(repoRoot, 'dist', 'renderer');
  expect(await probe({ probe: 'protocol', url: 'app://ferry/index.html' })).toEqual({ status: 200, body: pathToFileURL(path.join(renderer, 'index.html')).toString() });
  for (const url of ['app://ferry/..%2f..%2f..%2fetc%2fpasswd', 'app://ferry/%2e%2e%2fdesktop%2fmain.cjs', 'app://ferry/']) {
    expect((await probe({ probe: 'protocol', url })).status, url).toBe(404);
  }

  // A Link from a second instance's command line, and from macOS's open-url, opens Receive with it.
  const link = 'https://ferry.example/l/lnk_abc?secret=s3cret';
  await probe({ probe: 'secondInstance', argv: ['/opt/Ferry/ferry', '--flag', link] });
  expect(await probe({ probe: 'openUrl', url: `ferry://receive?url=${encodeURIComponent(link)}` })).toEqual({ prevented: true });
  expect(seen('send').filter((s) => s.channel === 'ferry:event:app.receive').map((s) => s.payload)).toEqual([{ url: link }, { url: link }]);
  await probe({ probe: 'openUrl', url: 'ferry://receive?url=https%3A%2F%2Fevil.example%2Fnot-a-link' });
  expect(seen('send').filter((s) => s.channel === 'ferry:event:app.receive')).toHaveLength(2);

  // The app's own settings are written to its data folder and read back at the next start.
  expect(await ask('app.setSettings', { closeToTray: false, startAtLogin: true })).toEqual({ ok: true, value: { closeToTray: false, notifications: true, startAtLogin: true } });
  expect(await ask('app.setSettings', { closeToTray: 'no' })).toEqual({ ok: false, error: { code: 262145, message: 'Close to tray is true or false.', field: 'closeToTray' } });
  // Main's own channels are checked against the contract's schemas in the built bundle too; without an update, nothing restarts.
  expect(await ask('app.showInFolder', {})).toEqual({ ok: false, error: { code: 262145, message: 'The folder is missing.', field: 'path' } });
  expect(await ask('app.restartToUpdate')).toEqual({ ok: false, error: { code: 262150, message: 'No update is ready to install.' } });
  await quitMain();
  expect(JSON.parse(await fs.readFile(path.join(userData, 'settings.json'), 'utf8'))).toMatchObject({ closeToTray: false, notifications: true });
  main = startMain(userData);
  await vi.waitFor(() => expect(seen('loadURL')).toHaveLength(1), { timeout: 20_000 });
  expect((await ask('app.getSettings')).value).toMatchObject({ closeToTray: false, notifications: true });
  await quitMain();
});
