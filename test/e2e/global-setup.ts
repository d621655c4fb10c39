// Starts what a user runs: `ferry serve` (with its embedded store) and
// `ferry agent --ui` (three: one on that service, one with an API key, one with
// no server yet) as processes on free loopback ports, with temporary data,
// and tells the tests where they are (FERRY_E2E_*). The returned function stops them.
import { spawn, type ChildProcess } from 'node:child_process';
import { createWriteStream, mkdirSync } from 'node:fs';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { freePort } from '../helpers/ports.js';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
/** Each process's output, kept for reading after a failure (CI keeps .test-results). */
const LOGS = path.join(root, '.test-results', 'e2e-logs');

export function start(args: string[], ready: string, env: Record<string, string> = {}): Promise<ChildProcess> {
  const child = spawn(process.execPath, [path.join(root, 'bin', 'ferry.cjs'), ...args], { cwd: root, env: { ...process.env, NODE_NO_WARNINGS: '1', ...env } });
  mkdirSync(LOGS, { recursive: true });
  const log = createWriteStream(path.join(LOGS, `${args[0]}-${child.pid}.log`));
  child.stdout!.pipe(log, { end: false });
  child.stderr!.pipe(log, { end: false });
  child.once('close', () => log.end());
  let out = '';
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`ferry ${args[0]} did not start:\n${out}`)), 60_000);
    const onData = (d: Buffer) => {
      out += d;
      if (out.includes(ready)) {
        clearTimeout(timer);
        resolve(child);
      }
    };
    child.stdout!.on('data', onData);
    child.stderr!.on('data', (d: Buffer) => (out += d));
    child.once('exit', (code) => reject(new Error(`ferry ${args[0]} exited (${code}):\n${out}`)));
  });
}

/** Stops a program a test started (SIGTERM), and waits for it to exit. */
export async function stop(a: ChildProcess | undefined): Promise<void> {
  if (a && a.exitCode === null && a.signalCode === null) {
    const gone = new Promise((r) => a.once('exit', r));
    a.kill('SIGTERM');
    await gone;
  }
}

export default async function globalSetup(): Promise<() => Promise<void>> {
  const tmp = await fs.mkdtemp(path.join(os.tmpdir(), 'ferry-e2e-'));
  const [api, agentPort] = [await freePort(), await freePort()];
  const owner = { email: 'owner@example.com', password: 'correct horse battery' };
  const serve = await start(['serve', '--listen', `127.0.0.1:${api}`, '--s3-listen', `127.0.0.1:${await freePort()}`, '--data-dir', path.join(tmp, 'hosted'), '--init-owner', `${owner.email}:${owner.password}`,
    // The suite signs in from one address far more often than a person would.
    '--rate-limit-sign-in', '1000', '--rate-limit-public', '10000'], 'ferry hosted service ready');
  const agentArgs = ['agent', '--ui', '--listen', `127.0.0.1:${agentPort}`, '--hosted-url', `http://127.0.0.1:${api}`, '--config-dir', path.join(tmp, 'agent'), '--chunk-size', String(5 * 1024 * 1024), '--concurrency', '1'];
  const agent = await start(agentArgs, 'ferry agent ready');
  // A second agent, started with an API key: its page asks for the key first.
  const lockedPort = await freePort();
  const locked = await start(['agent', '--ui', '--api-key', 'e2e-agent-key', '--listen', `127.0.0.1:${lockedPort}`, '--hosted-url', `http://127.0.0.1:${api}`, '--config-dir', path.join(tmp, 'locked-agent')], 'ferry agent ready');
  // A third agent with no server of its own yet: "Try it on this computer" runs one beside it (ferry serve's FERRY_* settings).
  const tryPort = await freePort();
  const tryIt = await start(['agent', '--ui', '--listen', `127.0.0.1:${tryPort}`, '--config-dir', path.join(tmp, 'try-agent')], 'ferry agent ready', {
    FERRY_DATA_DIR: path.join(tmp, 'try-service'), FERRY_LISTEN: `127.0.0.1:${await freePort()}`, FERRY_S3_LISTEN: `127.0.0.1:${await freePort()}`,
  });
  Object.assign(process.env, {
    FERRY_E2E_TRY_APP: `http://127.0.0.1:${tryPort}`,
    FERRY_E2E_APP: `http://127.0.0.1:${agentPort}`,
    FERRY_E2E_SERVICE: `http://127.0.0.1:${api}`,
    // A test kills this agent and starts it again with the same arguments.
    FERRY_E2E_AGENT_PID: String(agent.pid),
    FERRY_E2E_AGENT_ARGS: JSON.stringify(agentArgs),
    FERRY_E2E_LOCKED_APP: `http://127.0.0.1:${lockedPort}`,
    FERRY_E2E_TMP: tmp,
    FERRY_E2E_EMAIL: owner.email,
    FERRY_E2E_PASSWORD: owner.password,
  });
  return async () => {
    for (const c of [tryIt, locked, agent, serve]) {
      if (c.exitCode === null && c.signalCode === null) {
        const gone = new Promise((r) => c.once('exit', r));
        c.kill('SIGTERM');
        await gone;
      }
    }
    await fs.rm(tmp, { recursive: true, force: true });
  };
}
