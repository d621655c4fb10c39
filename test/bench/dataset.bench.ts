// A dataset through the agent against rclone: N small files in K folders (a
// temp dir) go up as ONE upload through the agent's REST API, and the whole
// Package comes back through the agent; rclone copies the same tree to the same
// store and back with the same number in flight. Both trees that come back are
// compared with the source by one digest (lib/datasetTree.ts). `ferry serve`
// and `ferry agent` run built, as their own processes; for each direction it
// prints files/s and the ratio to rclone, CPU ms per file of each process
// (/proc/<pid>/stat), peak RSS (VmHWM), the agent's `/events` bytes/s, and the
// size and time of the list calls at the end. The agent is restarted on its
// config dir before the download, so that the download's peak RSS is its own.
//
// --kill (implied by --million) SIGKILLs the agent half-way through the upload
// and starts it again on the same config dir: the store then runs as its own
// process with its request log on (lib/storePuts.ts), and the PUTs after the
// restart are counted per object: none may go to a file the service had
// finalized before the kill. Never run by npm test: it is a benchmark, and the
// million takes long.
// --window follows each transfer in the app's window (Chromium, the agent's
// --ui) and reads its JS heap and the details' first page of files when done;
// --no-rclone leaves the peer out (the million's targets are the agent's own).
// --rounds N measures each direction N times, each agent run beside rclone's, and
// prints each pair's ratio and their median.
// Run: npm run bench:dataset -- [--files N] [--size B] [--folders K] [--concurrency C] [--rounds N] [--million] [--kill] [--up-only] [--window] [--no-rclone] [--cpu-prof DIR]
// (env BENCH_DATASET_FILES, BENCH_DATASET_SIZE, BENCH_DATASET_FOLDERS, BENCH_DATASET_CONCURRENCY, BENCH_DATASET_ROUNDS, BENCH_DIR)

