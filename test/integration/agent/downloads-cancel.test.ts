// A download that waits its turn, and a download canceled. With --concurrency 1
// a second download waits with queue_position 1 while the first runs. Canceling
// the first stops it at once and keeps it as canceled (state error, error
// "Canceled", canceled_at) across a restart: the files it had finished stay, the
// partial one is removed (as a browser does), resume refuses it, DELETE forgets
// it; the waiting download then starts. The store sits behind a proxy that holds
// the big file's later ranges, so the cancel comes mid-file whatever the speed.
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, expect, test } from 'vitest';
import { startTestAgent, type TestAgent } from '../../helpers/agent.js';
import { startProxiedService, type ProxiedService } from '../../helpers/s3Proxy.js';
import { MiB } from '../../helpers/flow.js';
import { agentCall, expectedTree, relOf, startDownload, treeOf, treePackage, waitFor, waitForRecord, waitForState, type TreePackage } from '../../helpers/downloads.js';
import { PART_SUFFIX } from '../../../src/agent/engine/downloadFiles.js';

const FLAGS = { concurrency: '1' };
let env: ProxiedService;
let a: TestAgent;
let restarted: TestAgent | undefined;
let tree: TreePackage;
let tmp: string;

beforeAll(async () => {
  env = await startProxiedService();
  a = await startTestAgent(env.svc, FLAGS);
  tree = await treePackage(env.svc, { name: 'Reel 3', bigMiB: 6 });
  tmp = await fs.mkdtemp(path.join(os.tmpdir(), 'ferry-dl-cancel-'));
}, 120_000);

afterAll(async () => {
  env?.proxy.release();
  await restarted?.agent.close();
  await a?.close();
  await env?.close();
  if (tmp) await fs.rm(tmp, { recursive: true, force: true });
});

test('a second download waits with its place; cancel keeps the first as canceled (finished files stay, the partial one goes), across a restart', async () => {
  const big = tree.files.find((f) => f.name === 'big.bin')!;
  // The big file's ranges after the second wait at the store until the cancel.
  env.proxy.rule = (r) => (r.method === 'GET' && r.path.endsWith(`/${big.id}`) && (r.range?.[0] ?? 0) >= 2 * MiB ? 'hold' : 'pass');
  const dst = path.join(tmp, 'first');
  const id = await startDownload(a.url, { url: tree.link.url, dst_folder: dst, chunk_size: MiB });
  await waitForRecord(a.url, id, 'the big file two ranges in, the rest held', (r) => r.progress >= r.size - 4 * MiB && env.proxy.held() === 1);
  const first = (await agentCall(a.url, 'GET', `/downloads/${id}`)).body;
  expect(first.queue_position).toBeUndefined();

  const second = await startDownload(a.url, { url: tree.link.url, dst_folder: path.join(tmp, 'second'), chunk_size: MiB });
  expect((await agentCall(a.url, 'GET', `/downloads/${second}`)).body).toMatchObject({ state: 'transferring', queue_position: 1, progress: 0 });

  const canceled = await agentCall(a.url, 'POST', `/downloads/${id}/cancel`);
  expect(canceled.status, JSON.stringify(canceled.body)).toBe(200);
  expect(canceled.body).toMatchObject({ download_id: id, state: 'error', error: 'Canceled' });
  expect(Date.parse(canceled.body.canceled_at)).not.toBeNaN();
  const bigItem = canceled.body.items.find((i: any) => i.path === relOf(big));
  expect(bigItem).toMatchObject({ state: 'error', error: 'Canceled' });
  expect(canceled.body.items.filter((i: any) => i.path !== relOf(big)).every((i: any) => i.state === 'complete')).toBe(true);

  // Finished files stay byte-identical; the big one's partial file is gone, nothing else is left.
  const want = expectedTree(tree.files.filter((f) => f !== big), ['empty-folder', 'docs/deep'], tree.name);
  want.set(`${tree.name}/media`, 'dir');
  expect(await treeOf(dst)).toEqual(want);
  expect([...(await treeOf(dst)).keys()].some((p) => p.endsWith(PART_SUFFIX))).toBe(false);

  // The slot is free: the waiting download starts and completes.
  env.proxy.rule = () => 'pass';
  env.proxy.release();
  await waitForState(a.url, second);

  // Again: the same record; resume: 409 in words, and resume-all passes it by.
  expect((await agentCall(a.url, 'POST', `/downloads/${id}/cancel`)).body).toEqual(canceled.body);
  const resumed = await agentCall(a.url, 'POST', `/downloads/${id}/resume`);
  expect(resumed.status).toBe(409);
  expect(resumed.body.message).toMatch(/canceled.*cannot be resumed/);
  expect((await agentCall(a.url, 'POST', '/downloads/resume')).body.map((d: any) => d.download_id)).not.toContain(id);
  const done = await agentCall(a.url, 'POST', `/downloads/${second}/cancel`);
  expect(done.status).toBe(409);
  expect(done.body.message).toMatch(/complete/);

  // A restart keeps it canceled and fetches nothing more.
  await a.agent.close();
  restarted = await startTestAgent(env.svc, { ...FLAGS, 'config-dir': a.configDir });
  expect((await agentCall(restarted.url, 'GET', `/downloads/${id}`)).body).toEqual(canceled.body);
  await new Promise((r) => setTimeout(r, 300));
  expect(await treeOf(dst)).toEqual(want);

  // DELETE forgets it; the finished files stay (no remove_files).
  const removed = await agentCall(restarted.url, 'DELETE', `/downloads/${id}`);
  expect(removed.status).toBe(200);
  await waitFor('the download to be forgotten', async () => ((await agentCall(restarted!.url, 'GET', `/downloads/${id}`)).status === 404 ? true : undefined));
  expect(await treeOf(dst)).toEqual(want);
});

