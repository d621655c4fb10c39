// Upload state transitions the other upload tests leave out, against a real hosted
// service, store and agent (docs/agent-api-notes/uploads.md, "States"):
// - an unrecoverable error (a local file changed while it was sent): resume answers
//   409 and changes nothing;
// - a local file deleted while it is sent fails the upload at once with its name in
//   words, not as a wait for the storage and without retries;
// - pause and resume of an idle upload answer 409 and leave it idle; resume of a
//   transferring one answers 200 and leaves it transferring;
// - a Link of an upload that is still transferring answers 409 and makes none;
// - a failed automatic finalize (the service stopped under it) puts the upload in a
//   recoverable `error`; once the service is back, resume finalizes it to `complete`.
import fs from 'node:fs/promises';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, test, vi } from 'vitest';
import { call, startTestService, type TestService } from '../../helpers/hosted.js';
import { ownerActor, type Actor } from '../../helpers/auth.js';
import { openEventStream, signInAgent, startTestAgent, summariesOf, type TestAgent } from '../../helpers/agent.js';
import { MiB } from '../../helpers/flow.js';
import { startProxiedAgent, type ProxiedAgent, type ProxiedUploads } from './uploads-proxy.js';

const CONFLICT = { code: 262150, message: expect.any(String) };
const PART = 5 * MiB;

/** Small back-offs, so that running out of retries takes milliseconds (read when an agent starts). */
const TUNING = { FERRY_AGENT_RETRY_ATTEMPTS: '6', FERRY_AGENT_RETRY_BASE_MS: '20', FERRY_AGENT_RETRY_MAX_MS: '200' };
const savedEnv = Object.fromEntries(Object.keys(TUNING).map((k) => [k, process.env[k]]));

let env: ProxiedUploads;
let owner: Actor;
let agent: TestAgent;
let manual: TestAgent | undefined;
let tmp: string;
let setup: ProxiedAgent | undefined;
/** Proxy rule per part: a delay for every part of the objects whose key names a slow upload. */
let slowMs = 0;

beforeAll(async () => {
  Object.assign(process.env, TUNING);
  setup = await startProxiedAgent('upload-states', { 'chunk-size': String(PART), concurrency: '2' });
  ({ env, owner, agent, tmp } = setup);
  env.proxy.rule = () => (slowMs > 0 ? { delayMs: slowMs } : 'pass');
  manual = await startTestAgent(env.svc, { 'chunk-size': String(PART), 'auto-finalize': 'false' });
  await signInAgent(manual.url, env.svc);
});

afterAll(async () => {
  await manual?.close();
  await setup?.close();
  for (const [k, v] of Object.entries(savedEnv)) {
    if (v === undefined) delete process.env[k];
    else process.env[k] = v;
  }
});

const get = async (a: TestAgent, id: string) => {
  const r = await call(a.url, 'GET', `/uploads/${id}`);
  expect(r.status).toBe(200);
  return r.body;
};

/** Polls the upload until `ok` accepts it (bounded); `error` fails at once unless `ok` wants it. */
async function until(a: TestAgent, id: string, ok: (u: any) => boolean, what: string, timeout = 45_000) {
  return vi.waitFor(
    async () => {
      const u = await get(a, id);
      const shown = JSON.stringify({ ...u, items: undefined });
      if (u.state === 'error' && !ok(u)) throw new Error(`${what}: the upload failed: ${shown}`);
      expect(ok(u), `${what}: ${shown}`).toBe(true);
      return u;
    },
    { timeout, interval: 25 },
  );
}

/** The record once it stops changing (parts cut off by a stop may still be settling). */
async function settled(a: TestAgent, id: string) {
  return vi.waitFor(
    async () => {
      const one = await get(a, id);
      await sleep(250);
      const two = await get(a, id);
      expect(two).toEqual(one);
      return two;
    },
    { timeout: 10_000, interval: 50 },
  );
}

async function writeFile(name: string, size: number, fill: number) {
  const p = path.join(tmp, name);
  await fs.writeFile(p, Buffer.alloc(size, fill));
  return p;
}

