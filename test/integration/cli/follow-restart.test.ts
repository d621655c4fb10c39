// The README's promise, through the CLI: `ferry upload` is following its upload
// when the agent is killed with SIGKILL; it says it lost the agent and waits, the
// agent is started again on the same address and config dir, carries on by
// itself, and the same `ferry upload` sees it complete and prints a Link whose
// file is byte-identical.
import { randomBytes } from 'node:crypto';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, expect, test, vi } from 'vitest';
import { signInAgent } from '../../helpers/agent.js';
import { ownerActor } from '../../helpers/auth.js';
import { jsonLine, startFerry, type Running } from '../../helpers/cli.js';
import { MiB, downloadAll } from '../../helpers/flow.js';
import { startProxiedUploads, type ProxiedUploads } from '../agent/uploads-proxy.js';
import { freePort } from '../../helpers/ports.js';

vi.setConfig({ testTimeout: 120_000, hookTimeout: 120_000 });

const PART = 5 * MiB;
const SIZE = 8 * PART;

let env: ProxiedUploads;
let tmp: string;
let agent: Running | undefined;
let cli: Running | undefined;

beforeAll(async () => {
  env = await startProxiedUploads();
  // Each part waits a little at the store, so the upload is still going when the agent dies.
  env.proxy.rule = () => ({ delayMs: 300 });
  tmp = await fs.mkdtemp(path.join(os.tmpdir(), 'ferry-cli-restart-'));
});

afterAll(async () => {
  await cli?.stop('SIGKILL');
  await agent?.stop('SIGKILL');
  await env?.close();
  if (tmp) await fs.rm(tmp, { recursive: true, force: true });
});

async function startAgent(port: number): Promise<string> {
  agent = startFerry(['agent', '--listen', `127.0.0.1:${port}`, '--config-dir', path.join(tmp, 'agent'), '--hosted-url', env.svc.url,
    '--chunk-size', String(PART), '--concurrency', '2', '--log-level', 'info']);
  const ready = await agent.waitFor((l) => jsonLine(l)?.msg === 'ferry agent ready', 'the ready line');
  return jsonLine(ready)!.url as string;
}

const until = (what: string, ok: () => boolean) =>
  vi.waitFor(() => expect(ok(), what).toBe(true), { timeout: 60_000, interval: 20 });

test('ferry upload follows its upload through a kill -9 and restart of the agent, and prints a Link to the whole file', async () => {
  const data = randomBytes(SIZE);
  const file = path.join(tmp, 'master.mov');
  await fs.writeFile(file, data);
  const owner = await ownerActor(env.svc);
  const port = await freePort();
  const url = await startAgent(port);
  await signInAgent(url, env.svc);

  cli = startFerry(['upload', file, '--team-id', owner.teamId, '--agent', url], { FERRY_AGENT_API_KEY: undefined });
  // Not a terminal: a progress line per tenth. Kill once some parts are recorded, long before the last.
  await until('progress past 10%', () => /^upload \S+\s+[1-6]\d%.*transferring$/m.test(cli!.stderr()));
  await agent!.stop('SIGKILL');
  await until('the CLI says it lost the agent', () => cli!.stderr().includes(`lost the agent at ${url}; the upload is kept`));
  expect(cli.child.exitCode).toBeNull();

  await startAgent(port);
  expect(await cli.done()).toBe(0);
  expect(cli.stderr()).toContain('the agent answers again');
  expect(cli.stderr().trimEnd().split('\n').pop()).toMatch(/^upload \S+\s+100%\s+40\.0 MiB \/ 40\.0 MiB\s+complete$/);
  const link = /^link: \S+\/l\/([^?\s]+)\?secret=(\S+)$/m.exec(cli.lines.join('\n'));
  expect(link, cli.lines.join('\n')).not.toBeNull();
  const got = await downloadAll(env.svc, { id: link![1]!, secret: decodeURIComponent(link![2]!) });
  expect([...got.keys()]).toEqual(['master.mov']);
  expect(got.get('master.mov')!.equals(data)).toBe(true);
});
