// Pause and resume of uploads, one and all: a paused upload sends nothing and its
// progress holds; resumed, it continues from the recorded parts and completes
// byte-identical. Every state change reaches the event feed. The store sits
// behind a proxy that slows each part, and holds parts until the pause where a
// test must pause mid-way however slow the machine; the parts in flight at a
// pause are aborted, not let finish.
import { createHash } from 'node:crypto';
import fs from 'node:fs/promises';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, expect, test, vi } from 'vitest';
import { call } from '../../helpers/hosted.js';
import type { Actor } from '../../helpers/auth.js';
import { openEventStream, summariesOf, type TestAgent } from '../../helpers/agent.js';
import { downloadAll, MiB } from '../../helpers/flow.js';
import { startProxiedAgent, type ProxiedAgent, type ProxiedUploads } from './uploads-proxy.js';

const sha = (b: Buffer) => createHash('sha256').update(b).digest('hex');
const CONCURRENCY = 2;
const PART = 5 * MiB;

let env: ProxiedUploads;
let owner: Actor;
let agent: TestAgent;
let tmp: string;
let setup: ProxiedAgent | undefined;

beforeAll(async () => {
  setup = await startProxiedAgent('upload-pause', { 'chunk-size': String(PART), concurrency: String(CONCURRENCY) });
  ({ env, owner, agent, tmp } = setup);
  env.proxy.rule = () => ({ delayMs: 80 });
});

afterAll(() => setup?.close());

const get = async (id: string) => (await call(agent.url, 'GET', `/uploads/${id}`)).body;

async function until(id: string, ok: (u: any) => boolean, what: string) {
  return vi.waitFor(
    async () => {
      const u = await get(id);
      expect(u.state).not.toBe('error');
      expect(ok(u), `${what}: ${u.state} ${u.progress}/${u.size}`).toBe(true);
      return u;
    },
    { timeout: 45_000, interval: 20 },
  );
}

async function file(name: string, mib: number, seed: number) {
  const data = Buffer.concat(Array.from({ length: mib }, (_, i) => Buffer.alloc(MiB, (seed * 31 + i) & 0xff)));
  const p = path.join(tmp, name);
  await fs.writeFile(p, data);
  return { p, data };
}

async function start(p: string) {
  const r = await call(agent.url, 'POST', '/uploads', { body: { team_id: owner.teamId, paths: [p] } });
  expect(r.status, JSON.stringify(r.body)).toBe(201);
  return r.body.upload_id as string;
}

async function expectDelivered(id: string, name: string, data: Buffer) {
  const link = await call(agent.url, 'POST', `/uploads/${id}/link`, { body: {} });
  expect(link.status).toBe(201);
  const got = await downloadAll(env.svc, link.body);
  expect(sha(got.get(name)!)).toBe(sha(data));
}

test('pause holds progress and sends nothing; resume continues from the recorded parts and completes byte-identical', async () => {
  const events = await openEventStream(agent.url, { query: 'types=upload' });
  const { p, data } = await file('paused.bin', 60, 1);
  // Parts after the second wait at the proxy until the pause (which aborts them).
  env.proxy.rule = (put) => (put.partNumber > 2 ? 'hold' : { delayMs: 80 });
  const id = await start(p);
  await until(id, (u) => u.progress >= 2 * PART, 'two parts in');

  const paused = await call(agent.url, 'POST', `/uploads/${id}/pause`);
  env.proxy.rule = () => ({ delayMs: 80 });
  expect(paused.status).toBe(200);
  expect(paused.body).toMatchObject({ upload_id: id, state: 'paused' });
  expect(paused.body.items[0].state).toBe('paused');
  expect(paused.body.progress).toBeLessThan(data.length);

  const putsAtPause = env.proxy.puts.length;
  const held = (await get(id)).progress;
  await sleep(600);
  expect((await get(id)).progress).toBe(held);
  expect((await get(id)).state).toBe('paused');
  expect(env.proxy.puts.length).toBe(putsAtPause);
  // Pausing a paused upload changes nothing.
  expect((await call(agent.url, 'POST', `/uploads/${id}/pause`)).body.state).toBe('paused');

  const resumed = await call(agent.url, 'POST', `/uploads/${id}/resume`);
  expect(resumed.status).toBe(200);
  expect(resumed.body.state).toBe('transferring');
  const done = await until(id, (u) => u.state === 'complete', 'complete');
  expect(done.progress).toBe(data.length);
  // Only parts cut off in flight by the pause were sent twice.
  expect(env.proxy.storedBytes).toBeLessThanOrEqual(data.length + CONCURRENCY * PART);
  await expectDelivered(id, 'paused.bin', data);

  // The feed saw each state in order, and progress that never went back.
  const mine = () => summariesOf(events.received, 'upload', id);
  await vi.waitFor(() => expect(mine().at(-1)?.state).toBe('complete'));
  const states = mine().map((u) => u.state).filter((s, i, all) => s !== all[i - 1]);
  expect(states).toEqual(['transferring', 'paused', 'transferring', 'idle', 'complete']);
  const progress = mine().map((u) => u.progress);
  expect(progress).toEqual([...progress].sort((a, b) => a - b));
  expect(new Set(progress).size).toBeGreaterThan(2);
  events.close();

  // Neither pause nor resume applies to a complete upload.
  expect((await call(agent.url, 'POST', `/uploads/${id}/pause`)).status).toBe(409);
  expect((await call(agent.url, 'POST', `/uploads/${id}/resume`)).status).toBe(409);
});

