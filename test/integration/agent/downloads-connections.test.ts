// Connections per transfer and FIFO mode for downloads, on a real agent, service
// and embedded store, counted at a proxy in front of the store that logs every
// GET (when it came and when its answer closed, on the proxy's own counter) and
// can hold them until the test lets them go. With `--connections-per-transfer 2`
// a download never has more than 2 ranges or whole-file GETs at the store,
// while the concurrency (8) lets a second download run beside it; with FIFO and
// `max_active_downloads: 1` a second download waits with its place and starts
// once the first is complete.
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, expect, test, vi } from 'vitest';
import { startTestAgent, type TestAgent } from '../../helpers/agent.js';
import { startProxiedService, type ProxiedService, type Seen } from '../../helpers/s3Proxy.js';
import { MiB } from '../../helpers/flow.js';
import { agentCall, startDownload, treePackage, waitFor, waitForRecord, waitForState, type TreePackage } from '../../helpers/downloads.js';
import { peakOpen } from './uploads-proxy.js';

vi.setConfig({ testTimeout: 120_000 });
let env: ProxiedService;
let a: TestAgent;
let trees: TreePackage[];
let tmp: string;
/** Requests the proxy saw before the downloads (the Packages' uploads and their checks). */
let before = 0;

beforeAll(async () => {
  env = await startProxiedService();
  a = await startTestAgent(env.svc, { concurrency: '8', 'connections-per-transfer': '2' });
  trees = [];
  for (const name of ['One', 'Two', 'Three', 'Four']) trees.push(await treePackage(env.svc, { name, bigMiB: 6 }));
  tmp = await fs.mkdtemp(path.join(os.tmpdir(), 'ferry-dl-connections-'));
  before = env.proxy.seen.length;
}, 180_000);

afterAll(async () => {
  env?.proxy.release();
  await a?.close();
  await env?.close();
  if (tmp) await fs.rm(tmp, { recursive: true, force: true });
});

/** The GETs of the files of `tree` the store was asked for. */
const getsOf = (tree: TreePackage): Seen[] => env.proxy.seen.slice(before).filter((s) => s.method === 'GET' && tree.files.some((f) => f.id && s.path.endsWith(`/${f.id}`)));
const download = (tree: TreePackage) => startDownload(a.url, { url: tree.link.url, dst_folder: path.join(tmp, tree.name), chunk_size: MiB });

test('connections_per_transfer 2 (a flag): a download never has more than 2 GETs at the store at once, ranges and whole files alike; another download runs beside it', async () => {
  const settings = (await agentCall(a.url, 'GET', '/settings')).body;
  expect(settings).toMatchObject({ connections_per_transfer: 2, locked: { connections_per_transfer: 'set by --connections-per-transfer where the agent was started' } });
  const [one, two] = trees as [TreePackage, TreePackage];
  env.proxy.rule = () => 'hold';
  try {
    const first = await download(one);
    await waitFor('two GETs of the first download held', () => (getsOf(one).length === 2 ? true : undefined));
    // The first, started and with ranges ready, is held at its cap: the second gets slots of its own.
    const second = await download(two);
    await waitFor('two GETs of the second download held', () => (getsOf(two).length === 2 ? true : undefined));
    expect(getsOf(one).length).toBe(2);
    // Then every GET goes on at the pace of a slow store, so that they overlap.
    env.proxy.rule = () => 'pass';
    env.proxy.pace = 16 * MiB;
    env.proxy.release();
    await waitForState(a.url, first);
    await waitForState(a.url, second);
    expect(getsOf(one).length).toBeGreaterThan(6);
    expect(peakOpen(getsOf(one))).toBe(2);
    expect(peakOpen(getsOf(two))).toBe(2);
    expect(peakOpen([...getsOf(one), ...getsOf(two)])).toBe(4);
  } finally {
    env.proxy.rule = () => 'pass';
    env.proxy.pace = 0;
    env.proxy.release();
  }
});

test('FIFO with 1 active download: the second waits with its place though slots are free, and starts once the first is complete', async () => {
  const r = await agentCall(a.url, 'PATCH', '/settings', { fifo: true, max_active_downloads: 1 });
  expect(r.status, JSON.stringify(r.body)).toBe(200);
  const [, , three, four] = trees as TreePackage[] as [TreePackage, TreePackage, TreePackage, TreePackage];
  env.proxy.rule = () => 'hold';
  try {
    const first = await download(three);
    await waitFor('GETs of the first download held', () => (getsOf(three).length === 2 ? true : undefined));
    const second = await download(four);
    await waitForRecord(a.url, second, 'first in line', (d) => d.queue_position === 1);
    expect(getsOf(four)).toEqual([]);
    env.proxy.rule = () => 'pass';
    env.proxy.release();
    await waitForState(a.url, first);
    await waitForState(a.url, second);
    const lastClosed = Math.max(...getsOf(three).map((g) => g.closedAt!));
    expect(lastClosed).toBeLessThan(Math.min(...getsOf(four).map((g) => g.at)));
  } finally {
    env.proxy.rule = () => 'pass';
    env.proxy.release();
  }
});
