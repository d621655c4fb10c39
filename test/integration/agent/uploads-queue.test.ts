// Uploads that wait their turn, and uploads canceled. With --concurrency 1 one
// upload runs and the others wait with their place (queue_position 1..n, in
// creation order), start in that order, and each change of place reaches the
// event feed. A canceled upload stops at once and stays in the history as
// canceled (state error, error "Canceled", canceled_at), across a restart of the
// agent; resume refuses it, DELETE forgets it. The store sits behind a proxy
// that holds every part until the test lets it go, so nothing depends on speed.
import fs from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, expect, test, vi } from 'vitest';
import { call } from '../../helpers/hosted.js';
import { changeOf, openEventStream, startTestAgent, type TestAgent } from '../../helpers/agent.js';
import { MiB } from '../../helpers/flow.js';
import { startProxiedAgent, type ProxiedAgent } from './uploads-proxy.js';

const PART = 5 * MiB;
const FLAGS = { 'chunk-size': String(PART), concurrency: '1' };
let setup: ProxiedAgent | undefined;
let restarted: TestAgent | undefined;

beforeAll(async () => {
  setup = await startProxiedAgent('upload-queue', FLAGS);
});

afterAll(async () => {
  setup?.env.proxy.release();
  await restarted?.agent.close();
  await setup?.close();
});

const get = async (url: string, id: string) => (await call(url, 'GET', `/uploads/${id}`)).body;

async function until(url: string, id: string, ok: (u: any) => boolean, what: string) {
  return vi.waitFor(
    async () => {
      const u = await get(url, id);
      expect(ok(u), `${what}: ${JSON.stringify({ ...u, items: undefined })}`).toBe(true);
      return u;
    },
    { timeout: 30_000, interval: 20 },
  );
}

async function start(name: string, bytes: number): Promise<string> {
  const { tmp, agent, owner } = setup!;
  const p = path.join(tmp, name);
  await fs.writeFile(p, Buffer.alloc(bytes, name.charCodeAt(0)));
  const r = await call(agent.url, 'POST', '/uploads', { body: { team_id: owner.teamId, paths: [p] } });
  expect(r.status, JSON.stringify(r.body)).toBe(201);
  return r.body.upload_id as string;
}

test('with concurrency 1 the uploads behind the running one wait with their place, start in that order, and each move reaches /events', async () => {
  const { agent, env } = setup!;
  env.proxy.rule = () => 'hold';
  const events = await openEventStream(agent.url, { query: 'types=upload' });
  try {
    const first = await start('first.bin', 3 * PART);
    await vi.waitFor(() => expect(env.proxy.puts.length).toBe(1), { timeout: 30_000, interval: 20 });
    expect((await get(agent.url, first)).queue_position).toBeUndefined();

    const waiting = [await start('b.bin', MiB), await start('c.bin', MiB), await start('d.bin', MiB)];
    // Each is registered (its part is ready) and still waits, in creation order.
    for (const [i, id] of waiting.entries()) {
      await until(agent.url, id, (u) => u.items[0].state === 'transferring' && u.queue_position === i + 1, `place ${i + 1}`);
    }
    expect((await get(agent.url, first)).queue_position).toBeUndefined();
    expect(env.proxy.puts.length).toBe(1);
    // The running upload keeps the slot for its other parts (no turns part by part): nobody moves.
    for (let n = 2; n <= 3; n++) {
      env.proxy.release();
      await vi.waitFor(() => expect(env.proxy.puts.length).toBe(n), { timeout: 30_000, interval: 20 });
      expect(env.proxy.puts.at(-1)!.partNumber).toBe(n);
      expect((await Promise.all(waiting.map((id) => get(agent.url, id)))).map((u) => u.queue_position)).toEqual([1, 2, 3]);
    }
    // Then each part let go frees the one slot: the first in line starts, the others move up a place.
    for (let n = 0; n < waiting.length; n++) {
      env.proxy.release();
      await vi.waitFor(() => expect(env.proxy.puts.length).toBe(n + 4), { timeout: 30_000, interval: 20 });
      const now = await Promise.all(waiting.map((id) => get(agent.url, id)));
      expect(now.map((u) => u.queue_position)).toEqual(waiting.map((_, i) => (i <= n ? undefined : i - n)));
      expect(now[n].state).toBe('transferring');
      // The last one in line hears of its new place through the feed.
      const last = waiting.at(-1)!;
      if (n < waiting.length - 1) {
        await events.next((m) => changeOf(m, 'upload', last) && m.json.upload?.queue_position === waiting.length - 1 - n);
      }
    }
    env.proxy.release();
    for (const id of [first, ...waiting]) await until(agent.url, id, (u) => u.state === 'complete' && u.queue_position === undefined, 'complete');
  } finally {
    events.close();
    env.proxy.rule = () => 'pass';
  }
});

test('cancel stops an upload at once and keeps it as canceled, across a restart; resume refuses it; DELETE by state forgets it', async () => {
  const { agent, env } = setup!;
  // The first part is stored; the second waits at the store until the cancel.
  env.proxy.rule = (put) => (put.partNumber > 1 ? 'hold' : 'pass');
  const putsBefore = env.proxy.puts.length;
  const id = await start('reel.bin', 3 * PART);
  await until(agent.url, id, (u) => u.progress >= PART, 'one part in');
  await vi.waitFor(() => expect(env.proxy.puts.length).toBe(putsBefore + 2), { timeout: 30_000, interval: 20 });

  const canceled = await call(agent.url, 'POST', `/uploads/${id}/cancel`);
  expect(canceled.status, JSON.stringify(canceled.body)).toBe(200);
  expect(canceled.body).toMatchObject({ upload_id: id, state: 'error', error: 'Canceled', progress: PART });
  expect(Date.parse(canceled.body.canceled_at)).not.toBeNaN();
  // The part in flight was aborted, not let finish.
  await vi.waitFor(() => expect(env.proxy.puts.at(-1)!.clientClosedAt).toBeDefined(), { timeout: 10_000, interval: 20 });
  env.proxy.release();
  const puts = env.proxy.puts.length;

  // Again: the same record. Resume: 409 in words.
  expect((await call(agent.url, 'POST', `/uploads/${id}/cancel`)).body).toEqual(canceled.body);
  const resumed = await call(agent.url, 'POST', `/uploads/${id}/resume`);
  expect(resumed.status).toBe(409);
  expect(resumed.body.message).toMatch(/canceled.*cannot be resumed/);
  expect((await call(agent.url, 'POST', '/uploads/resume')).body.map((u: any) => u.upload_id)).not.toContain(id);

  // A restart keeps it canceled, and sends nothing more.
  await agent.agent.close();
  restarted = await startTestAgent(env.svc, { ...FLAGS, 'config-dir': agent.configDir });
  expect(await get(restarted.url, id)).toEqual(canceled.body);
  expect(env.proxy.puts.length).toBe(puts);

  // A complete upload has nothing to cancel.
  const done = (await call(restarted.url, 'GET', '/uploads')).body.find((u: any) => u.state === 'complete');
  const refused = await call(restarted.url, 'POST', `/uploads/${done.upload_id}/cancel`);
  expect(refused.status).toBe(409);
  expect(refused.body.message).toMatch(/complete/);
  expect((await call(restarted.url, 'POST', '/uploads/nope/cancel')).status).toBe(404);

  const removed = await call(restarted.url, 'DELETE', '/uploads?states=error');
  expect(removed.status).toBe(200);
  expect(removed.body.map((u: any) => u.upload_id)).toEqual([id]);
  expect((await call(restarted.url, 'GET', `/uploads/${id}`)).status).toBe(404);
});
