// GET /diagnostics and POST /diagnostics/bundle on a real agent, service and
// embedded store: the service and the store answer with a latency, free space
// is measured, an error the agent logged is listed, no secret shows (in the
// JSON, in the bundle's bytes or in its unpacked files), the bundle is a ZIP
// that unzip reads, and a bad folder is refused. Then a service that never
// answers is reported timed out, and a stopped one unreachable.
import { execFile } from 'node:child_process';
import fs from 'node:fs/promises';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { call, startTestService, type TestService } from '../../helpers/hosted.js';
import { startTestAgent, type TestAgent } from '../../helpers/agent.js';
import { createPackage, finalizePackage, makeLink, uploadFile } from '../../helpers/flow.js';
import { ownerActor } from '../../helpers/auth.js';
import { waitFor } from '../../helpers/downloads.js';
import { loadSession } from '../../../src/agent/store/sessionStore.js';

const run = promisify(execFile);

let svc: TestService;
let agent: TestAgent;
let tmp: string;
/** The agent's REST key and a service key the service refuses: both secrets the agent holds. */
const localKey = `diag-local-${'k'.repeat(24)}-${process.pid}`;
const refusedKey = `diag-refused-${'r'.repeat(24)}-${process.pid}`;
let secrets: string[];
const h = { 'x-api-key': localKey };
const api = (method: string, p: string, body?: unknown) => call(agent.url, method, p, { headers: h, ...(body === undefined ? {} : { body }) });

beforeAll(async () => {
  tmp = await fs.mkdtemp(path.join(os.tmpdir(), 'ferry-diagnostics-'));
  svc = await startTestService();
  // The refused key is a real error the agent logs at start: "the service refused the API key".
  agent = await startTestAgent(svc, { 'local-api-key': localKey, 'api-key': refusedKey });
  const login = await api('POST', '/login', { email: svc.owner.email, password: svc.owner.password });
  expect(login.status, JSON.stringify(login.body)).toBe(200);

  // A download from a Link: the agent has then fetched from the store.
  const owner = await ownerActor(svc);
  const pkg = await createPackage(svc, owner, { name: 'Diagnosed' });
  await uploadFile(svc, pkg, 'a.txt', '', Buffer.from('bytes to fetch\n'));
  await finalizePackage(svc, pkg);
  const link = await makeLink(svc, pkg);
  const made = await api('POST', '/downloads', { url: link.url, dst_folder: path.join(tmp, 'fetched') });
  expect(made.status, JSON.stringify(made.body)).toBe(201);
  await waitFor('the download to complete', async () => ((await api('GET', `/downloads/${made.body.download_id}`)).body.state === 'complete' ? true : undefined));

  const session = loadSession(agent.agent.ctx.db)!.secret;
  secrets = [localKey, refusedKey, session, link.secret, pkg.token];
  // A record that carries secrets, as a log line may: the bundle's copy of the log must not.
  agent.agent.ctx.log.warn({ url: `http://someone:${localKey}@127.0.0.1/x`, token: session }, `a line naming ${refusedKey}`);
});

afterAll(async () => {
  await agent?.close();
  await svc?.close();
  if (tmp) await fs.rm(tmp, { recursive: true, force: true });
});

const absent = (text: string) => secrets.filter((s) => text.includes(s));

describe('GET /diagnostics', () => {
  test('versions, settings with secrets hidden, the service and the store reachable with a latency, free space, the logged error', async () => {
    const r = await api('GET', '/diagnostics');
    expect(r.status, JSON.stringify(r.body)).toBe(200);
    const d = r.body;
    expect(d.versions.node).toBe(process.versions.node);
    expect(d.versions.agent).toMatch(/^\d+\.\d+\.\d+/);
    expect(d.settings.local_api_key).toBe('(hidden)');
    expect(d.settings.api_key).toBe('(hidden)');
    expect(d.settings.concurrency).toBe(8);
    expect(d.signed_in).toBe(true);

    expect(d.service).toMatchObject({ url: svc.url, reachable: true, status: 200, timed_out: false, error: null });
    expect(d.service.latency_ms).toBeGreaterThanOrEqual(0);
    expect(d.stores.length).toBe(1);
    expect(d.stores[0]).toMatchObject({ url: new URL(svc.s3Url).origin, source: 'used', reachable: true, timed_out: false });
    expect(d.stores[0].latency_ms).toBeGreaterThanOrEqual(0);

    const dst = d.disks.find((x: any) => x.path === path.join(tmp, 'fetched'));
    expect(dst).toMatchObject({ uses: ['download'], timed_out: false, error: null });
    expect(dst.free_bytes).toBeGreaterThan(0);
    expect(dst.total_bytes).toBeGreaterThanOrEqual(dst.free_bytes);
    expect(d.disks.some((x: any) => x.uses.includes('downloads_folder'))).toBe(true);

    const refused = d.recent_problems.find((p: any) => p.message === 'the service refused the API key; the agent has no session');
    expect(refused).toMatchObject({ level: 'error' });
    expect(d.log_files).toEqual([path.join(agent.configDir, 'logs', 'agent.log')]);

    // No secret anywhere in the answer, the logged line that named them included.
    expect(absent(JSON.stringify(d))).toEqual([]);
    expect(d.recent_problems.some((p: any) => p.message === 'a line naming (hidden)')).toBe(true);
  });
});