async function start(a: TestAgent, p: string) {
  const r = await call(a.url, 'POST', '/uploads', { body: { team_id: owner.teamId, paths: [p] } });
  expect(r.status, JSON.stringify(r.body)).toBe(201);
  return r.body as { upload_id: string; package_id: string };
}

const packageState = async (svc: TestService, id: string, h: Record<string, string>) => (await call(svc.url, 'GET', `/v1/packages/${id}`, { headers: h })).body.state;

describe('an upload that failed unrecoverably (a local file changed while it was sent)', () => {
  test('resume answers 409 {code, message} and changes nothing: no part is sent, the record and the Package stay as they were', async () => {
    slowMs = 250; // 8 parts, two at a time: about a second to change the file mid-way
    const file = await writeFile('changing.bin', 8 * PART, 7);
    const { upload_id: id, package_id } = await start(agent, file);
    await until(agent, id, (u) => u.progress >= PART, 'a part in');
    await fs.appendFile(file, 'one more line\n');

    const failed = await until(agent, id, (u) => u.state === 'error', 'error', 20_000);
    slowMs = 0;
    expect(failed.error).toBe(`${file} changed while it was being uploaded`);
    expect(failed.progress).toBeLessThan(8 * PART);
    expect(failed.items[0].state).toBe('error');
    const row = agent.agent.ctx.db.prepare('SELECT error_recoverable FROM uploads WHERE id = ?').get(id) as { error_recoverable: number };
    expect(row.error_recoverable).toBe(0);

    const before = await settled(agent, id);
    const putsBefore = env.proxy.puts.length;
    const r = await call(agent.url, 'POST', `/uploads/${id}/resume`);
    expect(r.status).toBe(409);
    expect(r.body).toEqual(CONFLICT);
    expect(r.body.message).toContain('changed while it was being uploaded');
    // Resume of all passes it by (nothing else is paused or failed recoverably here).
    const all = await call(agent.url, 'POST', '/uploads/resume');
    expect(all.status).toBe(200);
    expect(all.body).toEqual([]);

    await sleep(500);
    expect(await get(agent, id)).toEqual(before); // same state, error, progress, items and updated_at
    expect(env.proxy.puts.length).toBe(putsBefore);
    expect(await packageState(env.svc, package_id, owner.h)).toBe('new');
  });
});

describe('a local file deleted while it is sent', () => {
  test('fails the upload at once, unrecoverably, with its name: no wait for the storage, no retry', async () => {
    const stream = await openEventStream(agent.url, { query: 'types=upload' });
    slowMs = 250; // 10 parts, two at a time: the file is deleted with most of its parts still to go
    const file = await writeFile('A.mov', 10 * PART, 3);
    const { upload_id: id } = await start(agent, file);
    await until(agent, id, (u) => u.progress >= PART, 'a part in');
    await fs.rm(file);

    const failed = await until(agent, id, (u) => u.state === 'error', 'error', 20_000);
    slowMs = 0;
    expect(failed.error).toBe(`A.mov was moved or deleted while it was being sent (it was at ${file})`);
    expect(failed.waiting).toBeUndefined();
    expect(failed.items[0].state).toBe('error');
    const row = agent.agent.ctx.db.prepare('SELECT error_recoverable FROM uploads WHERE id = ?').get(id) as { error_recoverable: number };
    expect(row.error_recoverable).toBe(0);
    // Never shown as waiting for the storage on its way to the error.
    stream.close();
    const mine = summariesOf(stream.received, 'upload', id);
    expect(mine.length).toBeGreaterThan(0);
    expect(mine.filter((r) => r.waiting !== undefined)).toEqual([]);
  });
});

