// The agent against the limits it should reach, all on 127.0.0.1: (1) the raw
// loopback server (discards PUTs, streams zeros) driven by a plain client with
// 8 in flight and 16 MiB requests; (2) a big file up and down through the agent;
// (3) rclone, tuned alike, against the same store; (4) many small files, agent
// vs rclone, each with 16 requests in flight (an agent of its own runs them with
// --concurrency 16) after one untimed pass of each (the agent is a daemon: its
// code is compiled by then); the first pass, and the first agent's figure at its
// default 8, are printed too; (5) the peak RSS of the agent uploading
// BENCH_RSS_GB GiB with 100 MiB chunks. Each round also measures the disk's limit
// (lib/diskLimit.ts), which bounds an upload the store keeps. `ferry serve` and
// `ferry agent` run as their own processes, as users run them, and the CPU each
// spends is read from /proc: on a 2-core machine the sum of both is what bounds
// the figures. (1)-(4) run BENCH_ROUNDS times (default 2), interleaved, keeping
// each figure's best. Prints tables with
// PASS/FAIL per target, writes .bench-results/agent.json, and exits 0 either way.
// Run: npx tsx test/bench/agent.bench.ts  (env BENCH_SIZE_MB, BENCH_SMALL_FILES, BENCH_RSS_GB, BENCH_ROUNDS, BENCH_DIR)

import { createHash, randomFillSync } from 'node:crypto';
import { createReadStream } from 'node:fs';
import { mkdir, mkdtemp, open, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { cpus, tmpdir } from 'node:os';
import { join } from 'node:path';
import { call } from '../helpers/hosted.js';
import { signInAgent } from '../helpers/agent.js';
import { AgentClient } from '../../src/cli/agentClient.js';
import { followTransfer } from '../../src/cli/transfers/follow.js';
import { Md5Batch, md5Lanes } from '../../src/hash/md5Lanes.js';
import { fmt as f, mbps, MiB, settleDisk } from './lib/loopback.js';
import { measureDisk } from './lib/diskLimit.js';
import { measureRaw } from './lib/rawLimit.js';
import { rclone } from './lib/rclone.js';
import { startAgentProcess, startServedService, type Program, type ServedService } from './lib/processes.js';

const PART = 16 * MiB;
const CONCURRENCY = 8;
/** rclone's --transfers for the small files, and the --concurrency of the agent that sends them alike. */
const SMALL_CONCURRENCY = 16;
const RSS_CHUNK = 100 * MiB;
/** Upper bound on any one wait, so a stuck transfer ends the run instead of hanging it. */
const WAIT_MS = 30 * 60_000;

type Row = 'raw' | 'agent' | 'rclone';
interface Figures { uploadMBps?: number; downloadMBps?: number; smallFilesPerSec?: number }
/** CPU seconds each process spent on one phase. */
interface PhaseCpu { agent?: number; service?: number }
type CpuPhase = 'agentUpload' | 'agentDownload' | 'rcloneUpload' | 'rcloneDownload' | 'agentSmall' | 'rcloneSmall' | 'rawUpload' | 'rawDownload';

const best = (a?: number, b?: number): number | undefined => (a === undefined ? b : b === undefined ? a : Math.max(a, b));
const least = (a?: number, b?: number): number | undefined => (a === undefined ? b : b === undefined ? a : Math.min(a, b));
const sleep = (ms: number): Promise<void> => new Promise((ok) => setTimeout(ok, ms));

async function sha256File(path: string): Promise<string> {
  const h = createHash('sha256');
  for await (const chunk of createReadStream(path, { highWaterMark: 4 * MiB })) h.update(chunk as Buffer);
  return h.digest('hex');
}

/** Writes `size` bytes: a random 64 MiB block, repeated (fast, and nothing compresses or dedups it by accident). */
async function makeFile(path: string, size: number): Promise<void> {
  const block = randomFillSync(Buffer.alloc(Math.min(64 * MiB, Math.max(size, 1))));
  const fh = await open(path, 'w');
  try {
    for (let done = 0; done < size; done += block.length) await fh.write(block, 0, Math.min(block.length, size - done));
  } finally {
    await fh.close();
  }
}

function printTable(head: string[], rows: string[][]): void {
  const widths = head.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i]!.length)));
  console.log('');
  for (const row of [head, ...rows]) console.log(row.map((c, i) => c.padEnd(widths[i]!)).join('  '));
}

