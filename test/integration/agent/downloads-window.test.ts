// A download of many files streams through a window of entries: the job holds
// at most `FERRY_AGENT_DOWNLOAD_WINDOW` of them in memory (the rest stay in
// SQLite), the tree comes back identical, and an agent killed with SIGKILL
// half-way resumes from the database without fetching a completed file again
// (counted at the store, through the proxy in front of it).
import { randomBytes } from 'node:crypto';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import Database from 'better-sqlite3';
import { afterAll, beforeAll, expect, test } from 'vitest';
import { sqliteOptions } from '../../../src/sqlite/binding.js';
import { peakHeldEntries, resetPeakHeldEntries } from '../../../src/agent/engine/downloadWindow.js';
import { startFerry, jsonLine, type Running } from '../../helpers/cli.js';
import { startProxiedService, type ProxiedService } from '../../helpers/s3Proxy.js';
import { startTestAgent, type TestAgent } from '../../helpers/agent.js';
import { ownerActor } from '../../helpers/auth.js';
import { createPackage, finalizePackage, makeLink, uploadFile } from '../../helpers/flow.js';
import { agentCall, expectedTree, startDownload, treeOf, waitFor, waitForState, type TreeFile } from '../../helpers/downloads.js';

const WINDOW = 24;
/** Several windows' worth, in folders of 25. */
const FILES = 150;
const env_ = { FERRY_AGENT_DOWNLOAD_WINDOW: String(WINDOW) };

let env: ProxiedService;
let files: TreeFile[];
let link: { url: string };
const dirs: string[] = [];
let child: Running | undefined;
let agent: TestAgent | undefined;

const tmp = async (prefix: string) => {
  const d = await fs.mkdtemp(path.join(os.tmpdir(), prefix));
  dirs.push(d);
  return d;
};

beforeAll(async () => {
  env = await startProxiedService();
  const pkg = await createPackage(env.svc, await ownerActor(env.svc), { name: 'Window' });
  files = Array.from({ length: FILES }, (_, i) => ({ path: `set-${Math.floor(i / 25)}`, name: `f-${String(i).padStart(3, '0')}.bin`, data: randomBytes(100 + i) }));
  // A few at a time: the service takes each file in four requests.
  for (let i = 0; i < files.length; i += 10) {
    await Promise.all(files.slice(i, i + 10).map(async (f) => (f.id = await uploadFile(env.svc, pkg, f.name, f.path, f.data))));
  }
  await finalizePackage(env.svc, pkg);
  link = await makeLink(env.svc, pkg);
}, 180_000);

afterAll(async () => {
  await child?.stop('SIGKILL');
  await agent?.close();
  await env?.close();
  for (const d of dirs) await fs.rm(d, { recursive: true, force: true });
});

test('a download of several windows of files holds at most a window of entries and comes back identical', async () => {
  const saved = process.env.FERRY_AGENT_DOWNLOAD_WINDOW;
  process.env.FERRY_AGENT_DOWNLOAD_WINDOW = String(WINDOW);
  try {
    agent = await startTestAgent(env.svc);
  } finally {
    if (saved === undefined) delete process.env.FERRY_AGENT_DOWNLOAD_WINDOW;
    else process.env.FERRY_AGENT_DOWNLOAD_WINDOW = saved;
  }
  resetPeakHeldEntries();
  const dst = await tmp('ferry-window-dst-');
  const id = await startDownload(agent.url, { url: link.url, dst_folder: dst, create_package_folder: false });
  const done = await waitForState(agent.url, id);
  expect(done).toMatchObject({ file_count: FILES, files_done: FILES, progress: done.size });
  expect(await treeOf(dst)).toEqual(expectedTree(files));
  // Every entry passed through memory, never more than a window of them at once.
  expect(peakHeldEntries()).toBeGreaterThan(0);
  expect(peakHeldEntries()).toBeLessThanOrEqual(WINDOW);
  // The pages read from SQLite once the entries left memory.
  const page = await agentCall(agent.url, 'GET', `/downloads/${id}/files?after=99&limit=10`);
  expect(page.body.files.map((f: { index: number; state: string }) => [f.index, f.state])).toEqual(Array.from({ length: 10 }, (_, i) => [100 + i, 'complete']));
  await agent.close();
  agent = undefined;
}, 120_000);

test('killed with SIGKILL half-way, the download resumes from SQLite without fetching a completed file again', async () => {
  const configDir = await tmp('ferry-window-agent-');
  const dst = await tmp('ferry-window-kill-dst-');
  const start = async () => {
    const proc = startFerry(['agent', '--listen', '127.0.0.1:0', '--config-dir', configDir, '--hosted-url', env.svc.url, '--concurrency', '4'], env_);
    const line = await proc.waitFor((l) => jsonLine(l)?.msg === 'ferry agent ready', 'the agent ready line', 60_000);
    return { proc, url: String(jsonLine(line)!.url) };
  };
  const gets = (from: number) => env.proxy.seen.slice(from).filter((r) => r.method === 'GET' && r.fault === 'pass');
  // The store answers the first half, then holds every GET: the kill lands with half the files done.
  const half = FILES / 2;
  let from = env.proxy.seen.length;
  env.proxy.rule = (r) => (r.method === 'GET' && gets(from).length >= half ? 'hold' : 'pass');
  let run = await start();
  child = run.proc;
  const id = await startDownload(run.url, { url: link.url, dst_folder: dst, create_package_folder: false });
  await waitFor('half the files done', async () => {
    const r = await agentCall(run.url, 'GET', `/downloads/${id}?files=false`);
    return r.body.files_done >= half ? r.body : undefined;
  }, 1200, 50);
  await run.proc.stop('SIGKILL');
  child = undefined;

  const db = new Database(path.join(configDir, 'agent.db'), sqliteOptions());
  const complete = (db.prepare("SELECT COUNT(*) AS n FROM download_items WHERE download_id = ? AND state = 'complete'").get(id) as { n: number }).n;
  db.close();
  expect(complete).toBe(half);
  const fetchedBefore = new Set(gets(from).map((r) => r.path));
  expect(fetchedBefore.size).toBe(half);

  env.proxy.rule = () => 'pass';
  env.proxy.release();
  from = env.proxy.seen.length;
  run = await start();
  child = run.proc;
  await waitForState(run.url, id);
  const after = gets(from).map((r) => r.path);
  // Each file left fetched once; none of those done before the kill again.
  expect(after.filter((p) => fetchedBefore.has(p))).toEqual([]);
  expect(new Set(after).size).toBe(FILES - half);
  expect(after).toHaveLength(FILES - half);
  expect(await treeOf(dst)).toEqual(expectedTree(files));
  await run.proc.stop('SIGTERM');
  child = undefined;
}, 180_000);