describe('an idle upload (agent with --auto-finalize false, every file up)', () => {
  test('pause and resume answer 409 {code, message}; pause-all and resume-all pass it by; it stays idle and can still be finalized', async () => {
    const file = await writeFile('idle.bin', 6 * MiB, 3);
    const { upload_id: id, package_id } = await start(manual!, file);
    const idle = await until(manual!, id, (u) => u.state === 'idle', 'idle');
    expect(idle.progress).toBe(6 * MiB);

    const paused = await call(manual!.url, 'POST', `/uploads/${id}/pause`);
    expect(paused.status).toBe(409);
    expect(paused.body).toEqual(CONFLICT);
    expect(await get(manual!, id)).toEqual(idle);

    const resumed = await call(manual!.url, 'POST', `/uploads/${id}/resume`);
    expect(resumed.status).toBe(409);
    expect(resumed.body).toEqual(CONFLICT);
    expect(await get(manual!, id)).toEqual(idle);

    // The all-uploads routes leave it alone and do not count it.
    for (const route of ['/uploads/pause', '/uploads/resume']) {
      const r = await call(manual!.url, 'POST', route);
      expect(r.status, route).toBe(200);
      expect(r.body, route).toEqual([]);
    }
    await sleep(300);
    expect(await get(manual!, id)).toEqual(idle);
    expect(await packageState(env.svc, package_id, owner.h)).toBe('new');

    // Still idle in substance: the manual finalize completes it.
    const fin = await call(manual!.url, 'POST', `/uploads/${id}/finalize`);
    expect(fin.status, JSON.stringify(fin.body)).toBe(200);
    expect((await get(manual!, id)).state).toBe('complete');
    expect(await packageState(env.svc, package_id, owner.h)).toBe('finalized');
  });
});

describe('a transferring upload', () => {
  test('POST /uploads/{id}/link answers 409 and makes no Link; resume answers 200 and it stays transferring; once complete the Link is made', async () => {
    slowMs = 300;
    const file = await writeFile('moving.bin', 6 * PART, 9);
    const { upload_id: id, package_id } = await start(agent, file);
    await until(agent, id, (u) => u.progress > 0, 'a part in');
    try {
      const link = await call(agent.url, 'POST', `/uploads/${id}/link`, { body: {} });
      expect(link.status).toBe(409);
      expect(link.body).toEqual(CONFLICT);
      // The agent's own rule answers, naming the state (not the service's refusal of a new Package).
      expect(link.body.message).toMatch(/transferring/);
      const links = await call(env.svc.url, 'GET', `/v1/packages/${package_id}/links`, { headers: owner.h });
      expect(links.status).toBe(200);
      expect(links.body).toEqual([]);

      const resumed = await call(agent.url, 'POST', `/uploads/${id}/resume`);
      expect(resumed.status).toBe(200);
      expect(resumed.body).toMatchObject({ upload_id: id, state: 'transferring' });
      expect(resumed.body.progress).toBeLessThan(6 * PART);
      expect((await get(agent, id)).state).toBe('transferring');
    } finally {
      slowMs = 0;
    }
    const done = await until(agent, id, (u) => u.state === 'complete', 'complete');
    expect(done.progress).toBe(6 * PART);
    // One run only: resume started no second one sending the same parts again.
    const stored = env.proxy.puts.filter((p) => p.key.includes(`/packages/${package_id}/`) && p.status === 200);
    expect(new Set(stored.map((p) => p.partNumber)).size).toBe(6);
    expect(stored).toHaveLength(6);
    const link = await call(agent.url, 'POST', `/uploads/${id}/link`, { body: {} });
    expect(link.status, JSON.stringify(link.body)).toBe(201);
  });
});

/**
 * An HTTP forwarder between the agent and the hosted service. The first Package
 * finalize it sees makes it stop the real service (`onFinalize`) before passing the
 * request on, so the finalize meets a service that is gone: every try fails to
 * connect, which the forwarder passes back as a dropped connection.
 */