// ---------------------------------------------------------------- 1. raw limit: lib/rawLimit.ts

// ---------------------------------------------------------------- 2. the agent

interface Setup { svc: ServedService; agent: Program; teamId: string; cpu: Partial<Record<CpuPhase, PhaseCpu>> }

/** Runs fn and records the CPU `agent` and the service spent meanwhile. */
async function metered<T>(s: Setup, phase: CpuPhase, fn: () => Promise<T>, agent = s.agent): Promise<T> {
  const [a0, s0] = [await agent.cpu(), await s.svc.cpu()];
  const out = await fn();
  const [a1, s1] = [await agent.cpu(), await s.svc.cpu()];
  const diff = (x?: number, y?: number) => (x === undefined || y === undefined ? undefined : y - x);
  const now = { agent: phase.startsWith('rclone') ? undefined : diff(a0, a1), service: diff(s0, s1) };
  // Each round's own figures: the table keeps the least, and the spread shows how noisy the run was.
  console.log(`    ${phase}: CPU s agent ${f(now.agent, 2)}, service ${f(now.service, 2)}`);
  keepLeast(s.cpu, phase, now);
  return out;
}

/** Over several rounds the lowest figure of each process is kept: contention only adds to it. */
function keepLeast(cpu: Setup['cpu'], phase: CpuPhase, now: PhaseCpu): void {
  const was = cpu[phase];
  cpu[phase] = was ? { agent: least(was.agent, now.agent), service: least(was.service, now.service) } : now;
}

/**
 * Waits for the transfer to end as `ferry upload` and `ferry download` do: it
 * follows GET /events (falling back to polling), so the agent's work is the
 * transfer, not answering a poll of every file's record. Throws on error or after WAIT_MS.
 */
async function waitComplete(url: string, kind: 'uploads' | 'downloads', id: string): Promise<any> {
  const client = new AgentClient(url);
  const quiet = { write: () => true };
  const follow = kind === 'uploads'
    ? followTransfer({ client, direction: 'upload', id, get: () => client.uploadSummary(id), isDone: (r) => r.state === 'complete' || r.state === 'error', out: quiet })
    : followTransfer({ client, direction: 'download', id, get: () => client.downloadSummary(id), isDone: (r) => r.state === 'complete' || r.state === 'error', out: quiet });
  let timer: NodeJS.Timeout | undefined;
  const { record } = await Promise.race([
    follow,
    new Promise<never>((_, no) => (timer = setTimeout(() => no(new Error(`${kind} ${id} not complete within ${WAIT_MS} ms`)), WAIT_MS))),
  ]).finally(() => clearTimeout(timer));
  const r = record as any;
  if (r.state === 'error') throw new Error(`${kind} ${id} failed: ${r.error ?? JSON.stringify(r.items?.find((i: any) => i.error))}`);
  return r;
}

async function agentUpload(agentUrl: string, teamId: string, paths: string[], chunkSize: number): Promise<{ id: string; ms: number }> {
  const t = performance.now();
  const r = await call(agentUrl, 'POST', '/uploads', { body: { team_id: teamId, paths, chunk_size: chunkSize } });
  if (r.status !== 201) throw new Error(`POST /uploads: ${r.status} ${JSON.stringify(r.body)}`);
  await waitComplete(agentUrl, 'uploads', r.body.upload_id);
  return { id: r.body.upload_id, ms: performance.now() - t };
}

