// The agent's command line as real child processes: `ferry agent` (ready line,
// /health, POST /shutdown, signals) and the client commands (login, teams, about,
// logout, upload, download, uploads, downloads) against a real service and agent.
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, test, vi } from 'vitest';
import { ferry, jsonLine, startFerry, type Running } from '../../helpers/cli.js';
import { call, startTestService, type TestService } from '../../helpers/hosted.js';
import { startTestAgent, type TestAgent } from '../../helpers/agent.js';
import { ownerActor, type Actor } from '../../helpers/auth.js';
import { freePort } from '../../helpers/ports.js';

vi.setConfig({ testTimeout: 120_000, hookTimeout: 120_000 });

let svc: TestService;
let owner: Actor;
let a: TestAgent;
let root: string;
const running: Running[] = [];
const launch = (args: string[], env: Record<string, string | undefined> = {}) => {
  const r = startFerry(args, env);
  running.push(r);
  return r;
};
/** Runs a client command against the test agent, with no agent settings leaking in from the environment. */
const run = (args: string[], env: Record<string, string | undefined> = {}) =>
  ferry([...args, '--agent', a.url], { FERRY_AGENT_URL: undefined, FERRY_AGENT_API_KEY: undefined, FERRY_PASSWORD: undefined, ...env });

beforeAll(async () => {
  root = await fs.mkdtemp(path.join(os.tmpdir(), 'ferry-cli-agent-'));
  svc = await startTestService();
  owner = await ownerActor(svc);
  a = await startTestAgent(svc);
});
afterAll(async () => {
  await Promise.all(running.map((r) => r.stop('SIGKILL')));
  await a?.close();
  await svc?.close();
  await fs.rm(root, { recursive: true, force: true });
});

describe('ferry agent', () => {
  const args = (dir: string, ...more: string[]) => ['agent', '--listen', '127.0.0.1:0', '--config-dir', path.join(root, dir), '--hosted-url', svc.url, ...more];
  const ready = async (r: Running) => jsonLine(await r.waitFor((l) => jsonLine(l)?.msg === 'ferry agent ready', 'ready line'))!;

  test('logs a ready line with its URL, serves /health, and exits 0 after POST /shutdown', async () => {
    const agent = launch(args('shutdown'));
    const line = await ready(agent);
    expect(line.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/api\/v1$/);
    const url = line.url as string;
    expect((await call(url, 'GET', '/health')).body).toEqual({ code: 0, database: 'ok', hosted: 'reachable' });
    expect((await call(url, 'POST', '/shutdown')).body).toEqual({ code: 0 });
    expect(await agent.done()).toBe(0);
    expect(agent.lines.some((l) => jsonLine(l)?.msg === 'stopped')).toBe(true);
  });

  test.each(['SIGTERM', 'SIGINT'] as const)('exits 0 on %s', async (signal) => {
    const agent = launch(args(signal));
    const line = await ready(agent);
    expect((await call(line.url as string, 'GET', '/health')).status).toBe(200);
    expect(await agent.stop(signal)).toBe(0);
    expect(agent.lines.some((l) => jsonLine(l)?.msg === 'shutting down')).toBe(true);
  });

  test('takes its settings from FERRY_AGENT_* and requires its --api-key', async () => {
    const agent = launch(['agent', '--config-dir', path.join(root, 'env')], {
      FERRY_AGENT_LISTEN: '127.0.0.1:0', FERRY_AGENT_HOSTED_URL: svc.url, FERRY_AGENT_CHUNK_SIZE: String(6 * 1024 * 1024), FERRY_AGENT_API_KEY: owner.apiKey,
    });
    const url = (await ready(agent)).url as string;
    expect((await call(url, 'GET', '/about')).status).toBe(401);
    const about = await call(url, 'GET', '/about', { headers: { 'x-api-key': owner.apiKey } });
    expect(about.body.settings.chunk_size).toBe(6 * 1024 * 1024);
    expect(about.body.masv_host).toBe(svc.url);
    expect(await agent.stop()).toBe(0);
  });

  test.each([
    [['--concurrency', '0'], /--concurrency must be an integer from 1 to 64/],
    [['--auto-finalize', 'perhaps'], /--auto-finalize must be true or false/],
    [['--log-level', 'loud'], /--log-level must be one of/],
    [['--listen', 'nowhere'], /--listen must be HOST:PORT/],
    [['--bogus'], /Unknown option '--bogus'/],
  ])('bad usage %j exits 2 with a message', async (more, message) => {
    const r = await ferry(['agent', '--config-dir', path.join(root, 'bad'), ...more]);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(message);
  });

  test('a port in use exits 1', async () => {
    const port = new URL(a.url).port;
    const r = await ferry(['agent', '--listen', `127.0.0.1:${port}`, '--config-dir', path.join(root, 'busy'), '--hosted-url', svc.url, '--log-level', 'silent']);
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/EADDRINUSE/);
  });

  test('a second agent on the same config dir exits 1 and names the dir; the first keeps serving; after kill -9 the dir is free at once', async () => {
    const first = launch(args('shared'));
    const url = (await ready(first)).url as string;
    const second = await ferry([...args('shared'), '--log-level', 'silent']);
    expect(second.code).toBe(1);
    expect(second.stderr).toContain(`another ferry agent is using ${path.join(root, 'shared')}`);
    expect((await call(url, 'GET', '/health')).status).toBe(200);

    await first.stop('SIGKILL');
    const third = launch(args('shared'));
    expect((await call((await ready(third)).url as string, 'GET', '/health')).status).toBe(200);
  });

  test('--help prints the options and exits 0', async () => {
    const r = await ferry(['agent', '--help']);
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/--auto-finalize/);
  });
});

