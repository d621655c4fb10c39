// Outages of the store seen through a fault proxy (mockttp) in front of it:
// connections refused for two minutes, a store answering 503 with Retry-After: 3
// ten times, a connection that stalls. The transfers complete by themselves,
// byte-identical, and `/events` showed them waiting meanwhile.
import { createHash, randomBytes } from 'node:crypto';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, expect, test, vi } from 'vitest';
import { call } from '../../helpers/hosted.js';
import { openEventStream, signInAgent, startTestAgent, type EventStream, type TestAgent } from '../../helpers/agent.js';
import { ownerActor, type Actor } from '../../helpers/auth.js';
import { downloadAll, MiB } from '../../helpers/flow.js';
import { startServiceBehindFaultProxy, type FaultProxy } from '../../helpers/faultProxy.js';
import type { Proxied } from '../../helpers/proxiedService.js';

vi.setConfig({ testTimeout: 300_000, hookTimeout: 120_000 });

const TUNING = {
  // A stall is given up after 2 s; probes come at most 2 s apart (60 s by default).
  FERRY_AGENT_TIMEOUT_MS: '2000',
  FERRY_AGENT_RETRY_MAX_MS: '2000',
};
const savedEnv = Object.fromEntries(Object.keys(TUNING).map((k) => [k, process.env[k]]));
const sha = (b: Buffer) => createHash('sha256').update(b).digest('hex');
const PUT_PART = /[?&]partNumber=/;

let env: Proxied<FaultProxy>;
let agent: TestAgent;
let owner: Actor;
let tmp: string;
let events: EventStream;

beforeAll(async () => {
  Object.assign(process.env, TUNING);
  env = await startServiceBehindFaultProxy();
  owner = await ownerActor(env.svc);
  agent = await startTestAgent(env.svc, { 'chunk-size': String(5 * MiB), concurrency: '4' });
  await signInAgent(agent.url, env.svc);
  tmp = await fs.mkdtemp(path.join(os.tmpdir(), 'ferry-outage-faults-'));
  events = await openEventStream(agent.url, { query: 'types=upload,download' });
});

afterAll(async () => {
  events?.close();
  await agent?.close();
  await env?.close();
  if (tmp) await fs.rm(tmp, { recursive: true, force: true });
  for (const [k, v] of Object.entries(savedEnv)) {
    if (v === undefined) delete process.env[k];
    else process.env[k] = v;
  }
});

const record = async (kind: 'uploads' | 'downloads', id: string) => (await call(agent.url, 'GET', `/${kind}/${id}`)).body;

async function until(kind: 'uploads' | 'downloads', id: string, ok: (r: any) => boolean, what: string, timeout = 120_000): Promise<any> {
  return vi.waitFor(async () => {
    const r = await record(kind, id);
    if (!ok(r)) throw new Error(`not yet: ${what}: ${JSON.stringify({ ...r, items: undefined })}`);
    return r;
  }, { timeout, interval: 50 });
}

/** The `waiting` fields the feed carried for this transfer. */
const waitsSeen = (id: string) =>
  events.received
    .map((m) => m.json?.upload ?? m.json?.download)
    .filter((r) => r && (r.upload_id ?? r.download_id) === id && r.waiting)
    .map((r) => r.waiting);

async function startUpload(name: string, size: number): Promise<{ id: string; data: Buffer }> {
  const data = randomBytes(size);
  const file = path.join(tmp, name);
  await fs.writeFile(file, data);
  const r = await call(agent.url, 'POST', '/uploads', { body: { team_id: owner.teamId, paths: [file] } });
  expect(r.status, JSON.stringify(r.body)).toBe(201);
  return { id: r.body.upload_id, data };
}

async function expectUploaded(id: string, name: string, data: Buffer): Promise<void> {
  const done = await until('uploads', id, (u) => u.state !== 'transferring' && u.state !== 'idle', 'the upload to end');
  expect(done.state, JSON.stringify(done.error)).toBe('complete');
  expect(done.waiting).toBeUndefined();
  const link = await call(agent.url, 'POST', `/uploads/${id}/link`, { body: {} });
  const got = await downloadAll(env.svc, link.body);
  expect(sha(got.get(name)!)).toBe(sha(data));
}