test('?files=false: pausing, resuming, canceling and removing a download answer its summary (file_count, no items); without it, the record', async () => {
  const url = (restarted ?? a).url;
  const big = tree.files.find((f) => f.name === 'big.bin')!;
  const files = tree.files.length;
  env.proxy.rule = (r) => (r.method === 'GET' && r.path.endsWith(`/${big.id}`) && (r.range?.[0] ?? 0) >= 2 * MiB ? 'hold' : 'pass');
  const summaryOf = (r: { status: number; body: any }) => {
    expect(r.status, JSON.stringify(r.body)).toBe(200);
    expect(r.body.items, 'no items in a summary').toBeUndefined();
    expect(r.body.file_count).toBe(files);
    return r.body;
  };
  const dst = path.join(tmp, 'summaries');
  try {
    const id = await startDownload(url, { url: tree.link.url, dst_folder: dst, chunk_size: MiB });
    await waitForRecord(url, id, 'the big file held', () => env.proxy.held() >= 1);
    expect(summaryOf(await agentCall(url, 'POST', `/downloads/${id}/pause?files=false`)).state).toBe('paused');
    // Without the flag: the spec's record, every entry in it.
    expect((await agentCall(url, 'POST', `/downloads/${id}/pause`)).body.items).toHaveLength(files);
    expect(summaryOf(await agentCall(url, 'POST', `/downloads/${id}/resume?files=false`)).state).toBe('transferring');
    expect(summaryOf(await agentCall(url, 'POST', `/downloads/${id}/pause?files=false`)).state).toBe('paused');
    const resumedAll = await agentCall(url, 'POST', '/downloads/resume?files=false');
    expect(resumedAll.body.map((d: any) => [d.download_id, d.items, d.file_count])).toEqual([[id, undefined, files]]);
    const pausedAll = await agentCall(url, 'POST', '/downloads/pause?files=false');
    expect(pausedAll.body.map((d: any) => [d.download_id, d.items])).toEqual([[id, undefined]]);
    expect(summaryOf(await agentCall(url, 'POST', `/downloads/${id}/cancel?files=false`)).state).toBe('error');
    expect((await agentCall(url, 'DELETE', `/downloads/${id}?files=maybe`)).status).toBe(400);
    expect(summaryOf(await agentCall(url, 'DELETE', `/downloads/${id}?files=false&remove_files=true`)).download_id).toBe(id);
    expect((await agentCall(url, 'GET', `/downloads/${id}`)).status).toBe(404);
    // remove_files took what it had fetched and made: nothing is left of it.
    expect([...(await treeOf(dst)).keys()]).toEqual([]);
    expect((await agentCall(url, 'DELETE', '/downloads?files=false&states=paused')).body).toEqual([]);
  } finally {
    env.proxy.rule = () => 'pass';
    env.proxy.release();
  }
});
