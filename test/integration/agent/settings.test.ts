// The agent's settings (GET/PATCH /settings, the app's Settings screen) on a real
// agent and service: transfer settings apply at once and land in config.yml;
// bad values and settings fixed by a flag are refused; the connection settings
// start the agent again (runAgent, as `ferry agent` runs it) on its new address
// and key; a new server ends the session.
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import net from 'node:net';
import pino from 'pino';
import { parse as parseYaml } from 'yaml';
import { afterAll, afterEach, beforeAll, describe, expect, test, vi } from 'vitest';
import { call, startTestService, type TestService } from '../../helpers/hosted.js';
import { startTestAgent, type TestAgent } from '../../helpers/agent.js';
import { freePort, stablePort } from '../../helpers/ports.js';
import { runAgent, type AgentRun } from '../../../src/cli/runAgent.js';

vi.setConfig({ testTimeout: 60_000 });
const MiB = 1024 * 1024;
let svc: TestService;
beforeAll(async () => {
  svc = await startTestService();
});
afterAll(async () => {
  await svc?.close();
});

describe('on a running agent', () => {
  let agent: TestAgent;
  beforeAll(async () => {
    agent = await startTestAgent(svc);
  });
  afterAll(async () => {
    await agent?.close();
  });

  test('GET /settings: every setting, with those given by a flag locked and why', async () => {
    const r = await call(agent.url, 'GET', '/settings');
    expect(r.status).toBe(200);
    expect(r.body).toMatchObject({
      hosted_url: svc.url, this_computer: false, concurrency: 8, chunk_size: 100 * MiB, auto_finalize: true, local_api: true, local_api_key: null,
      locked: { hosted_url: 'set by --hosted-url where the agent was started', listen: 'set by --listen where the agent was started' },
    });
    expect(r.body.listen).toMatch(/^127\.0\.0\.1:0$/);
  });

  test('transfer settings apply at once, without a restart, and are kept in config.yml', async () => {
    const r = await call(agent.url, 'PATCH', '/settings', { body: { concurrency: 3, chunk_size: 6 * MiB, auto_finalize: false } });
    expect(r.status).toBe(200);
    expect(r.body).toMatchObject({ restarting: false, settings: { concurrency: 3, chunk_size: 6 * MiB, auto_finalize: false } });
    expect((await call(agent.url, 'GET', '/about')).body.settings).toEqual({ concurrency: 3, chunk_size: 6 * MiB, auto_finalize: false });
    expect(parseYaml(await fs.readFile(path.join(agent.configDir, 'config.yml'), 'utf8'))).toEqual({ concurrency: 3, chunk_size: 6 * MiB, auto_finalize: false });
    // A new upload takes the new chunk size and stays unfinalized.
    const dir = await fs.mkdtemp(path.join(os.tmpdir(), 'ferry-settings-'));
    try {
      await fs.writeFile(path.join(dir, 'a.bin'), Buffer.alloc(1024, 7));
      const teams = (await call(agent.url, 'POST', '/login', { body: svc.owner })).body.teams as { id: string }[];
      const up = await call(agent.url, 'POST', '/uploads', { body: { team_id: teams[0]!.id, paths: [path.join(dir, 'a.bin')] } });
      expect(up.status).toBe(201);
      const row = agent.agent.ctx.db.prepare('SELECT chunk_size, auto_finalize FROM uploads WHERE id = ?').get(up.body.upload_id);
      expect(row).toEqual({ chunk_size: 6 * MiB, auto_finalize: 0 });
    } finally {
      await fs.rm(dir, { recursive: true, force: true });
    }
  });

  test('bad values, unknown settings and an empty change answer 400; a setting given by a flag answers 409; nothing is written', async () => {
    const before = await fs.readFile(path.join(agent.configDir, 'config.yml'), 'utf8');
    for (const body of [{ concurrency: 0 }, { concurrency: 65 }, { chunk_size: 1024 }, { auto_finalize: 'yes' }, { colour: 'blue' }, {}, { local_api_key: 'short' }]) {
      const r = await call(agent.url, 'PATCH', '/settings', { body });
      expect(r.status, JSON.stringify(body)).toBe(400);
      expect(r.body).toMatchObject({ code: expect.any(Number), message: expect.any(String) });
    }
    const locked = await call(agent.url, 'PATCH', '/settings', { body: { listen: '127.0.0.1:9' } });
    expect(locked.status).toBe(409);
    expect(locked.body.message).toBe('The local API address cannot be changed here: it is set by --listen where the agent was started.');
    expect(await fs.readFile(path.join(agent.configDir, 'config.yml'), 'utf8')).toBe(before);
  });

  test('signing in again after a sign-out: the same server (fixed where the agent started) changes nothing; another is refused in words', async () => {
    const before = await fs.readFile(path.join(agent.configDir, 'config.yml'), 'utf8');
    await call(agent.url, 'DELETE', '/login');
    for (const same of [svc.url, `${svc.url}/`]) {
      const r = await call(agent.url, 'PATCH', '/settings', { body: { hosted_url: same } });
      expect(r.status, same).toBe(200);
      expect(r.body).toMatchObject({ restarting: false, settings: { hosted_url: svc.url } });
    }
    expect((await call(agent.url, 'POST', '/login', { body: svc.owner })).status).toBe(200);
    const other = await call(agent.url, 'PATCH', '/settings', { body: { hosted_url: 'https://ferry.example.com' } });
    expect(other.status).toBe(409);
    expect(other.body.message).toBe(
      `This agent signs in only to ${svc.url} (set by --hosted-url where the agent was started). Sign in there, or start the agent without that setting to use another server.`,
    );
    expect(await fs.readFile(path.join(agent.configDir, 'config.yml'), 'utf8')).toBe(before);
  });
});