test('connections to the store refused for 2 minutes mid-upload and mid-download: both wait, then complete by themselves', async () => {
  // A Package to download, sent before the outage.
  const shared = await startUpload('shared.bin', 24 * MiB);
  await expectUploaded(shared.id, 'shared.bin', shared.data);
  const link = await call(agent.url, 'POST', `/uploads/${shared.id}/link`, { body: {} });

  // Each request to the store waits 600 ms (below the 2 s stall limit): 20 parts and ranges
  // through 4 slots take several seconds, so both are caught mid-way even on a busy machine.
  await env.proxy.rules(undefined, 600);
  const up = await startUpload('refused.bin', 40 * MiB);
  const dl = await call(agent.url, 'POST', '/downloads', { body: { url: link.body.url, dst_folder: path.join(tmp, 'refused-dl'), chunk_size: 2 * MiB } });
  expect(dl.status).toBe(201);
  const downloadId = dl.body.download_id as string;
  await Promise.all([
    until('uploads', up.id, (u) => u.progress > 0, 'upload under way'),
    until('downloads', downloadId, (d) => d.progress > 0, 'download under way'),
  ]);

  await env.proxy.stop();
  // The outage must find both with bytes still to move, or the test proves nothing.
  expect((await record('uploads', up.id)).progress).toBeLessThan(40 * MiB);
  expect((await record('downloads', downloadId)).progress).toBeLessThan(24 * MiB);
  let requestsWhenStopped: number;
  try {
    const stoppedAt = Date.now();
    await until('uploads', up.id, (u) => u.waiting?.reason === 'store_unreachable', 'the upload waiting');
    await until('downloads', downloadId, (d) => d.waiting?.reason === 'store_unreachable', 'the download waiting');
    requestsWhenStopped = env.proxy.seen.length;
    await new Promise((r) => setTimeout(r, 120_000 - (Date.now() - stoppedAt)));
    for (const [kind, id] of [['uploads', up.id], ['downloads', downloadId]] as const) {
      const r = await record(kind, id);
      expect(r.state, `${kind}: ${r.error ?? ''}`).toBe('transferring');
    }
  } finally {
    await env.proxy.start();
  }

  await expectUploaded(up.id, 'refused.bin', up.data);
  const done = await until('downloads', downloadId, (d) => d.state !== 'transferring', 'the download to end');
  expect(done.state).toBe('complete');
  expect(sha(await fs.readFile(done.items[0].local_path))).toBe(sha(shared.data));
  expect(env.proxy.seen.length).toBeGreaterThan(requestsWhenStopped);
  for (const id of [up.id, downloadId]) expect(waitsSeen(id).some((w) => w.reason === 'store_unreachable'), id).toBe(true);
});

test('the store answers 503 with Retry-After: 3 ten times: the upload waits that long between rounds of tries, then completes', async () => {
  await env.proxy.rules((s) => s.forPut().matching((r) => PUT_PART.test(r.url)).times(10).thenReply(503, '<Error><Code>SlowDown</Code></Error>', { 'retry-after': '3', 'content-type': 'application/xml' }));
  const from = env.proxy.seen.length;
  const up = await startUpload('slow-down.bin', 30 * MiB);
  await expectUploaded(up.id, 'slow-down.bin', up.data);
  const waits = waitsSeen(up.id);
  expect(waits.some((w) => w.reason === 'store_unreachable' && /503/.test(w.last_error)), JSON.stringify(waits)).toBe(true);
  // Retry-After was honoured: the ten 503s reach four parts in flight at most, so they
  // take at least three rounds, and the first PUT that passes (the eleventh) comes after
  // two waits of 3 s (a lower bound, safe on a busy machine; back-off alone would take ~2 s).
  const puts = env.proxy.seen.slice(from).filter((r) => r.method === 'PUT' && PUT_PART.test(r.path));
  expect(puts.length).toBeGreaterThan(10);
  expect(puts[10]!.at - puts[0]!.at, JSON.stringify(puts.map((p) => p.at - puts[0]!.at))).toBeGreaterThanOrEqual(5500);
});

test('a connection that stalls is given up and the part sent again: the upload completes', async () => {
  await env.proxy.rules((s) => s.forPut().matching((r) => PUT_PART.test(r.url)).once().thenTimeout());
  const up = await startUpload('stalled.bin', 12 * MiB);
  await expectUploaded(up.id, 'stalled.bin', up.data);
  const waits = waitsSeen(up.id);
  expect(waits.length, 'waiting seen on /events').toBeGreaterThan(0);
  expect(waits[0].last_error).toMatch(/took no data|timeout|stall/i);
});
