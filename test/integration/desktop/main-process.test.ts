// The built desktop main process (dist/desktop/main.cjs) run under plain Node with
// a stand-in for the `electron` module (electron-stub.cjs): it opens one locked-down
// window on app://ferry/, starts the agent's process (dist/desktop/agent.mjs) beside
// it, relays the window's requests to that real agent (refusing a foreign frame),
// tells the window the agent's connection, shows the tray, and on quit lets the
// agent stop first.
import { fork, type ChildProcess } from 'node:child_process';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
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
const seen = (what: string) => stub.filter((s) => s.stub === what).map((s) => s.detail);

test('main opens the window, runs the agent beside it, relays to it, and stops it on quit', async () => {
  main = fork(path.join(repoRoot, 'dist', 'desktop', 'main.cjs'), [], {
    execArgv: ['--require', path.join(here, 'electron-stub.cjs')],
    env: { ...process.env, FERRY_AGENT_HOSTED_URL: svc.url, FERRY_AGENT_LISTEN: '127.0.0.1:0', FERRY_STUB_USERDATA: tmp },
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  });
  main.on('message', (m: any) => (m?.stub ? stub.push(m) : m?.id !== undefined && answers.set(m.id, m.answer)));

  // One window, locked down, on the app's own scheme.
  await vi.waitFor(() => expect(seen('loadURL')).toEqual(['app://ferry/index.html']));
  expect(seen('window')).toEqual([{ width: 1100, height: 720, webPreferences: expect.objectContaining({ contextIsolation: true, sandbox: true, nodeIntegration: false, webSecurity: true }) }]);
  expect(seen('protocol')).toEqual(['app']);
  expect(seen('scheme')).toEqual(['ferry']);
  expect(seen('utilityProcess')[0].modulePath).toBe(path.join(repoRoot, 'dist', 'desktop', 'agent.mjs'));

  // The window hears that the agent is connected, and the tray shows there is nothing to transfer.
  await vi.waitFor(() => expect(seen('send').some((s) => s.channel === 'ferry:event:agent.connection' && s.payload === 'connected')).toBe(true), { timeout: 30_000 });
  await vi.waitFor(() => expect(seen('tooltip')).toContain('Ferry: nothing to transfer'));
  expect(seen('menu')[0]).toEqual(['Open Ferry', 'Pause all', 'Resume all', 'Quit']);

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