test('pause aborts the parts in flight: none reaches the store or the record, nothing is sent while paused, and resume sends exactly those again', async () => {
  // Parts 1 and 2 go through; until the pause, every later part is held at the proxy
  // (read whole) until the test releases it, so parts 3 and 4 are in flight, and only they,
  // when the pause comes. Were they let finish rather than aborted, the store would answer
  // them 200 once released.
  const { p, data } = await file('aborted.bin', 40, 4);
  const parts = data.length / PART;
  const putsAtStart = env.proxy.puts.length;
  env.proxy.rule = (put) => (put.partNumber > 2 ? 'hold' : { delayMs: 20 });
  let id: string | undefined;
  try {
    id = await start(p);
    const mine = () => env.proxy.puts.slice(putsAtStart);
    await until(id, (u) => u.progress === 2 * PART && mine().length === 2 + CONCURRENCY, 'two parts in, the next ones held');
    const inFlight = mine().slice(2);
    expect(inFlight.map((x) => x.partNumber).sort()).toEqual([3, 4]);

    const paused = await call(agent.url, 'POST', `/uploads/${id}/pause`);
    env.proxy.rule = () => ({ delayMs: 20 });
    expect(paused.status).toBe(200);
    expect(paused.body.state).toBe('paused');
    // The client closed each held part; only then are they released, so a part the pause had
    // let go on would reach the store.
    const open = () => inFlight.filter((x) => x.clientClosedAt === undefined).map((x) => x.partNumber);
    await vi.waitFor(() => expect(open(), 'parts in flight the client did not abort').toEqual([]), { timeout: 30_000, interval: 10 });
    env.proxy.release();

    // Paused, and released: nothing new goes out, the held parts never reach the store, and
    // the record keeps only parts 1 and 2.
    const putsAtPause = env.proxy.puts.length;
    expect(putsAtPause).toBe(putsAtStart + 2 + CONCURRENCY);
    await sleep(600);
    expect(env.proxy.puts.length).toBe(putsAtPause);
    for (const x of inFlight) expect([x.status, x.bytes], `part ${x.partNumber} reached the store`).toEqual([undefined, undefined]);
    const still = await get(id);
    expect(still.state).toBe('paused');
    expect(still.progress).toBe(2 * PART);
    expect(still.items[0].progress).toBe(2 * PART);

    const resumed = await call(agent.url, 'POST', `/uploads/${id}/resume`);
    expect(resumed.status).toBe(200);
    const done = await until(id, (u) => u.state === 'complete', 'complete');
    expect(done.progress).toBe(data.length);

    // Sent again: exactly the parts cut off, first, and each part stored once; the recorded
    // parts 1 and 2 were not sent again.
    const after = env.proxy.puts.slice(putsAtPause);
    expect(after.slice(0, CONCURRENCY).map((x) => [x.partNumber, x.n]).sort()).toEqual([[3, 2], [4, 2]]);
    expect(after.map((x) => x.partNumber).sort((a, b) => a - b)).toEqual(Array.from({ length: parts - 2 }, (_, i) => i + 3));
    const stored = mine().filter((x) => x.status === 200);
    expect(stored.map((x) => x.partNumber).sort((a, b) => a - b)).toEqual(Array.from({ length: parts }, (_, i) => i + 1));
    expect(stored.reduce((sum, x) => sum + x.bytes!, 0)).toBe(data.length);
    expect(mine().filter((x) => x.status !== 200)).toEqual(inFlight);
    await expectDelivered(id, 'aborted.bin', data);
  } finally {
    env.proxy.rule = () => ({ delayMs: 80 });
    env.proxy.release();
    // Failed midway, the upload must not be left paused for the next test.
    if (id && (await get(id)).state !== 'complete') await call(agent.url, 'DELETE', `/uploads/${id}`);
  }
});