import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { cpus, tmpdir } from 'node:os';
import { basename, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import SQLite from 'better-sqlite3';
import { call } from '../helpers/hosted.js';
import { signInAgent } from '../helpers/agent.js';
import { peakRss } from './lib/agentMeters.js';
import { followAgent, listCalls, waitFor, waitShare, type Follower, type Kind, type ListCall } from './lib/agentTransfers.js';
import { digestTree, makeDataset } from './lib/datasetTree.js';
import { fmt as f, settleDisk } from './lib/loopback.js';
import { startAgentProcess, startServedService, type Program, type ServedService } from './lib/processes.js';
import { rcloneMeasured, type RcloneTarget } from './lib/rclone.js';
import { startCountedStore, type CountedStore } from './lib/storePuts.js';
import { WindowWatch, type WindowFigures } from './lib/windowWatch.js';

const { values: opt } = parseArgs({
  options: {
    files: { type: 'string' }, size: { type: 'string' }, folders: { type: 'string' }, concurrency: { type: 'string' },
    million: { type: 'boolean' }, kill: { type: 'boolean' }, 'up-only': { type: 'boolean' }, 'cpu-prof': { type: 'string' },
    window: { type: 'boolean' }, 'no-rclone': { type: 'boolean' }, warmup: { type: 'string' }, rounds: { type: 'string' },
  },
});
const num = (flag: string | undefined, env: string | undefined, dflt: number): number => {
  const n = Number(flag ?? env ?? dflt);
  if (!Number.isInteger(n) || n < 1) throw new Error(`not a positive whole number: ${flag ?? env}`);
  return n;
};
const files = num(opt.files, process.env.BENCH_DATASET_FILES, opt.million ? 1_000_000 : 20_000);
const size = num(opt.size, process.env.BENCH_DATASET_SIZE, opt.million ? 1024 : 4096);
const folders = num(opt.folders, process.env.BENCH_DATASET_FOLDERS, opt.million ? 10_000 : Math.ceil(files / 100));
const concurrency = num(opt.concurrency, process.env.BENCH_DATASET_CONCURRENCY, 16);
const kill = Boolean(opt.kill || opt.million);
/**
 * Times each direction is measured, the agent's run and rclone's one after the
 * other each time: on a shared host a run's pace swings by a third from minute to
 * minute, so the ratio of a pair measured together, and the median of the
 * rounds, say more than one run of each.
 */
const rounds = num(opt.rounds, process.env.BENCH_DATASET_ROUNDS, 1);
/** The upload half alone (both peers): the agent's and the service's memory and pace on the way up. */
const upOnly = Boolean(opt['up-only']);
const withRclone = !opt['no-rclone'];
/**
 * Files sent once, untimed, through the agent (and rclone) before the timed runs:
 * the agent's and the service's JavaScript is optimized by V8 as it runs, while
 * rclone is compiled ahead of time (as `npm run bench` gives each side a first pass).
 */
const warmupFiles = Number(opt.warmup ?? process.env.BENCH_DATASET_WARMUP ?? Math.min(2000, files));
if (!Number.isInteger(warmupFiles) || warmupFiles < 0) throw new Error(`--warmup: not a whole number: ${opt.warmup}`);
/** The agent's flags: with --window it serves the app's UI too. */
const agentFlags: Record<string, string | true> = { concurrency: String(concurrency), ...(opt.window ? { ui: true as const } : {}) };
/** Upper bound on any one wait: a stuck transfer ends the run instead of hanging it. */
const WAIT_MS = Math.max(30 * 60_000, files * 20);

interface Procs { agent: Program & { configDir: string }; svc: ServedService; store?: CountedStore }
interface Cpu { agent?: number; service?: number }
interface Run { name: string; round: number; ms: number; cpu: Cpu; eventBytes?: number; identical: boolean; lists?: ListCall[]; window?: WindowFigures }
/**
 * What a direction's work answers; `done` is called when the transfer is complete,
 * so that the checks after it are not timed. `clientCpuS`: rclone's own CPU (the
 * agent's is read from its process).
 */
type Direction = (done: () => Promise<void>) => Promise<{ identical: boolean; lists?: ListCall[]; window?: WindowFigures; clientCpuS?: number }>;

const sum = (a?: number, b?: number): number | undefined => (a === undefined ? undefined : a + (b ?? 0));
/** CPU seconds of agent processes that were SIGKILLed: a run's figure counts the killed agent's work too. */
let agentCpuGone = 0;
/** CPU seconds so far of the agent, and of the service with its store where that is a process of its own. */
async function cpuNow(p: Procs): Promise<Cpu> {
  return { agent: sum(await p.agent.cpu(), agentCpuGone), service: sum(await p.svc.cpu(), await p.store?.cpu()) };
}
const cpuSince = (a: Cpu, b: Cpu): Cpu => ({
  agent: a.agent === undefined || b.agent === undefined ? undefined : b.agent - a.agent,
  service: a.service === undefined || b.service === undefined ? undefined : b.service - a.service,
});

/** The object keys of the files the service had finalized in the Package (read from its database, which WAL lets us read while it runs). */
function finalizedKeys(svc: ServedService, packageId: string): Set<string> {
  const db = new SQLite(join(svc.dataDir, 'ferry.db'), { readonly: true });
  try {
    const rows = db.prepare("SELECT object_key FROM files WHERE package_id = ? AND state = 'finalized' AND object_key IS NOT NULL").all(packageId) as { object_key: string }[];
    return new Set(rows.map((r) => r.object_key));
  } finally {
    db.close();
  }
}

interface KillCheck { finalizedAtKill: number; putsAfter: number; resent: number; restartMs: number; rssBeforeKill?: number; completed: boolean }

/**
 * SIGKILLs the agent once half the bytes are up and starts it again on its
 * config dir; answers the object keys the service had finalized by then, which
 * the store must not get again.
 */
async function killHalfWay(p: Procs, work: string, follow: Follower, uploadId: string, packageId: string): Promise<{ done: Set<string>; check: KillCheck }> {
  await waitShare(follow, uploadId, 0.5, WAIT_MS);
  const rssBeforeKill = await peakRss(p.agent.pid);
  agentCpuGone += (await p.agent.cpu()) ?? 0;
  p.agent.kill('SIGKILL');
  await p.agent.stop();
  const done = finalizedKeys(p.svc, packageId);
  p.store!.mark();
  console.log(`    SIGKILL at ${f((follow.done.get(uploadId) ?? 0) * 100)}% of the bytes; ${done.size} files finalized on the service`);
  const t = performance.now();
  p.agent = await startAgentProcess(work, p.svc.url, agentFlags, p.agent.configDir);
  return { done, check: { finalizedAtKill: done.size, putsAfter: 0, resent: 0, restartMs: performance.now() - t, rssBeforeKill, completed: false } };
}

/** Starts an upload of the folder `dir` through the agent; answers its summary. */
async function uploadOf(agentUrl: string, teamId: string, dir: string): Promise<{ upload_id: string; package_id: string }> {
  const r = await call(agentUrl, 'POST', '/uploads?files=false', { body: { team_id: teamId, paths: [dir] } });
  if (r.status !== 201) throw new Error(`POST /uploads: ${r.status} ${JSON.stringify(r.body)}`);
  return r.body;
}

/** A Link to the agent's upload, downloaded through the agent into `to` (made); answers the download's id once complete. */
async function downloadThrough(agentUrl: string, follow: Follower, uploadId: string, to: string): Promise<string> {
  const link = await call(agentUrl, 'POST', `/uploads/${uploadId}/link`, { body: {} });
  if (link.status !== 201) throw new Error(`POST /uploads/{id}/link: ${link.status} ${JSON.stringify(link.body)}`);
  await mkdir(to);
  const d = await call(agentUrl, 'POST', '/downloads', { body: { url: link.body.url, dst_folder: to, create_package_folder: false } });
  if (d.status !== 201 && d.status !== 200) throw new Error(`POST /downloads: ${d.status} ${JSON.stringify(d.body)}`);
  await waitFor(agentUrl, follow, 'downloads', d.body.download_id, ['complete'], WAIT_MS);
  return d.body.download_id as string;
}

async function main(): Promise<void> {
  const work = await mkdtemp(join(process.env.BENCH_DIR ?? tmpdir(), 'ferry-dataset-bench-'));
  if (opt['cpu-prof']) {
    // Each process writes its profile when it exits (SIGTERM ends them cleanly); node refuses --cpu-prof in NODE_OPTIONS.
    const dir = resolve(opt['cpu-prof']);
    await mkdir(dir, { recursive: true });
    process.env.FERRY_CPU_PROF_DIR = dir;
    process.env.NODE_OPTIONS = `${process.env.NODE_OPTIONS ?? ''} --require ${fileURLToPath(new URL('./lib/cpuProfile.cjs', import.meta.url))}`.trim();
  }
  console.log(`${files} files of ${size} B in ${folders} folders, ${concurrency} in flight${kill ? ', agent SIGKILLed half-way through the upload' : ''}; ${cpus().length} CPUs (${cpus()[0]?.model}), node ${process.version}, dir ${work}`);
  const runs: Run[] = [];
  const errors: string[] = [];
  const rss: Record<string, number | undefined> = {};
  let killed: KillCheck | undefined;
  let finalizedAtKill = new Set<string>();
  /** /events bytes of agent processes that are gone. */
  let carried = 0;
  let p: Procs | undefined;
  let follow: Follower | undefined;
  let watch: WindowWatch | undefined;
  const src = join(work, 'dataset');
  try {
    let t = performance.now();
    await makeDataset(src, { files, size, folders });
    const source = await digestTree(src);
    console.log(`  made and digested the tree in ${((performance.now() - t) / 1000).toFixed(1)} s`);
    const store = kill ? await startCountedStore(work) : undefined;
    const svc = await startServedService(work, store?.flags ?? []);
    // A config dir of the benchmark's own: a restart after a SIGKILL runs on it again.
    const agent = await startAgentProcess(work, svc.url, agentFlags, await mkdtemp(join(work, 'agent-')));
    p = { agent, svc, store };
    await signInAgent(agent.url, svc);
    const teams = await call(agent.url, 'GET', '/teams');
    if (teams.status !== 200 || !teams.body[0]) throw new Error(`agent GET /teams: ${teams.status} ${JSON.stringify(teams.body)}`);
    const target: RcloneTarget = store ? { s3Url: store.url, creds: { accessKey: store.keys.access, secretKey: store.keys.secret } } : svc;

    /** Runs one timed direction; a failure is reported and the next still runs. */
    const timed = async (name: string, round: number, fn: Direction): Promise<void> => {
      settleDisk();
      const c0 = await cpuNow(p!);
      const events = () => carried + (follow?.meter.bytes() ?? 0);
      const e0 = events();
      const t0 = performance.now();
      let end: { ms: number; cpu: Cpu; eventBytes: number } | undefined;
      const done = async () => {
        end = { ms: performance.now() - t0, cpu: cpuSince(c0, await cpuNow(p!)), eventBytes: events() - e0 };
      };
      try {
        const r = await fn(done);
        if (!end) await done();
        const { clientCpuS, ...rest } = r;
        const cpu = clientCpuS === undefined ? end!.cpu : { ...end!.cpu, agent: clientCpuS };
        const run: Run = { name, round, ms: end!.ms, cpu, eventBytes: name.startsWith('agent') ? end!.eventBytes : undefined, ...rest };
        runs.push(run);
        console.log(`  ${name}${rounds > 1 ? ` (round ${round})` : ''}: ${f(files / (run.ms / 1000))} files/s, ${r.identical ? 'identical' : 'DIFFERENT'}`);
      } catch (err) {
        errors.push(`${name} (round ${round}): ${(err as Error).message}`);
        console.log(`  ${name}: FAILED ${(err as Error).message}`);
      }
    };
    const compare = async (dir: string): Promise<boolean> => {
      const got = await digestTree(dir);
      if (got.digest !== source.digest) console.log(`    ${got.files} files came back of ${source.files}`);
      return got.digest === source.digest;
    };

    let uploadId = '';
    follow = await followAgent(agent.url);
    const warm = join(work, 'warmup');
    let warmUploadId = '';
    if (warmupFiles > 0) {
      await makeDataset(warm, { files: warmupFiles, size, folders: Math.ceil(warmupFiles / 100) });
      warmUploadId = (await uploadOf(agent.url, teams.body[0].id, warm)).upload_id;
      await waitFor(agent.url, follow, 'uploads', warmUploadId, ['complete'], WAIT_MS);
      console.log(`  warm-up: ${warmupFiles} files through the agent, untimed`);
    }
    if (opt.window) watch = await WindowWatch.launch();
    await watch?.open(agent.url);
    const flight = ['--transfers', String(concurrency), '--checkers', String(concurrency)];
    if (withRclone && warmupFiles > 0) await rcloneMeasured(target, WAIT_MS, ['copy', warm, 'ferry:ferry/warmup-rclone', ...flight]);

    // Each agent run is followed at once by rclone's run of the same direction, so
    // that a pair meets the same moment of this shared host; the first round also
    // makes the list calls, follows the window and does the SIGKILL.
    for (let round = 1; round <= rounds; round++) {
      const first = round === 1;
      await timed('agent upload', round, async (done) => {
        const r = await uploadOf(p!.agent.url, teams.body[0].id, src);
        uploadId = r.upload_id;
        if (kill && first) {
          const k = await killHalfWay(p!, work, follow!, uploadId, r.package_id);
          killed = k.check;
          finalizedAtKill = k.done;
          // The old stream ended with its process: its bytes carry over to the restarted agent's.
          carried += follow!.meter.bytes();
          await follow!.meter.stop();
          follow = await followAgent(p!.agent.url);
          await watch?.open(p!.agent.url);
        }
        await waitFor(p!.agent.url, follow!, 'uploads', uploadId, ['complete'], WAIT_MS);
        await done();
        if (!first) return { identical: true };
        // Before the list calls: the spec's whole record of many files costs the agent more than the upload did.
        rss.agentUpload = await peakRss(p!.agent.pid);
        if (killed) killed.completed = true;
        const window = await watch?.measure(`Upload ${basename(src)}`);
        return { identical: true, window, lists: await listCalls(p!.agent.url, 'uploads', uploadId) };
      });
      if (killed && first && p.store) {
        const puts = p.store.puts();
        killed.putsAfter = [...puts.values()].reduce((a, b) => a + b, 0);
        killed.resent = [...puts.keys()].filter((k) => finalizedAtKill.has(k)).length;
      }
      if (withRclone) await timed('rclone upload', round, async () => {
        const { cpuS } = await rcloneMeasured(target, WAIT_MS, ['copy', src, `ferry:ferry/dataset-rclone-${round}`, ...flight]);
        return { identical: true, clientCpuS: cpuS };
      });
      if (upOnly) continue;
      if (first) {
        // The download runs in a fresh agent on the same config dir, so that its peak RSS is its own, not the upload's.
        carried += follow.meter.bytes();
        await follow.meter.stop();
        await p.agent.stop();
        p.agent = await startAgentProcess(work, p.svc.url, agentFlags, p.agent.configDir);
        follow = await followAgent(p.agent.url);
        await watch?.open(p.agent.url);
        // The fresh agent's own first pass: the warm-up Package comes back through it, untimed.
        if (warmUploadId) await downloadThrough(p.agent.url, follow, warmUploadId, join(work, 'warmup-download'));
      }
      await timed('agent download', round, async (done) => {
        const to = join(work, 'agent-download');
        const downloadId = await downloadThrough(p!.agent.url, follow!, uploadId, to);
        await done();
        const extras: Pick<Run, 'lists' | 'window'> = {};
        if (first) {
          // Before the list calls, whose whole record (every file) has a peak of its own.
          rss.agentTransfer = await peakRss(p!.agent.pid);
          extras.window = await watch?.measure(`Download ${basename(src)}`);
          extras.lists = await listCalls(p!.agent.url, 'downloads', downloadId);
        }
        const identical = await compare(join(to, basename(src)));
        await rm(to, { recursive: true, force: true });
        return { identical, ...extras };
      });
      if (first) rss.agent = await peakRss(p.agent.pid);
      if (withRclone) await timed('rclone download', round, async () => {
        const to = join(work, 'rclone-download');
        const { cpuS } = await rcloneMeasured(target, WAIT_MS, ['copy', `ferry:ferry/dataset-rclone-${round}`, to, ...flight]);
        const identical = await compare(to);
        await rm(to, { recursive: true, force: true });
        return { identical, clientCpuS: cpuS };
      });
    }
    rss.service = await peakRss(svc.pid);
    rss.store = store ? await peakRss(store.pid) : undefined;
  } catch (err) {
    errors.push((err as Error).message);
    console.log(`FAILED ${(err as Error).message}`);
  } finally {
    await watch?.close();
    await follow?.meter.stop();
    await p?.agent.stop();
    await p?.svc.stop();
    await p?.store?.stop();
    await rm(p?.agent.configDir ?? join(work, 'none'), { recursive: true, force: true });
    await rm(work, { recursive: true, force: true });
  }
  report(runs, rss, killed, errors);
  await mkdir('.bench-results', { recursive: true });
  await writeFile(join('.bench-results', 'dataset.json'), JSON.stringify({
    date: new Date().toISOString(), node: process.version, cpus: cpus().length, cpu: cpus()[0]?.model,
    files, size, folders, concurrency, rounds, runs, rss, kill: killed ?? null, errors,
  }, null, 2) + '\n');
  console.log('figures written to .bench-results/dataset.json');
}

function report(runs: Run[], rss: Record<string, number | undefined>, killed: KillCheck | undefined, errors: string[]): void {
  const by = (name: string, round: number) => runs.find((r) => r.name === name && r.round === round);
  const perSec = (r?: Run) => (r ? files / (r.ms / 1000) : undefined);
  const ratio = (a?: number, b?: number) => (a === undefined || b === undefined ? undefined : a / b);
  const perFile = (s?: number) => (s === undefined ? undefined : (s * 1000) / files);
  const rows = runs.map((r) => {
    const peer = by(r.name.replace('agent', 'rclone'), r.round);
    const agent = r.name.startsWith('agent');
    return [rounds > 1 ? `${r.name} ${r.round}` : r.name, f(perSec(r)), agent ? f(ratio(perSec(r), perSec(peer)), 2) : '', f(perFile(r.cpu.agent), 2), f(perFile(r.cpu.service), 2), f(perFile(sum(r.cpu.agent, r.cpu.service)), 2),
      r.eventBytes === undefined ? '' : f(r.eventBytes / 1000 / (r.ms / 1000), 1), r.identical ? 'yes' : 'NO'];
  });
  // The client's CPU is the agent's or rclone's own; on a machine whose cores all three share, the total per file bounds the pace.
  const head = ['run', 'files/s', 'x rclone', 'client CPU ms/file', 'service+store CPU ms/file', 'total CPU ms/file', '/events kB/s', 'identical'];
  const widths = head.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i]!.length)));
  console.log('');
  for (const row of [head, ...rows]) console.log(row.map((c, i) => c.padEnd(widths[i]!)).join('  '));
  if (rounds > 1) {
    for (const dir of ['upload', 'download']) {
      const pairs = runs.filter((r) => r.name === `agent ${dir}`).map((r) => ratio(perSec(r), perSec(by(`rclone ${dir}`, r.round))));
      const got = pairs.filter((x): x is number => x !== undefined).sort((a, b) => a - b);
      if (got.length) console.log(`x rclone, ${dir}, by round: ${pairs.map((x) => f(x, 2)).join(', ')}; median ${f(got[(got.length - 1) >> 1]! / 2 + got[got.length >> 1]! / 2, 2)}`);
    }
  }
  const mib = (b?: number) => f(b === undefined ? undefined : b / 2 ** 20);
  console.log(`\npeak RSS MiB: agent ${mib(rss.agentUpload)} during the upload, ${mib(rss.agentTransfer)} during the download (a fresh process; both before the list calls; ${mib(rss.agent)} after them)${killed ? `, the killed agent ${mib(killed.rssBeforeKill)}` : ''}; service ${mib(rss.service)}${rss.store ? `, store ${mib(rss.store)}` : ''}`);
  for (const r of runs) {
    const w = r.window;
    if (!w) continue;
    const heapPass = w.heapMiB < 100;
    const paged = w.caption.endsWith(`of ${files.toLocaleString('en')}`);
    console.log(`window, ${r.name}: JS heap ${f(w.heapMiB, 1)} MiB (< 100: ${heapPass ? 'PASS' : 'FAIL'}); ${w.frames} messages, ${f(w.frameBytes / 1000, 1)} kB, largest ${w.largestFrame} B; details "${w.caption}", "${/Page [\d,]+ of [\d,]+/.exec(w.pager)?.[0] ?? w.pager}" (${paged ? 'PASS' : 'FAIL'})`);
  }
  console.log(`\n  ${'list call'.padEnd(38)} ${'HTTP'.padEnd(4)} ${'size'.padStart(13)} ${'first byte'.padStart(11)} ${'whole'.padStart(11)}`);
  for (const r of runs) for (const l of r.lists ?? []) console.log(`  ${l.call.padEnd(38)} ${String(l.status).padEnd(4)} ${f(l.bytes / 1000, 1).padStart(10)} kB ${f(l.firstMs, 1).padStart(8)} ms ${f(l.ms, 1).padStart(8)} ms`);
  if (killed) {
    const pass = killed.completed && killed.resent === 0;
    console.log(`kill: ${killed.finalizedAtKill} files finalized at the SIGKILL; agent back in ${f(killed.restartMs)} ms; ${killed.putsAfter} PUTs after it (${files - killed.finalizedAtKill} files were left), ${killed.resent} to files already finalized; upload ${killed.completed ? 'complete' : 'NOT complete'}: ${pass ? 'PASS' : 'FAIL'}`);
  }
  for (const e of errors) console.log(`error: ${e}`);
}

await main();
process.exit(0);