describe('ferry about', () => {
  test('prints the version, the service and the settings', async () => {
    const r = await run(['about']);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toMatch(/^ferry agent \d+\.\d+\.\d+/);
    expect(r.stdout).toContain(`service:  ${svc.url}`);
    expect(r.stdout).toMatch(/auto-finalize on, chunk size 100 MiB, 8 parts in flight/);
  });

  test('--json prints GET /about as it is', async () => {
    const r = await run(['about', '--json']);
    expect(r.code).toBe(0);
    expect(JSON.parse(r.stdout)).toEqual((await call(a.url, 'GET', '/about')).body);
  });

  test('FERRY_AGENT_URL names the agent; a bare http://host:port gets /api/v1', async () => {
    const r = await ferry(['about', '--json'], { FERRY_AGENT_URL: a.url.replace(/\/api\/v1$/, '') });
    expect(r.code, r.stderr).toBe(0);
    expect(JSON.parse(r.stdout).masv_host).toBe(svc.url);
  });

  test('an agent that is not running: exit 1 and a hint', async () => {
    const r = await ferry(['about', '--agent', `http://127.0.0.1:${await freePort()}`]);
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/cannot reach the agent .*is "ferry agent" running/);
  });

  test('an agent with an API key: without it exit 1, with --api-key or FERRY_AGENT_API_KEY exit 0', async () => {
    const keyed = await startTestAgent(svc, { 'api-key': owner.apiKey });
    try {
      const without = await ferry(['about', '--agent', keyed.url], { FERRY_AGENT_API_KEY: undefined });
      expect(without.code).toBe(1);
      expect(without.stderr).toMatch(/X-API-Key .*--api-key/);
      expect((await ferry(['about', '--agent', keyed.url, '--api-key', owner.apiKey])).code).toBe(0);
      const viaEnv = await ferry(['teams', '--agent', keyed.url, '--json'], { FERRY_AGENT_API_KEY: owner.apiKey });
      expect(viaEnv.code, viaEnv.stderr).toBe(0);
      expect(JSON.parse(viaEnv.stdout).map((t: { id: string }) => t.id)).toEqual([owner.teamId]);
    } finally {
      await keyed.close();
    }
  });
});