async function measureAgent(s: Setup, source: string, size: number, work: string): Promise<Figures & { verified: boolean }> {
  const agent = s.agent;
  settleDisk();
  const up = await metered(s, 'agentUpload', () => agentUpload(agent.url, s.teamId, [source], PART));
  const link = await call(agent.url, 'POST', `/uploads/${up.id}/link`, { body: {} });
  if (link.status !== 201) throw new Error(`POST /uploads/{id}/link: ${link.status} ${JSON.stringify(link.body)}`);
  const to = join(work, 'agent-download');
  await mkdir(to);
  settleDisk();
  const { done, downloadMs } = await metered(s, 'agentDownload', async () => {
    const t = performance.now();
    const d = await call(agent.url, 'POST', '/downloads', { body: { url: link.body.url, dst_folder: to, create_package_folder: false, chunk_size: PART } });
    if (d.status !== 201 && d.status !== 200) throw new Error(`POST /downloads: ${d.status} ${JSON.stringify(d.body)}`);
    return { done: await waitComplete(agent.url, 'downloads', d.body.download_id), downloadMs: performance.now() - t };
  });
  // The summary has no entries: the one file's place comes from the first page of them.
  const page = await new AgentClient(agent.url).downloadFiles(done.download_id, { limit: 10 });
  const local = page.files.find((i) => i.local_path)?.local_path as string;
  const verified = (await sha256File(local)) === (await sha256File(source));
  await rm(to, { recursive: true, force: true });
  return { uploadMBps: mbps(size, up.ms), downloadMBps: mbps(size, downloadMs), verified };
}

// ---------------------------------------------------------------- 3. rclone

async function measureRclone(s: Setup, source: string, size: number, work: string, round: number): Promise<Figures> {
  const svc = s.svc;
  // A fresh key each round: rclone skips a copy whose destination already matches.
  const key = `ferry:ferry/bench/big-${round}`;
  settleDisk();
  const upMs = await metered(s, 'rcloneUpload', () => rclone(svc, WAIT_MS, ['copyto', source, key, '--s3-chunk-size', '16M', '--s3-upload-concurrency', '8', '--s3-upload-cutoff', '16M']));
  const dest = join(work, 'rclone-download.bin');
  settleDisk();
  const downMs = await metered(s, 'rcloneDownload', () => rclone(svc, WAIT_MS, ['copyto', key, dest, '--multi-thread-streams', '8', '--multi-thread-cutoff', '16M']));
  const got = (await stat(dest)).size;
  await rm(dest, { force: true });
  if (got !== size) throw new Error(`rclone download: ${got} bytes, expected ${size}`);
  return { uploadMBps: mbps(size, upMs), downloadMBps: mbps(size, downMs) };
}

// ---------------------------------------------------------------- 4. small files

async function makeSmallFiles(dir: string, count: number): Promise<void> {
  await mkdir(dir, { recursive: true });
  const data = Buffer.alloc(16 * 1024);
  for (let i = 0; i < count; i++) await writeFile(join(dir, `f${String(i).padStart(6, '0')}.bin`), randomFillSync(data));
}

// ---------------------------------------------------------------- 5. peak RSS of an agent child process

function procStatus(pid: number, field: 'VmRSS' | 'VmHWM'): Promise<number | undefined> {
  return readFile(`/proc/${pid}/status`, 'utf8').then(
    (s) => {
      const m = new RegExp(`^${field}:\\s+(\\d+) kB`, 'm').exec(s);
      return m ? Number(m[1]) * 1024 : undefined;
    },
    () => undefined,
  );
}

async function measureRss(svc: ServedService, teamId: string, work: string, gib: number): Promise<{ peakMB: number; uploadMBps: number }> {
  const file = join(work, 'rss.bin');
  const size = gib * 1024 * MiB;
  await makeFile(file, size);
  let agent: Program | undefined;
  try {
    agent = await startAgentProcess(work, svc.url, { 'chunk-size': String(RSS_CHUNK), concurrency: String(CONCURRENCY) });
    const { url, pid } = agent;
    await signInAgent(url, svc);
    let peak = 0;
    let sampling = true;
    const sampler = (async () => {
      while (sampling) {
        peak = Math.max(peak, (await procStatus(pid, 'VmRSS')) ?? 0);
        await sleep(200);
      }
    })();
    settleDisk();
    try {
      const up = await agentUpload(url, teamId, [file], RSS_CHUNK);
      peak = Math.max(peak, (await procStatus(pid, 'VmHWM')) ?? 0);
      return { peakMB: peak / MiB, uploadMBps: mbps(size, up.ms) };
    } finally {
      sampling = false;
      await sampler;
    }
  } finally {
    await agent?.stop();
    await rm(file, { force: true });
  }
}