describe('POST /diagnostics/bundle', () => {
  test('writes a ZIP of the log, the settings and the diagnostics, none of the secrets in it', async () => {
    const folder = path.join(tmp, 'bundles', 'new');
    const r = await api('POST', '/diagnostics/bundle', { folder });
    expect(r.status, JSON.stringify(r.body)).toBe(201);
    expect(path.dirname(r.body.path)).toBe(folder);
    expect(path.basename(r.body.path)).toMatch(/^ferry-support-\d{8}-\d{6}\.zip$/);
    const bytes = await fs.readFile(r.body.path);
    expect(bytes.length).toBe(r.body.size);

    const listing = (await run('unzip', ['-l', r.body.path])).stdout;
    for (const name of ['diagnostics.json', 'settings.json', 'logs/agent.log']) expect(listing).toContain(name);
    await run('unzip', ['-tq', r.body.path]);
    const unpacked = (await run('unzip', ['-p', r.body.path], { maxBuffer: 64 * 1024 * 1024 })).stdout;
    const log = (await run('unzip', ['-p', r.body.path, 'logs/agent.log'], { maxBuffer: 64 * 1024 * 1024 })).stdout;
    expect(log).toContain('the service refused the API key');
    expect(log).toContain('a line naming (hidden)');
    const settings = JSON.parse((await run('unzip', ['-p', r.body.path, 'settings.json'])).stdout);
    expect(settings.local_api_key).toBe('(hidden)');

    // The secrets are in the agent's own log file, and in neither the archive's bytes nor its files.
    const ownLog = await fs.readFile(path.join(agent.configDir, 'logs', 'agent.log'), 'utf8');
    expect(ownLog).toContain(refusedKey);
    expect(absent(unpacked)).toEqual([]);
    expect(absent(bytes.toString('latin1'))).toEqual([]);
  });

  test('by default into the Downloads folder', async () => {
    const home = path.join(tmp, 'home');
    await fs.mkdir(home);
    const was = process.env.HOME;
    process.env.HOME = home;
    try {
      const r = await api('POST', '/diagnostics/bundle', {});
      expect(r.status, JSON.stringify(r.body)).toBe(201);
      expect(path.dirname(r.body.path)).toBe(path.join(home, 'Downloads'));
      expect((await fs.stat(r.body.path)).size).toBe(r.body.size);
    } finally {
      process.env.HOME = was;
    }
  });

  test('a folder that cannot be written to is refused: 400 in words', async () => {
    const file = path.join(tmp, 'a-file');
    await fs.writeFile(file, 'x');
    const cases: [unknown, RegExp][] = [
      ['relative/dir', /folder must be an absolute path/],
      ['/proc/ferry', /system folder/],
      [file, /is a file, not a folder/],
    ];
    for (const [folder, says] of cases) {
      const r = await api('POST', '/diagnostics/bundle', { folder });
      expect(r.status, `${folder}: ${JSON.stringify(r.body)}`).toBe(400);
      expect(r.body.message).toMatch(says);
    }
    const bad = await api('POST', '/diagnostics/bundle', { folder: 42 });
    expect(bad.status).toBe(400);
  });
});

describe('a service that does not answer', () => {
  test('one that never answers is reported timed out', async () => {
    const held: net.Socket[] = [];
    const silent = net.createServer((s) => held.push(s));
    await new Promise<void>((r) => silent.listen(0, '127.0.0.1', r));
    const other = await startTestAgent({ url: `http://127.0.0.1:${(silent.address() as net.AddressInfo).port}` });
    try {
      const r = await call(other.url, 'GET', '/diagnostics');
      expect(r.status).toBe(200);
      expect(r.body.service).toMatchObject({ reachable: false, timed_out: true, latency_ms: null });
    } finally {
      await other.close();
      for (const s of held) s.destroy();
      await new Promise((r) => silent.close(r));
    }
  });

  test('a stopped service and its store are reported unreachable', async () => {
    await svc.stop();
    const r = await api('GET', '/diagnostics');
    expect(r.status).toBe(200);
    expect(r.body.service).toMatchObject({ reachable: false, timed_out: false, status: null, latency_ms: null });
    expect(r.body.service.error).toMatch(/ECONNREFUSED/);
    expect(r.body.stores[0]).toMatchObject({ reachable: false });
  });
});
