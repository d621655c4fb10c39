// FIFO mode and connections per transfer on a real agent, service and embedded
// store, with a proxy in front of the store that logs every part PUT (when it
// came and when its answer closed, on the proxy's own counter) and can hold
// parts until the test lets them go, so nothing depends on speed. With
// `fifo: true` and `max_active_uploads: 1` (set live through PATCH /settings)
// three uploads run strictly one after another in the order they were made,
// the waiting ones showing their place in the record and the CLI; with
// `connections_per_transfer: 2` no upload ever has more than 2 parts at the
// store, while the global concurrency lets several uploads run beside it.
import fs from 'node:fs/promises';
import path from 'node:path';
import { parse as parseYaml } from 'yaml';
import { afterAll, beforeAll, expect, test, vi } from 'vitest';
import { call } from '../../helpers/hosted.js';
import { startTestAgent, type TestAgent } from '../../helpers/agent.js';
import { ferry } from '../../helpers/cli.js';
import { MiB } from '../../helpers/flow.js';
import { peakOpen, startProxiedAgent, type ProxiedAgent } from './uploads-proxy.js';

vi.setConfig({ testTimeout: 120_000 });
const PART = 5 * MiB;
let setup: ProxiedAgent;
/** The agent started again on the same config dir, when a test did. */
let restarted: TestAgent | undefined;

beforeAll(async () => {
  setup = await startProxiedAgent('upload-fifo', { 'chunk-size': String(PART), concurrency: '8' });
}, 120_000);

afterAll(async () => {
  setup?.env.proxy.release();
  await restarted?.close();
  await setup?.close();
});

const agentUrl = () => (restarted ?? setup.agent).url;
const get = async (id: string) => (await call(agentUrl(), 'GET', `/uploads/${id}`)).body;
const settings = (body: Record<string, unknown>) => call(agentUrl(), 'PATCH', '/settings', { body });

async function until(id: string, ok: (u: any) => boolean, what: string) {
  return vi.waitFor(
    async () => {
      const u = await get(id);
      expect(ok(u), `${what}: ${JSON.stringify({ ...u, items: undefined })}`).toBe(true);
      return u;
    },
    { timeout: 60_000, interval: 20 },
  );
}

async function start(name: string, bytes: number): Promise<{ id: string; pkg: string }> {
  const { tmp, agent, owner } = setup;
  const p = path.join(tmp, name);
  await fs.writeFile(p, Buffer.alloc(bytes, name.charCodeAt(0)));
  const r = await call((restarted ?? agent).url, 'POST', '/uploads', { body: { team_id: owner.teamId, paths: [p] } });
  expect(r.status, JSON.stringify(r.body)).toBe(201);
  return { id: r.body.upload_id as string, pkg: r.body.package_id as string };
}

const putsOf = (pkg: string) => setup.env.proxy.puts.filter((p) => p.key.includes(pkg));

test('PATCH /settings takes the queueing settings live, keeps them in config.yml, and refuses bad values in words', async () => {
  const r = await settings({ fifo: true, max_active_uploads: 1, max_active_downloads: 2, connections_per_transfer: 4 });
  expect(r.status, JSON.stringify(r.body)).toBe(200);
  expect(r.body).toMatchObject({ restarting: false, settings: { fifo: true, max_active_uploads: 1, max_active_downloads: 2, connections_per_transfer: 4 } });
  const file = () => fs.readFile(path.join(setup.agent.configDir, 'config.yml'), 'utf8').then((t) => parseYaml(t));
  expect(await file()).toMatchObject({ fifo: true, max_active_uploads: 1, max_active_downloads: 2, connections_per_transfer: 4 });
  // null: no cap but the concurrency; the key leaves config.yml.
  const none = await settings({ connections_per_transfer: null });
  expect(none.body.settings.connections_per_transfer).toBeNull();
  expect(await file()).not.toHaveProperty('connections_per_transfer');
  for (const [body, words] of [
    [{ max_active_uploads: 0 }, 'Uploads at once is at least 1.'],
    [{ max_active_downloads: 65 }, 'Downloads at once is at most 64.'],
    [{ connections_per_transfer: 0 }, 'Connections per transfer is at least 1.'],
    [{ fifo: 'yes' }, 'FIFO mode is true or false.'],
  ] as const) {
    const bad = await settings(body);
    expect(bad.status, JSON.stringify(body)).toBe(400);
    expect(bad.body).toMatchObject({ message: words, field: Object.keys(body)[0] });
  }
  expect((await call(setup.agent.url, 'GET', '/settings')).body).toMatchObject({ fifo: true, max_active_uploads: 1, max_active_downloads: 2, connections_per_transfer: null });
});

