// Crash and resume: the agent runs as a child process (`ferry agent`), is killed
// with SIGKILL at several points of a 300 MiB download in 8 MiB ranges, and is
// started again on the same config dir each time. The download completes
// byte-identical; a recorded range is never fetched again, and what a run
// fetched without recording it was in flight at the kill (one range per slot).
import { createHash, randomBytes } from 'node:crypto';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import Database from 'better-sqlite3';
import { sqliteOptions } from '../../../src/sqlite/binding.js';
import { afterAll, beforeAll, expect, test } from 'vitest';
import { startFerry, jsonLine, type Running } from '../../helpers/cli.js';
import { startProxiedService, type ProxiedService } from '../../helpers/s3Proxy.js';
import { ownerActor } from '../../helpers/auth.js';
import { MiB, createPackage, finalizePackage, makeLink, uploadFile } from '../../helpers/flow.js';
import { agentCall, sha256File, startDownload, waitFor } from '../../helpers/downloads.js';

const SIZE = 300 * MiB;
const RANGE = 8 * MiB;
const RANGES = Math.ceil(SIZE / RANGE);
const CONCURRENCY = 4;

let env: ProxiedService;
let configDir: string;
let dst: string;
let link: { url: string };
let fileId: string;
let expectedSha: string;
let agent: Running | undefined;

beforeAll(async () => {
  env = await startProxiedService();
  configDir = await fs.mkdtemp(path.join(os.tmpdir(), 'ferry-crash-agent-'));
  dst = await fs.mkdtemp(path.join(os.tmpdir(), 'ferry-crash-dst-'));
  const data = randomBytes(SIZE);
  expectedSha = createHash('sha256').update(data).digest('hex');
  const pkg = await createPackage(env.svc, await ownerActor(env.svc), { name: 'Crash test' });
  fileId = await uploadFile(env.svc, pkg, 'large.bin', 'footage', data, 32 * MiB);
  await finalizePackage(env.svc, pkg);
  link = await makeLink(env.svc, pkg);
}, 180_000);

afterAll(async () => {
  await agent?.stop('SIGKILL');
  await env?.close();
  for (const d of [configDir, dst]) if (d) await fs.rm(d, { recursive: true, force: true });
});

async function startAgentProcess(): Promise<{ proc: Running; url: string }> {
  // Debug level: a range retried for another reason than the kill is logged, and shown below.
  const proc = startFerry(['agent', '--listen', '127.0.0.1:0', '--config-dir', configDir, '--hosted-url', env.svc.url, '--concurrency', String(CONCURRENCY), '--log-level', 'debug']);
  const line = await proc.waitFor((l) => jsonLine(l)?.msg === 'ferry agent ready', 'the agent ready line', 60_000);
  return { proc, url: String(jsonLine(line)!.url) };
}

/** Indexes of the ranges recorded in the (dead) agent's database. */
function recordedRanges(): Set<number> {
  const db = new Database(path.join(configDir, 'agent.db'), sqliteOptions());
  try {
    return new Set((db.prepare('SELECT idx FROM download_ranges WHERE file_id = ?').all(fileId) as { idx: number }[]).map((r) => r.idx));
  } finally {
    db.close();
  }
}

/** Range indexes the store was asked for since request number `from`, in order. */
function asked(from: number): number[] {
  return env.proxy.seen.slice(from).filter((r) => r.method === 'GET' && r.range).map((r) => r.range![0] / RANGE);
}

const retries = (proc: Running) => proc.lines.filter((l) => jsonLine(l)?.msg === 'range failed, retrying');

test('killed with SIGKILL three times, the download resumes from its recorded ranges and completes byte-identical', async () => {
  // Paced so that the kills land mid-download: 4 answers of 24 MiB/s each.
  env.proxy.pace = 24 * MiB;
  const killAt = [0, 0.35, 0.7]; // fraction of the size fetched when the agent is killed
  let from = env.proxy.seen.length;
  let run = await startAgentProcess();
  agent = run.proc;
  const id = await startDownload(run.url, { url: link.url, dst_folder: dst, chunk_size: RANGE, create_package_folder: false });

  let recordedBefore = new Set<number>();
  for (const fraction of killAt) {
    await waitFor(`progress past ${fraction}`, async () => {
      const r = await agentCall(run.url, 'GET', `/downloads/${id}`);
      expect(r.body.state, JSON.stringify(r.body.error)).toBe('transferring');
      return r.body.progress >= fraction * SIZE ? true : undefined;
    }, 2400, 25);
    await run.proc.stop('SIGKILL');
    // Let the proxy notice that the client is gone before reading what it served.
    await waitFor('the proxy to drop the dead connections', () => (env.proxy.active() === 0 ? true : undefined));
    const recorded = recordedRanges();
    const ranges = asked(from);
    expect([...recordedBefore].filter((i) => !recorded.has(i)), 'recorded ranges stay recorded').toEqual([]);
    expect(recorded.size).toBeLessThan(RANGES);
    expect(ranges.filter((i) => recordedBefore.has(i)), 'a range recorded by an earlier run is fetched again').toEqual([]);
    // What this run fetched and did not record was in flight at the kill: one range per slot at most.
    const lost = new Set(ranges.filter((i) => !recorded.has(i)));
    expect(lost.size, `ranges fetched but not recorded: ${[...lost].join(', ')}`).toBeLessThanOrEqual(CONCURRENCY);
    // A range asked for twice in one run was retried; loopback gives no reason to, so say why.
    if (ranges.length !== new Set(ranges).size) console.warn('ranges retried in this run:', retries(run.proc));
    recordedBefore = recorded;
    from = env.proxy.seen.length;
    run = await startAgentProcess();
    agent = run.proc;
  }

  const done = await waitFor('the download to complete', async () => {
    const r = await agentCall(run.url, 'GET', `/downloads/${id}`);
    expect(r.body.state, JSON.stringify(r.body.error)).not.toBe('error');
    return r.body.state === 'complete' ? r.body : undefined;
  }, 2400, 50);
  // The last run fetched exactly the ranges that were not recorded, each once.
  const all = Array.from({ length: RANGES }, (_, i) => i);
  expect(asked(from).sort((a, b) => a - b), JSON.stringify(retries(run.proc))).toEqual(all.filter((i) => !recordedBefore.has(i)));

  expect(done.items).toHaveLength(1);
  expect(done.items[0]).toMatchObject({ state: 'complete', progress: SIZE, local_path: path.join(dst, 'footage', 'large.bin') });
  expect(await fs.readdir(path.join(dst, 'footage'))).toEqual(['large.bin']);
  expect(await sha256File(path.join(dst, 'footage', 'large.bin'))).toBe(expectedSha);
  await run.proc.stop('SIGTERM');
  agent = undefined;
}, 240_000);