test('POST /uploads/pause and /uploads/resume act on every upload and answer the ones they changed', async () => {
  const one = await file('one.bin', 30, 2);
  const two = await file('two.bin', 30, 3);
  // Every part waits at the proxy until the pause (which aborts them): neither upload can finish first.
  const putsBefore = env.proxy.puts.length;
  env.proxy.rule = () => 'hold';
  const a = await start(one.p);
  const b = await start(two.p);
  await vi.waitFor(() => expect(env.proxy.puts.length).toBe(putsBefore + CONCURRENCY), { timeout: 30_000, interval: 20 });

  const paused = await call(agent.url, 'POST', '/uploads/pause');
  env.proxy.rule = () => ({ delayMs: 80 });
  expect(paused.status).toBe(200);
  const pausedIds = paused.body.map((u: any) => u.upload_id);
  expect(pausedIds.sort()).toEqual([a, b].sort());
  expect(paused.body.every((u: any) => u.state === 'paused')).toBe(true);
  // Nothing else was transferring: the earlier, complete upload is not among them.
  const list = (await call(agent.url, 'GET', '/uploads')).body as any[];
  expect(list.filter((u) => u.state === 'paused').map((u) => u.upload_id).sort()).toEqual([a, b].sort());

  const resumed = await call(agent.url, 'POST', '/uploads/resume');
  expect(resumed.status).toBe(200);
  expect(resumed.body.map((u: any) => u.upload_id).sort()).toEqual([a, b].sort());
  expect(resumed.body.every((u: any) => u.state === 'transferring')).toBe(true);
  await until(a, (u) => u.state === 'complete', 'a complete');
  await until(b, (u) => u.state === 'complete', 'b complete');
  await expectDelivered(a, 'one.bin', one.data);
  await expectDelivered(b, 'two.bin', two.data);
});

test('?files=false: creating, pausing, resuming, canceling and removing an upload answer its summary (file_count, no items); without it, the record', async () => {
  const dir = path.join(tmp, 'summaries');
  await fs.mkdir(dir);
  for (let i = 0; i < 3; i++) await fs.writeFile(path.join(dir, `f${i}.bin`), Buffer.alloc(6 * MiB, i));
  env.proxy.rule = () => 'hold';
  const summaryOf = (r: { status: number; body: any }, status = 200) => {
    expect(r.status, JSON.stringify(r.body)).toBe(status);
    expect(r.body.items, 'no items in a summary').toBeUndefined();
    expect(r.body.file_count).toBe(3);
    return r.body;
  };
  try {
    const made = summaryOf(await call(agent.url, 'POST', '/uploads?files=false', { body: { team_id: owner.teamId, paths: [dir] } }), 201);
    const id = made.upload_id as string;
    expect(summaryOf(await call(agent.url, 'POST', `/uploads/${id}/pause?files=false`)).state).toBe('paused');
    // Without the flag: the spec's record, every file in it.
    const record = await call(agent.url, 'POST', `/uploads/${id}/pause`);
    expect(record.body.items).toHaveLength(3);
    const resumedAll = await call(agent.url, 'POST', '/uploads/resume?files=false');
    expect(resumedAll.body.map((u: any) => [u.upload_id, u.items, u.file_count])).toEqual([[id, undefined, 3]]);
    expect(summaryOf(await call(agent.url, 'POST', `/uploads/${id}/cancel?files=false`)).state).toBe('error');
    expect(summaryOf(await call(agent.url, 'DELETE', `/uploads/${id}?files=false`)).upload_id).toBe(id);
    expect((await call(agent.url, 'GET', `/uploads/${id}`)).status).toBe(404);
    expect((await call(agent.url, 'POST', '/uploads?files=maybe', { body: { team_id: owner.teamId, paths: [dir] } })).status).toBe(400);
  } finally {
    env.proxy.rule = () => ({ delayMs: 80 });
  }
});