test('FIFO with 1 active upload: three uploads run strictly one after another, in the order they were made; the waiting ones show their place', async () => {
  const { env } = setup;
  expect((await settings({ fifo: true, max_active_uploads: 1, connections_per_transfer: null })).status).toBe(200);
  env.proxy.rule = () => 'hold';
  try {
    const ups = [await start('fifo-a.bin', 3 * PART), await start('fifo-b.bin', 3 * PART), await start('fifo-c.bin', 3 * PART)];
    // The first sends its parts (the concurrency lets all three go); the others, registered and
    // ready, wait with their place though slots are free.
    await vi.waitFor(() => expect(putsOf(ups[0]!.pkg).length).toBe(3), { timeout: 60_000, interval: 20 });
    await until(ups[1]!.id, (u) => u.items[0].state === 'transferring' && u.queue_position === 1, 'b first in line');
    await until(ups[2]!.id, (u) => u.items[0].state === 'transferring' && u.queue_position === 2, 'c second in line');
    expect(env.proxy.puts.filter((p) => p.key.includes(ups[1]!.pkg) || p.key.includes(ups[2]!.pkg))).toEqual([]);
    // The CLI says so.
    const ls = await ferry(['uploads', 'ls', '--agent', setup.agent.url], { FERRY_AGENT_URL: undefined, FERRY_AGENT_API_KEY: undefined });
    expect(ls.code, ls.stderr).toBe(0);
    expect(ls.stdout).toMatch(new RegExp(`^${ups[1]!.id}\\s+queued \\(1\\)\\s`, 'm'));
    expect(ls.stdout).toMatch(new RegExp(`^${ups[2]!.id}\\s+queued \\(2\\)\\s`, 'm'));

    env.proxy.rule = () => 'pass';
    env.proxy.release();
    for (const u of ups) await until(u.id, (r) => r.state === 'complete' && r.queue_position === undefined, 'complete');

    // At the store: every part of one upload was answered before the first part of the next came.
    const runs = ups.map((u) => putsOf(u.pkg));
    expect(runs.map((r) => r.length)).toEqual([3, 3, 3]);
    for (let i = 1; i < runs.length; i++) {
      const lastClosed = Math.max(...runs[i - 1]!.map((p) => p.closedAt!));
      const firstCame = Math.min(...runs[i]!.map((p) => p.at));
      expect(lastClosed, `upload ${i} began before upload ${i - 1} ended`).toBeLessThan(firstCame);
    }
  } finally {
    env.proxy.rule = () => 'pass';
    env.proxy.release();
  }
});

test('connections_per_transfer 2: no upload has more than 2 parts at the store at once, while the concurrency (8) runs several uploads beside each other', async () => {
  const { env } = setup;
  expect((await settings({ fifo: false, connections_per_transfer: 2 })).status).toBe(200);
  env.proxy.rule = () => 'hold';
  try {
    const first = await start('cap-a.bin', 8 * PART);
    await vi.waitFor(() => expect(putsOf(first.pkg).length).toBe(2), { timeout: 60_000, interval: 20 });
    // A second upload gets slots of its own: the first, started and with parts ready, was held at its cap
    // (without it, the first would have taken all 8).
    const second = await start('cap-b.bin', 8 * PART);
    await vi.waitFor(() => expect(putsOf(second.pkg).length).toBe(2), { timeout: 60_000, interval: 20 });
    expect(putsOf(first.pkg).length).toBe(2);
    // Then parts go on as the store answers them, each a little slow so that they overlap.
    env.proxy.rule = () => ({ delayMs: 20 });
    env.proxy.release();
    for (const u of [first, second]) await until(u.id, (r) => r.state === 'complete', 'complete');
    expect(peakOpen(putsOf(first.pkg))).toBe(2);
    expect(peakOpen(putsOf(second.pkg))).toBe(2);
    expect(peakOpen([...putsOf(first.pkg), ...putsOf(second.pkg)])).toBe(4);
  } finally {
    env.proxy.rule = () => 'pass';
    env.proxy.release();
    await settings({ connections_per_transfer: null });
  }
});

test('a restart of the agent keeps FIFO mode (config.yml) and the order: the oldest runs, the others wait in creation order', async () => {
  const { env, agent } = setup;
  expect((await settings({ fifo: true, max_active_uploads: 1, connections_per_transfer: null })).status).toBe(200);
  env.proxy.rule = () => 'hold';
  try {
    const ups = [await start('again-a.bin', 2 * PART), await start('again-b.bin', 2 * PART), await start('again-c.bin', 2 * PART)];
    await vi.waitFor(() => expect(putsOf(ups[0]!.pkg).length).toBe(2), { timeout: 60_000, interval: 20 });
    await until(ups[2]!.id, (u) => u.queue_position === 2, 'c second in line');
    await agent.agent.close();
    restarted = await startTestAgent(setup.env.svc, { 'chunk-size': String(PART), concurrency: '8', 'config-dir': agent.configDir });
    await until(ups[1]!.id, (u) => u.queue_position === 1, 'b first in line again');
    await until(ups[2]!.id, (u) => u.queue_position === 2, 'c second in line again');
    expect((await get(ups[0]!.id)).queue_position).toBeUndefined();
    // a sends its parts again (those held were aborted by the stop); b and c nothing yet.
    await vi.waitFor(() => expect(putsOf(ups[0]!.pkg).length).toBe(4), { timeout: 60_000, interval: 20 });
    expect([...putsOf(ups[1]!.pkg), ...putsOf(ups[2]!.pkg)]).toEqual([]);
    env.proxy.rule = () => 'pass';
    env.proxy.release();
    for (const u of ups) await until(u.id, (r) => r.state === 'complete', 'complete');
    const runs = ups.map((u) => putsOf(u.pkg).filter((p) => p.status === 200));
    for (let i = 1; i < runs.length; i++) expect(Math.max(...runs[i - 1]!.map((p) => p.closedAt!))).toBeLessThan(Math.min(...runs[i]!.map((p) => p.at)));
  } finally {
    env.proxy.rule = () => 'pass';
    env.proxy.release();
  }
});