/** MiB/s per core of MD5: one stream (node:crypto), and CONCURRENCY streams in lanes as parts in flight are hashed. */
function md5Speed(): { one: number; parts: number | undefined } {
  const block = randomFillSync(Buffer.alloc(4 * MiB));
  const h = createHash('md5');
  let t = performance.now();
  for (let i = 0; i < 64; i++) h.update(block);
  h.digest();
  const one = mbps(64 * block.length, performance.now() - t);
  if (md5Lanes() === 0) return { one, parts: undefined };
  const batch = new Md5Batch();
  const streams = Array.from({ length: CONCURRENCY }, () => batch.hasher(2));
  // 1 GiB: the lanes go faster, and a short run would mostly time their first steps.
  t = performance.now();
  for (let i = 0; i < 256; i++) streams[i % CONCURRENCY]!.update(block);
  for (const s of streams) s.digest();
  return { one, parts: mbps(256 * block.length, performance.now() - t) };
}

// ---------------------------------------------------------------- main

async function main(): Promise<void> {
  const sizeMiB = Number(process.env.BENCH_SIZE_MB ?? 1024);
  const smallCount = Number(process.env.BENCH_SMALL_FILES ?? 2000);
  const rssGiB = Number(process.env.BENCH_RSS_GB ?? 4);
  const rounds = Math.max(1, Number(process.env.BENCH_ROUNDS ?? 2));
  const size = sizeMiB * MiB;
  const work = await mkdtemp(join(process.env.BENCH_DIR ?? tmpdir(), 'ferry-agent-bench-'));
  const rows: Record<Row, Figures> = { raw: {}, agent: {}, rclone: {} };
  const errors: string[] = [];
  let verified: boolean | undefined;
  let rss: { peakMB: number; uploadMBps: number } | undefined;
  let svc: ServedService | undefined;
  let agent: Program | undefined;
  let smallAgent: Program | undefined;
  /** The first agent's best small-files round, at --concurrency CONCURRENCY: shown, not a target. */
  let smallAtDefault: number | undefined;
  /** Each side's first, untimed pass of the small files. */
  const firstPass: { agent?: number; rclone?: number } = {};
  let diskMBps: number | undefined;
  const cpu: Setup['cpu'] = {};
  /** Runs one phase; a failure is reported and the remaining phases still run. */
  const phase = async (name: string, fn: () => Promise<void>): Promise<void> => {
    const t = performance.now();
    try {
      await fn();
      console.log(`  ${name}: done in ${((performance.now() - t) / 1000).toFixed(1)} s`);
    } catch (err) {
      errors.push(`${name}: ${(err as Error).message}`);
      console.log(`  ${name}: FAILED ${(err as Error).message}`);
    }
  };
  const md5MBps = md5Speed();
  console.log(`file ${sizeMiB} MiB, ${PART / MiB} MiB parts, ${CONCURRENCY} in flight; ${smallCount} x 16 KiB files, ${SMALL_CONCURRENCY} in flight; ${rounds} interleaved rounds, best of each kept; RSS run ${rssGiB} GiB with ${RSS_CHUNK / MiB} MiB chunks; ${cpus().length} CPUs, node ${process.version}, dir ${work}`);
  try {
    const source = join(work, 'big.bin');
    await makeFile(source, size);
    const smallDir = join(work, 'small');
    await makeSmallFiles(smallDir, smallCount);
    svc = await startServedService(work);
    agent = await startAgentProcess(work, svc.url, { 'chunk-size': String(PART), concurrency: String(CONCURRENCY) });
    await signInAgent(agent.url, svc);
    smallAgent = await startAgentProcess(work, svc.url, { 'chunk-size': String(PART), concurrency: String(SMALL_CONCURRENCY) });
    await signInAgent(smallAgent.url, svc);
    const teams = await call(agent.url, 'GET', '/teams');
    if (teams.status !== 200 || !teams.body[0]) throw new Error(`agent GET /teams: ${teams.status} ${JSON.stringify(teams.body)}`);
    const s: Setup = { svc, agent, teamId: teams.body[0].id as string, cpu };
    const filesPerSec = (ms: number): number => smallCount / (ms / 1000);
    const agentSmall = async (url: string): Promise<number> => (await agentUpload(url, s.teamId, [smallDir], PART)).ms;
    // A fresh destination each time, as for the big file.
    const rcloneSmall = (dest: string): Promise<number> => rclone(s.svc, WAIT_MS, ['copy', smallDir, `ferry:ferry/${dest}`, '--transfers', String(SMALL_CONCURRENCY)]);

    await phase('small files, first pass (untimed)', async () => {
      settleDisk();
      firstPass.agent = filesPerSec(await agentSmall(smallAgent!.url));
      settleDisk();
      firstPass.rclone = filesPerSec(await rcloneSmall('small-first'));
      console.log(`    agent ${f(firstPass.agent)} files/s, rclone ${f(firstPass.rclone)} files/s`);
    });

    // Rounds interleave every target, and each keeps its best: interference on a shared
    // machine only ever slows a run down (as the store benchmark does).
    for (let round = 1; round <= rounds; round++) {
      const got: Record<Row, Figures> = { raw: {}, agent: {}, rclone: {} };
      await phase(`round ${round} raw`, async () => {
        const r = await measureRaw(source, size, work, PART, CONCURRENCY);
        got.raw = { uploadMBps: r.uploadMBps, downloadMBps: r.downloadMBps };
        // The raw client is this process, in the agent's column; its server in the service's.
        keepLeast(cpu, 'rawUpload', { agent: r.uploadCpu.client, service: r.uploadCpu.server });
        keepLeast(cpu, 'rawDownload', { agent: r.downloadCpu.client, service: r.downloadCpu.server });
      });
      await phase(`round ${round} disk`, async () => {
        settleDisk();
        const d = await measureDisk(work, sizeMiB, CONCURRENCY);
        console.log(`    ${f(d)} MiB/s`);
        diskMBps = best(diskMBps, d);
      });
      await phase(`round ${round} agent big file`, async () => {
        const r = await measureAgent(s, source, size, work);
        got.agent = { uploadMBps: r.uploadMBps, downloadMBps: r.downloadMBps };
        verified = (verified ?? true) && r.verified;
      });
      await phase(`round ${round} rclone big file`, async () => void (got.rclone = await measureRclone(s, source, size, work, round)));
      await phase(`round ${round} agent small files`, async () => {
        settleDisk();
        got.agent.smallFilesPerSec = filesPerSec(await metered(s, 'agentSmall', () => agentSmall(smallAgent!.url), smallAgent));
      });
      await phase(`round ${round} rclone small files`, async () => {
        settleDisk();
        got.rclone.smallFilesPerSec = filesPerSec(await metered(s, 'rcloneSmall', () => rcloneSmall(`small-${round}`)));
      });
      await phase(`round ${round} agent small files at --concurrency ${CONCURRENCY}`, async () => {
        settleDisk();
        const perSec = filesPerSec(await agentSmall(s.agent.url));
        console.log(`    ${f(perSec)} files/s`);
        smallAtDefault = best(smallAtDefault, perSec);
      });
      for (const row of ['raw', 'agent', 'rclone'] as const) {
        const g = got[row];
        console.log(`    ${row.padEnd(6)} up ${f(g.uploadMBps)} MiB/s, down ${f(g.downloadMBps)} MiB/s, small ${f(g.smallFilesPerSec)} files/s`);
        rows[row] = { uploadMBps: best(rows[row].uploadMBps, g.uploadMBps), downloadMBps: best(rows[row].downloadMBps, g.downloadMBps), smallFilesPerSec: best(rows[row].smallFilesPerSec, g.smallFilesPerSec) };
      }
    }
    await rm(source, { force: true });
    await rm(smallDir, { recursive: true, force: true });
    await phase(`agent RSS (${rssGiB} GiB, its own agent)`, async () => void (rss = await measureRss(s.svc, s.teamId, work, rssGiB)));
  } finally {
    await smallAgent?.stop();
    await agent?.stop();
    await svc?.stop();
    await rm(work, { recursive: true, force: true });
  }

  const ratio = (a: number | undefined, b: number | undefined): number | undefined => (a === undefined || b === undefined ? undefined : a / b);
  const table = (['raw', 'agent', 'rclone'] as const).map((name) => {
    const r = rows[name];
    return [
      name, f(r.uploadMBps), f(r.downloadMBps), f(r.smallFilesPerSec),
      `${f(ratio(r.uploadMBps, rows.rclone.uploadMBps), 2)} / ${f(ratio(r.downloadMBps, rows.rclone.downloadMBps), 2)} / ${f(ratio(r.smallFilesPerSec, rows.rclone.smallFilesPerSec), 2)}`,
      `${f(ratio(r.uploadMBps, rows.raw.uploadMBps), 2)} / ${f(ratio(r.downloadMBps, rows.raw.downloadMBps), 2)}`,
    ];
  });
  printTable(['target', 'upload MiB/s', 'download MiB/s', 'small files/s', 'x rclone (up/down/small)', 'x raw (up/down)'], table);
  console.log(`disk: ${f(diskMBps)} MiB/s of direct 1 MiB writes from ${CONCURRENCY} writers; an upload the store keeps reaches at most the lesser of raw and disk: agent upload ${f(ratio(rows.agent.uploadMBps, diskMBps), 2)}x disk`);
  console.log(`small files: agent and rclone with ${SMALL_CONCURRENCY} in flight, after one untimed pass each (agent ${f(firstPass.agent)}, rclone ${f(firstPass.rclone)} files/s: ${f(ratio(firstPass.agent, firstPass.rclone), 2)}x); the agent at --concurrency ${CONCURRENCY} (its default): ${f(smallAtDefault)} files/s, ${f(ratio(smallAtDefault, rows.rclone.smallFilesPerSec), 2)}x rclone`);
  // Where the time goes: CPU per GiB (per file for small files) of each process.
  const gib = size / (1024 * MiB);
  const per = (c: PhaseCpu | undefined, k: keyof PhaseCpu, unit: number, d: number) => f(c?.[k] === undefined ? undefined : c[k]! / unit, d);
  printTable(['CPU spent', 'agent (raw: client)', 'service + store (raw: server)'], [
    ['raw upload, s/GiB', per(cpu.rawUpload, 'agent', gib, 2), per(cpu.rawUpload, 'service', gib, 2)],
    ['raw download, s/GiB', per(cpu.rawDownload, 'agent', gib, 2), per(cpu.rawDownload, 'service', gib, 2)],
    ['agent upload, s/GiB', per(cpu.agentUpload, 'agent', gib, 2), per(cpu.agentUpload, 'service', gib, 2)],
    ['agent download, s/GiB', per(cpu.agentDownload, 'agent', gib, 2), per(cpu.agentDownload, 'service', gib, 2)],
    ['rclone upload, s/GiB', '-', per(cpu.rcloneUpload, 'service', gib, 2)],
    ['rclone download, s/GiB', '-', per(cpu.rcloneDownload, 'service', gib, 2)],
    ['agent small files, ms/file', per(cpu.agentSmall, 'agent', smallCount / 1000, 1), per(cpu.agentSmall, 'service', smallCount / 1000, 1)],
    ['rclone small files, ms/file', '-', per(cpu.rcloneSmall, 'service', smallCount / 1000, 1)],
  ]);
  // An upload hashes every byte twice: the agent checks each part, the store makes its ETag.
  const lanes = md5MBps.parts === undefined ? 'no SIMD lanes' : `${f(md5MBps.parts)} MiB/s, ${f(1024 / md5MBps.parts, 2)} CPU-s/GiB for ${CONCURRENCY} parts at once in SIMD lanes`;
  // Two cores carry at most 2 / (CPU-s per GiB) GiB/s: where both are bound by CPU, this is the ratio to raw within reach.
  const total = (c: PhaseCpu | undefined) => (c?.agent === undefined || c.service === undefined ? undefined : c.agent + c.service);
  const [ours, theirs] = [total(cpu.agentUpload), total(cpu.rawUpload)];
  console.log(`upload CPU per GiB: agent + service ${f(ratio(ours, gib), 2)}, raw client + server ${f(ratio(theirs, gib), 2)}: bound by CPU, the upload reaches at most ${f(ratio(theirs, ours), 2)}x raw`);
  console.log(`MD5 per core: one stream ${f(md5MBps.one)} MiB/s, ${f(1024 / md5MBps.one, 2)} CPU-s/GiB; ${lanes}`);
  console.log(`peak agent RSS: ${f(rss?.peakMB)} MiB while uploading ${rssGiB} GiB with ${RSS_CHUNK / MiB} MiB chunks (${f(rss?.uploadMBps)} MiB/s); agent download SHA-256 ${verified === undefined ? '-' : verified ? 'ok' : 'MISMATCH'}`);

  const ag = rows.agent, rc = rows.rclone, raw = rows.raw;
  const check = (name: string, value: number | undefined, min: number): { name: string; value: number | null; pass: boolean } =>
    ({ name, value: value ?? null, pass: value !== undefined && value >= min });
  const checks = [
    check('agent upload >= 1.0x rclone', ratio(ag.uploadMBps, rc.uploadMBps), 1),
    check('agent download >= 1.0x rclone', ratio(ag.downloadMBps, rc.downloadMBps), 1),
    check('agent upload >= 0.5x raw', ratio(ag.uploadMBps, raw.uploadMBps), 0.5),
    check('agent download >= 0.5x raw', ratio(ag.downloadMBps, raw.downloadMBps), 0.5),
    check('agent small files >= 0.5x rclone', ratio(ag.smallFilesPerSec, rc.smallFilesPerSec), 0.5),
    { name: `peak agent RSS < 200 MB (${rssGiB} GiB, ${RSS_CHUNK / MiB} MiB chunks)`, value: rss?.peakMB ?? null, pass: rss !== undefined && rss.peakMB * MiB < 200e6 },
    { name: 'agent download byte-identical (SHA-256)', value: verified === undefined ? null : Number(verified), pass: verified === true },
  ];
  for (const c of checks) console.log(`${c.pass ? 'PASS' : 'FAIL'}  ${c.name} (${c.value === null ? 'not measured' : c.value.toFixed(3)})`);
  for (const e of errors) console.log(`error: ${e}`);

  await mkdir('.bench-results', { recursive: true });
  await writeFile(join('.bench-results', 'agent.json'), JSON.stringify({
    date: new Date().toISOString(), node: process.version, cpus: cpus().length,
    sizeMiB, partMiB: PART / MiB, concurrency: CONCURRENCY, smallFiles: smallCount, smallFileKiB: 16, smallConcurrency: SMALL_CONCURRENCY, smallAtDefault: smallAtDefault ?? null, smallFirstPass: firstPass, diskMBps: diskMBps ?? null,
    rss: { gib: rssGiB, chunkMiB: RSS_CHUNK / MiB, ...rss },
    rounds, rows, cpuSeconds: cpu, md5MBps, verified: verified ?? null, checks, errors,
  }, null, 2) + '\n');
  console.log('figures written to .bench-results/agent.json');
}

await main();
process.exit(0);