describe('settings that start the agent again', () => {
  const runs: AgentRun[] = [];
  let stop!: (why: string) => void;
  let running: Promise<string> | undefined;
  let dir: string;
  afterEach(async () => {
    stop?.('test over');
    await running;
    running = undefined;
    runs.length = 0;
    await fs.rm(dir, { recursive: true, force: true });
  });

  /** `ferry agent` with only --config-dir: the rest is in config.yml, where the app can change it. */
  async function run(config: string): Promise<void> {
    dir = await fs.mkdtemp(path.join(os.tmpdir(), 'ferry-settings-run-'));
    await fs.writeFile(path.join(dir, 'config.yml'), config);
    const serveFlags = { 'data-dir': path.join(dir, 'service'), listen: '127.0.0.1:0', 's3-listen': '127.0.0.1:0', 'log-level': 'silent' };
    running = runAgent({ flags: { 'config-dir': dir }, serveFlags, log: pino({ level: 'silent' }), until: new Promise((r) => (stop = r)), started: (r) => runs.push(r) });
    await vi.waitFor(() => expect(runs).toHaveLength(1));
  }
  const reachable = (port: number) => new Promise<boolean>((r) => net.connect(port, '127.0.0.1').once('connect', function (this: net.Socket) { this.destroy(); r(true); }).once('error', () => r(false)));

  test('a new address and key: the answer says so, the agent starts again there, and wants the key', async () => {
    const [p1, p2] = [await stablePort(), await stablePort()];
    await run(`listen: 127.0.0.1:${p1}\nhosted_url: ${svc.url}\n`);
    const base1 = `http://127.0.0.1:${p1}/api/v1`;
    expect((await call(base1, 'POST', '/login', { body: svc.owner })).status).toBe(200);
    const key = 'k'.repeat(32);
    const r = await call(base1, 'PATCH', '/settings', { body: { listen: `127.0.0.1:${p2}`, local_api_key: key } });
    expect(r.status).toBe(200);
    expect(r.body).toMatchObject({ restarting: true, settings: { listen: `127.0.0.1:${p2}`, local_api_key: key } });
    await vi.waitFor(() => expect(runs).toHaveLength(2), { timeout: 20_000 });
    const base2 = `http://127.0.0.1:${p2}/api/v1`;
    expect(await reachable(p1)).toBe(false);
    expect((await call(base2, 'GET', '/about')).status).toBe(401);
    const about = await call(base2, 'GET', '/about', { headers: { 'x-api-key': key } });
    expect(about.status).toBe(200);
    // The session went on: the same server.
    expect((await call(base2, 'GET', '/login', { headers: { 'x-api-key': key } })).body.user.email).toBe(svc.owner.email);
  });

  test('a new server ends the session and the agent starts again on it; a busy address is refused before anything changes', async () => {
    const [p1, busyPort] = [await stablePort(), await freePort()];
    await run(`listen: 127.0.0.1:${p1}\nhosted_url: ${svc.url}\n`);
    const base = `http://127.0.0.1:${p1}/api/v1`;
    expect((await call(base, 'POST', '/login', { body: svc.owner })).status).toBe(200);

    const busy = net.createServer().listen(busyPort, '127.0.0.1');
    try {
      const r = await call(base, 'PATCH', '/settings', { body: { listen: `127.0.0.1:${busyPort}` } });
      expect(r.status).toBe(400);
      expect(r.body.message).toBe(`127.0.0.1:${busyPort} is in use`);
    } finally {
      await new Promise((r) => busy.close(r));
    }
    const bad = await call(base, 'PATCH', '/settings', { body: { hosted_url: 'ftp://example.com' } });
    expect(bad.status).toBe(400);

    const other = 'http://127.0.0.1:9';
    const r = await call(base, 'PATCH', '/settings', { body: { hosted_url: other } });
    expect(r.body).toMatchObject({ restarting: true, settings: { hosted_url: other } });
    await vi.waitFor(() => expect(runs).toHaveLength(2), { timeout: 20_000 });
    expect(runs[1]!.agent.ctx.config.hostedUrl).toBe(other);
    expect((await call(base, 'GET', '/login')).status).toBe(401);
    expect(parseYaml(await fs.readFile(path.join(dir, 'config.yml'), 'utf8'))).toEqual({ listen: `127.0.0.1:${p1}`, hosted_url: other });
  });

  test('"Try it on this computer": the agent starts again on a service run beside it, signed in as its owner; again after a sign-out, at once', async () => {
    const p1 = await stablePort();
    await run(`listen: 127.0.0.1:${p1}\nhosted_url: ${svc.url}\n`);
    const first = await runs[0]!.agent.services.settings.useThisComputer();
    expect(first).toEqual({ restarting: true, session: null });
    await vi.waitFor(() => expect(runs).toHaveLength(2), { timeout: 30_000 });
    const { agent, service } = runs[1]!;
    expect(service).toBeDefined();
    expect(agent.ctx.config.hostedUrl).toBe(service!.url);
    expect(await fs.readFile(path.join(dir, 'service', 'first-owner.txt'), 'utf8')).toMatch(/^e-mail +admin@ferry\.local$/m);
    const base = `http://127.0.0.1:${p1}/api/v1`;
    expect((await call(base, 'GET', '/login')).body.user.email).toBe('admin@ferry.local');
    const settings = (await call(base, 'GET', '/settings')).body;
    expect(settings).toMatchObject({ this_computer: true, hosted_url: service!.url, locked: { hosted_url: 'the service on this computer' } });

    await call(base, 'DELETE', '/login');
    expect((await call(base, 'GET', '/login')).status).toBe(401);
    // "Use a server" with this same server: no move, the service stays, and its owner signs in.
    const same = await call(base, 'PATCH', '/settings', { body: { hosted_url: service!.url } });
    expect(same.body).toMatchObject({ restarting: false, settings: { this_computer: true, hosted_url: service!.url } });
    const password = /^password +(\S+)$/m.exec(await fs.readFile(path.join(dir, 'service', 'first-owner.txt'), 'utf8'))![1]!;
    expect((await call(base, 'POST', '/login', { body: { email: 'admin@ferry.local', password } })).status).toBe(200);
    await call(base, 'DELETE', '/login');
    const again = await agent.services.settings.useThisComputer();
    expect(again).toMatchObject({ restarting: false, session: { user: { email: 'admin@ferry.local' } } });
    expect(runs).toHaveLength(2);

    // Back to a server elsewhere: the service here stops.
    expect((await call(base, 'PATCH', '/settings', { body: { hosted_url: svc.url } })).body).toMatchObject({ restarting: true, settings: { this_computer: false, hosted_url: svc.url } });
    await vi.waitFor(() => expect(runs).toHaveLength(3), { timeout: 20_000 });
    expect(runs[2]!.service).toBeUndefined();
    expect(await reachable(Number(new URL(service!.url).port))).toBe(false);
  });
});