async function startGate(target: () => string, onFinalize: () => Promise<void>) {
  let armed = true;
  const finalizes: number[] = [];
  const server = http.createServer(async (req, res) => {
    const { pathname } = new URL(req.url ?? '/', 'http://x');
    if (req.method === 'POST' && /^\/v1\/packages\/[^/]+\/finalize$/.test(pathname)) {
      finalizes.push(Date.now());
      if (armed) {
        armed = false;
        req.pause();
        await onFinalize();
      }
    }
    const up = new URL(target());
    const fwd = http.request(
      { host: up.hostname, port: up.port, method: req.method, path: req.url, headers: req.headers, agent: false },
      (ur) => {
        res.writeHead(ur.statusCode ?? 502, ur.headers);
        ur.pipe(res);
      },
    );
    fwd.on('error', () => res.destroy());
    req.pipe(fwd);
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    finalizes,
    close: () => {
      server.closeAllConnections();
      return new Promise<void>((r) => server.close(() => r()));
    },
  };
}

describe('a failed automatic finalize', () => {
  let dataDir: string;
  let svc: TestService | undefined;
  let gate: Awaited<ReturnType<typeof startGate>> | undefined;
  let a: TestAgent | undefined;

  afterAll(async () => {
    await a?.close();
    await gate?.close();
    await svc?.close();
    if (dataDir) await fs.rm(dataDir, { recursive: true, force: true });
  });

  test('waits for the service, then (after --retry-for) puts the upload in a recoverable error; the service back, it resumes by itself to complete', async () => {
    dataDir = await fs.mkdtemp(path.join(os.tmpdir(), 'ferry-hosted-restart-'));
    svc = await startTestService({ 'data-dir': dataDir });
    const port = new URL(svc.url).port;
    const s3Port = new URL(svc.s3Url).port;
    const me = await ownerActor(svc);
    let stopped = false;
    gate = await startGate(
      () => svc!.url,
      async () => {
        await svc!.close(); // the data dir stays: the same Package, users and keys come back with the service
        stopped = true;
      },
    );
    a = await startTestAgent({ url: gate.url }, { 'chunk-size': String(PART), 'retry-for': '2s' });
    await signInAgent(a.url, svc);
    const events = await openEventStream(a.url, { query: 'types=upload' });
    try {
      const file = await writeFile('finalize-fails.bin', 7 * MiB, 5);
      const r = await call(a.url, 'POST', '/uploads', { body: { team_id: me.teamId, paths: [file] } });
      expect(r.status, JSON.stringify(r.body)).toBe(201);
      const id = r.body.upload_id as string;

      const waiting = await until(a, id, (u) => u.waiting !== undefined, 'waiting for the service', 30_000);
      expect(waiting.state).toBe('idle');
      expect(waiting.waiting.reason).toBe('service_unreachable');
      const failed = await until(a, id, (u) => u.state === 'error', 'error after the finalize failed', 30_000);
      expect(stopped).toBe(true);
      expect(failed.progress).toBe(7 * MiB);
      expect(failed.items[0].state).toBe('complete'); // every file was up: only the Package finalize failed
      expect(failed.error).toMatch(/^no success for 2 s \(--retry-for\)/);
      // The finalize was tried while the service was down, but not in a tight loop: the probe paced it.
      expect(gate.finalizes.length).toBeGreaterThanOrEqual(1);
      expect(gate.finalizes.length).toBeLessThan(20);
      const row = a.agent.ctx.db.prepare('SELECT error_recoverable FROM uploads WHERE id = ?').get(id) as { error_recoverable: number };
      expect(row.error_recoverable).toBe(1);

      // The service comes back on the same port and data dir, and the upload resumes by itself.
      svc = await startTestService({ 'data-dir': dataDir, listen: `127.0.0.1:${port}`, 's3-listen': `127.0.0.1:${s3Port}` });
      const done = await until(a, id, (u) => u.state === 'complete', 'complete once the service is back');
      expect(done.error).toBeUndefined();
      expect(done.progress).toBe(7 * MiB);
      const pkg = await call(svc.url, 'GET', `/v1/packages/${r.body.package_id}`, { headers: me.h });
      expect(pkg.body).toMatchObject({ state: 'finalized', total_files: 1, size: 7 * MiB });

      // The feed saw: transferring, idle, error; resumed by itself: transferring, idle, complete.
      const mine = () => summariesOf(events.received, 'upload', id).map((u) => u.state as string);
      await vi.waitFor(() => expect(mine().at(-1)).toBe('complete'), { timeout: 5_000 });
      const states = mine().filter((s, i, all) => s !== all[i - 1]);
      expect(states).toEqual(['transferring', 'idle', 'error', 'transferring', 'idle', 'complete']);
    } finally {
      events.close();
    }
  });
});
