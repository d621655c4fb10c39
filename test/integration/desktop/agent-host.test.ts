// The hosted agent over a real port: the supervisor (main's side) starts the
// agent's own process (src/cli/agentProcess.ts, as the desktop app's
// utilityProcess does, here a Node child with an IPC channel), sends requests and
// hears events; killed with SIGKILL mid-upload, the agent is started again after
// the back-off, the connection says "reconnecting" meanwhile, and the upload
// goes on from SQLite to complete.
import type { ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, expect, test, vi } from 'vitest';
import { startTestService, type TestService } from '../../helpers/hosted.js';
import { ownerActor, type Actor } from '../../helpers/auth.js';
import { repoRoot } from '../../helpers/cli.js';
import { applyChange, keyOfChange, transferKey, type TransferSummary } from '../../../src/ipc/transfers.js';
import { forkAgentProcess } from '../../helpers/agentProcess.js';
import { AgentSupervisor, type AgentChild, type Connection } from '../../../main/supervisor.js';
import type { TransferEvent } from '../../../src/ipc/contract.js';

vi.setConfig({ testTimeout: 120_000, hookTimeout: 60_000 });
const MiB = 1024 * 1024;

let svc: TestService;
let owner: Actor;
let tmp: string;
let sup: AgentSupervisor | undefined;
const children: ChildProcess[] = [];

beforeAll(async () => {
  svc = await startTestService();
  owner = await ownerActor(svc);
  tmp = await fs.mkdtemp(path.join(os.tmpdir(), 'ferry-agent-host-'));
});

afterAll(async () => {
  await sup?.stop(5000);
  for (const c of children) if (c.exitCode === null && c.signalCode === null) c.kill('SIGKILL');
  await svc?.close();
  if (tmp) await fs.rm(tmp, { recursive: true, force: true });
});

/** The agent's process as the desktop app starts it, over Node's IPC channel instead of Electron's port. */
function spawnAgent(): AgentChild {
  return forkAgentProcess({ listen: '127.0.0.1:0', 'hosted-url': svc.url, 'config-dir': path.join(tmp, 'agent'), 'chunk-size': String(5 * MiB), concurrency: '1', 'log-level': 'silent' }, children);
}

test('requests, events, a kill -9 of the agent and its restart: the upload completes and the window heard it all', async () => {
  const states: Connection[] = [];
  const logs: string[] = [];
  sup = new AgentSupervisor({ spawn: spawnAgent, firstDelayMs: 200, onLog: (m) => logs.push(m) });
  sup.onConnection((c) => states.push(c));
  const events: TransferEvent[] = [];
  sup.on('transfers.changed', (batch) => events.push(...batch));
  sup.start();
  await vi.waitFor(() => expect(sup!.state).toBe('connected'), { timeout: 30_000 });
  expect(sup.restUrl).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/api\/v1$/);

  // Errors cross as data; then a sign-in and an upload.
  expect(await sup.invoke('teams.list', {})).toEqual({ ok: false, error: { code: 262146, message: 'session is nil' } });
  expect(await sup.invoke('no.such', {})).toEqual({ ok: false, error: { code: 262145, message: 'no channel "no.such"' } });
  const login = await sup.invoke('session.login', { email: svc.owner.email, password: svc.owner.password });
  expect(login.ok).toBe(true);
  const data = randomBytes(300 * MiB);
  await fs.writeFile(path.join(tmp, 'big.bin'), data);
  const up = await sup.invoke('uploads.create', { team_id: owner.teamId, paths: [path.join(tmp, 'big.bin')] });
  expect(up.ok, JSON.stringify(up)).toBe(true);
  const id = (up as { ok: true; value: { upload_id: string } }).value.upload_id;
  const progressOf = () => events.filter((e) => keyOfChange(e) === transferKey('upload', id)).reduce<TransferSummary | undefined>(applyChange, undefined)?.progress ?? 0;
  await vi.waitFor(() => expect(progressOf()).toBeGreaterThan(0), { timeout: 30_000, interval: 20 });

  // The agent's process dies mid-upload.
  children.at(-1)!.kill('SIGKILL');
  await vi.waitFor(() => expect(states).toContain('reconnecting'), { timeout: 10_000 });
  await vi.waitFor(() => expect(sup!.state).toBe('connected'), { timeout: 30_000 });
  expect(children.length).toBe(2);
  expect(logs.some((l) => /the agent stopped \(killed\); starting it again in 200 ms/.test(l)), logs.join('\n')).toBe(true);

  // The new agent carries on from SQLite, still signed in, and the window hears it to the end.
  await vi.waitFor(async () => {
    const snap = await sup!.invoke('transfers.snapshot', {});
    expect(snap.ok).toBe(true);
    const u = (snap as { ok: true; value: { uploads: { upload_id: string; state: string }[] } }).value.uploads.find((x) => x.upload_id === id);
    expect(u?.state).toBe('complete');
  }, { timeout: 90_000, interval: 200 });
  expect((await sup.invoke('session.current', {})).ok).toBe(true);
  expect(states).toEqual(['connecting', 'connected', 'reconnecting', 'connected']);

  // A shutdown lets the agent record its state and exit by itself.
  await sup.stop(10_000);
  expect(children.at(-1)!.exitCode).toBe(0);
});