describe('ferry login, teams, logout', () => {
  test('teams without a session: exit 1, "not signed in"', async () => {
    const r = await run(['teams']);
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/not signed in: run "ferry login"/);
  });

  test('a wrong password: exit 1, and no session', async () => {
    const r = await run(['login', '--email', svc.owner.email, '--password', 'wrong password']);
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/ferry login: .*401/);
    expect((await call(a.url, 'GET', '/login')).status).toBe(401);
  });

  test.each([
    [['login', '--password', 'x'], /--email is required/],
    [['login', '--email', 'owner@example.com'], /--password \(or FERRY_PASSWORD\) is required/],
    [['login', '--email', 'e@example.com', '--password', 'p', '--nope'], /Unknown option '--nope'/],
    [['teams', 'extra'], /Unexpected argument/],
  ])('bad usage %j: exit 2', async (args, message) => {
    const r = await run(args);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(message);
  });

  test('login with FERRY_PASSWORD signs in and names the Teams', async () => {
    const r = await run(['login', '--email', svc.owner.email], { FERRY_PASSWORD: svc.owner.password });
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toContain(`signed in as`);
    expect(r.stdout).toContain(`<${svc.owner.email}>`);
    expect(r.stdout).toContain(`(id ${owner.teamId})`);
    expect((await call(a.url, 'GET', '/login')).status).toBe(200);
  });

  test('login --json prints {user, teams}', async () => {
    const r = await run(['login', '--email', svc.owner.email, '--password', svc.owner.password, '--json']);
    expect(r.code, r.stderr).toBe(0);
    const body = JSON.parse(r.stdout);
    expect(body.user).toEqual({ id: owner.userId, email: svc.owner.email, name: expect.any(String) });
    expect(body.teams.map((t: { id: string }) => t.id)).toEqual([owner.teamId]);
  });

  test('teams prints a table; --json the array', async () => {
    const r = await run(['teams']);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout.split('\n')[0]).toMatch(/^TEAM ID\s+NAME\s+SUBDOMAIN/);
    expect(r.stdout).toContain(owner.teamId);
    const j = await run(['teams', '--json']);
    expect(JSON.parse(j.stdout)).toEqual((await call(a.url, 'GET', '/teams')).body);
  });

  test('logout signs out; teams then fails', async () => {
    const r = await run(['logout']);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout.trim()).toBe('signed out');
    expect((await run(['teams'])).code).toBe(1);
    const j = await run(['logout', '--json']);
    expect(JSON.parse(j.stdout)).toEqual({ code: 0 });
  });
});

describe('bad usage of the transfer commands: exit 2', () => {
  test.each([
    [['upload', '--team-id', 'x'], /name at least one file or folder/],
    [['upload', 'a.txt'], /--team-id is required/],
    [['upload', 'a.txt', '--team-id', 'x', '--priority', 'high'], /--priority must be an integer/],
    [['upload', 'a.txt', '--team-id', 'x', '--chunk-size', '0'], /--chunk-size must be an integer of at least 1/],
    [['portal-upload', 'a.txt', '--sender-email', 'a@b.c'], /--subdomain is required/],
    [['portal-upload', 'a.txt', '--subdomain', 's', '--sender-email', 'a@b.c', '--metadata', 'novalue'], /--metadata takes KEY=VALUE/],
    [['download'], /name the Link URL/],
    [['download', 'not-a-url'], /is not a Link URL/],
    [['uploads'], /usage: ferry uploads/],
    [['uploads', 'explode'], /unknown action "explode"/],
    [['uploads', 'get'], /name the upload id/],
    [['uploads', 'rm'], /name one upload id, or --states LIST, or --all/],
    [['downloads', 'rm', 'x', '--all'], /name one download id, or --states LIST, or --all/],
    [['uploads', 'link', 'x', '--access-limit', '0'], /--access-limit must be an integer of at least 1/],
  ])('%j', async (args, message) => {
    const r = await run(args);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(message);
  });

  test.each([
    ['ftp://x', /must start with http/],
    ['not a url', /is not a URL/],
  ])('--agent %s', async (url, message) => {
    const r = await ferry(['about', '--agent', url]);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(message);
  });
});
