// The bandwidth limits at work (docs/agent-api-notes/bandwidth.md): `ferry serve`
// and `ferry agent` as their own processes on 127.0.0.1; a BENCH_LIMIT_MB MiB file
// (default 200) up and down with no limit, then with upload_rate_limit and
// download_rate_limit at BENCH_LIMIT_RATE MiB/s (default 20). Prints the achieved
// rate as a ratio to the limit (target: within 10%) and the load average, since
// the machine is shared. Run: npm run bench:limits (BENCH_LIMITS_FREE_ONLY=1: the
// unlimited round alone, e.g. from a checkout without the buckets, to compare).
import { randomFillSync } from 'node:crypto';
import { mkdir, mkdtemp, open, rm } from 'node:fs/promises';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { call } from '../helpers/hosted.js';
import { signInAgent } from '../helpers/agent.js';
import { AgentClient } from '../../src/cli/agentClient.js';
import { followTransfer } from '../../src/cli/transfers/follow.js';
import { startAgentProcess, startServedService } from './lib/processes.js';

const MiB = 1024 * 1024;
const SIZE = Number(process.env.BENCH_LIMIT_MB ?? 200) * MiB;
const RATE = Number(process.env.BENCH_LIMIT_RATE ?? 20) * MiB;
const WAIT_MS = 10 * 60_000;

async function makeFile(path: string, size: number): Promise<void> {
  const block = randomFillSync(Buffer.alloc(Math.min(64 * MiB, size)));
  const fh = await open(path, 'w');
  try {
    for (let done = 0; done < size; done += block.length) await fh.write(block, 0, Math.min(block.length, size - done));
  } finally {
    await fh.close();
  }
}

async function waitComplete(url: string, kind: 'upload' | 'download', id: string): Promise<void> {
  const client = new AgentClient(url);
  const out = { write: () => true };
  const isDone = (r: { state: string }) => r.state === 'complete' || r.state === 'error';
  const follow = kind === 'upload'
    ? followTransfer({ client, direction: 'upload', id, get: () => client.uploadSummary(id), isDone, out })
    : followTransfer({ client, direction: 'download', id, get: () => client.downloadSummary(id), isDone, out });
  let timer: NodeJS.Timeout | undefined;
  const { record } = await Promise.race([follow, new Promise<never>((_, no) => (timer = setTimeout(() => no(new Error(`${kind} not complete in time`)), WAIT_MS)))]).finally(() => clearTimeout(timer));
  if ((record as { state: string }).state !== 'complete') throw new Error(`${kind} ${id} failed: ${JSON.stringify(record)}`);
}

async function main(): Promise<void> {
  const work = await mkdtemp(join(process.env.BENCH_DIR ?? tmpdir(), 'ferry-bench-limits-'));
  const svc = await startServedService(work);
  const agent = await startAgentProcess(work, svc.url, { 'chunk-size': String(16 * MiB) });
  try {
    await signInAgent(agent.url, svc);
    const teamId = (await call(agent.url, 'POST', '/login', { body: svc.owner })).body.teams[0].id as string;
    const source = join(work, 'big.bin');
    await makeFile(source, SIZE);

    /** One upload and one download of the file; MiB/s of each. */
    const round = async (name: string) => {
      let t = performance.now();
      const up = await call(agent.url, 'POST', '/uploads', { body: { team_id: teamId, paths: [source] } });
      if (up.status !== 201) throw new Error(`POST /uploads: ${up.status} ${JSON.stringify(up.body)}`);
      await waitComplete(agent.url, 'upload', up.body.upload_id);
      const upRate = SIZE / MiB / ((performance.now() - t) / 1000);
      const link = await call(agent.url, 'POST', `/uploads/${up.body.upload_id}/link`, { body: {} });
      const to = join(work, `down-${name}`);
      await mkdir(to);
      t = performance.now();
      const d = await call(agent.url, 'POST', '/downloads', { body: { url: link.body.url, dst_folder: to, create_package_folder: false } });
      if (d.status !== 201) throw new Error(`POST /downloads: ${d.status} ${JSON.stringify(d.body)}`);
      await waitComplete(agent.url, 'download', d.body.download_id);
      const downRate = SIZE / MiB / ((performance.now() - t) / 1000);
      await rm(to, { recursive: true, force: true });
      return { upRate, downRate };
    };

    const free = await round('free');
    // BENCH_LIMITS_FREE_ONLY=1: the unlimited round alone (to compare a build without the buckets).
    if (process.env.BENCH_LIMITS_FREE_ONLY === '1') {
      console.log(`\nno limit, ${SIZE / MiB} MiB each way, load average ${loadavg().map((l) => l.toFixed(2)).join(' ')}: upload ${free.upRate.toFixed(1)} MiB/s, download ${free.downRate.toFixed(1)} MiB/s`);
      return;
    }
    const set = await call(agent.url, 'PATCH', '/settings', { body: { upload_rate_limit: RATE, download_rate_limit: RATE } });
    if (set.status !== 200) throw new Error(`PATCH /settings: ${set.status} ${JSON.stringify(set.body)}`);
    const limited = await round('limited');
    const limit = RATE / MiB;
    const ok = (r: number) => (Math.abs(r / limit - 1) <= 0.1 ? 'PASS' : 'FAIL');
    console.log(`\nbandwidth limits, ${SIZE / MiB} MiB each way, load average ${loadavg().map((l) => l.toFixed(2)).join(' ')}`);
    console.log(`  no limit:           upload ${free.upRate.toFixed(1)} MiB/s, download ${free.downRate.toFixed(1)} MiB/s`);
    console.log(`  limit ${limit} MiB/s:    upload ${limited.upRate.toFixed(1)} MiB/s (ratio ${(limited.upRate / limit).toFixed(3)} ${ok(limited.upRate)}), download ${limited.downRate.toFixed(1)} MiB/s (ratio ${(limited.downRate / limit).toFixed(3)} ${ok(limited.downRate)})`);
  } finally {
    await agent.stop();
    await svc.stop();
    await rm(work, { recursive: true, force: true });
  }
}

main().catch((err) => {
  console.error(err);
  process.exitCode = 1;
});
