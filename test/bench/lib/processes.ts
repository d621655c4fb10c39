// The programs a benchmark measures, started as users start them: `ferry serve`
// (service and embedded store) and `ferry agent`, each in its own process, so
// that neither shares an event loop with the other or with the benchmark, and
// the CPU each one spends can be read from /proc. They run built (dist/), as
// an installed `ferry` does: `npm run bench` builds first.
import { randomBytes } from 'node:crypto';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { jsonLine, startFerry, type Running } from '../../helpers/cli.js';

export interface Program {
  url: string;
  pid: number;
  /** CPU seconds (user + system, all threads) the process has used so far; undefined where /proc is missing. */
  cpu(): Promise<number | undefined>;
  /** Sends `signal` (a benchmark's own SIGKILL): an exit the benchmark asked for is not reported. */
  kill(signal: NodeJS.Signals): void;
  stop(): Promise<void>;
}

export interface ServedService extends Program {
  s3Url: string;
  dataDir: string;
  owner: { email: string; password: string };
}

const TICKS_PER_SECOND = 100;

/** The stdout lines a benchmark keeps of each program (the last ones, printed if it exits unasked): a line per request would grow without end. */
const KEEP_LINES = 2000;

/** CPU seconds (user + system) process `pid` has spent; undefined where /proc cannot tell. */
export async function cpuOf(pid: number): Promise<number | undefined> {
  try {
    // Fields after the command name (which may hold spaces): utime and stime are the 12th and 13th.
    const stat = await readFile(`/proc/${pid}/stat`, 'utf8');
    const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return (Number(f[11]) + Number(f[12])) / TICKS_PER_SECOND;
  } catch {
    return undefined;
  }
}

async function ready(child: Running, msg: string): Promise<Record<string, unknown>> {
  try {
    return jsonLine(await child.waitFor((l) => jsonLine(l)?.msg === msg, `the line "${msg}"`))!;
  } catch (err) {
    await child.stop();
    throw err;
  }
}

function program(child: Running, url: string, cleanup: () => Promise<void>): Program {
  const pid = child.child.pid!;
  let expected = false;
  // A process that dies under a run says why: its stderr and last lines, not only the run's "fetch failed".
  void child.done().then((code) => {
    if (expected) return;
    console.log(`ferry ${child.child.spawnargs.slice(-20).find((a) => ['serve', 'agent', 'objectstore'].includes(a)) ?? ''} (pid ${pid}) exited unasked, code ${code} (${child.child.signalCode ?? 'no signal'}); last lines:\n${child.lines.slice(-20).join('\n')}\nstderr:\n${child.stderr().slice(-4000)}`);
  });
  return {
    url,
    pid,
    cpu: () => cpuOf(pid),
    kill(signal) {
      expected = true;
      process.kill(pid, signal);
    },
    async stop() {
      expected = true;
      await child.stop();
      await cleanup();
    },
  };
}

/**
 * `ferry serve` with its embedded store on ephemeral ports and a fresh data dir under `work`;
 * `extra` flags are appended (the hosted benchmark's database and limits), and `built: false` runs the sources.
 */
export async function startServedService(work: string, extra: string[] = [], { built = true } = {}, prepare?: (dataDir: string) => Promise<void>): Promise<ServedService> {
  const dataDir = await mkdtemp(join(work, 'service-'));
  await prepare?.(dataDir);
  const owner = { email: 'bench@example.com', password: 'bench password 1' };
  const child = startFerry(['serve', '--listen', '127.0.0.1:0', '--s3-listen', '127.0.0.1:0', '--data-dir', dataDir,
    '--init-owner', `${owner.email}:${owner.password}`, '--log-level', 'info', ...extra], {}, { built, keepLines: KEEP_LINES });
  const line = await ready(child, 'ferry hosted service ready');
  const p = program(child, String(line.url), () => rm(dataDir, { recursive: true, force: true }));
  return { ...p, s3Url: String(line.s3), dataDir, owner };
}

/**
 * `ferry agent` against `hostedUrl`, on an ephemeral port with a fresh config dir under `work`; url ends in /api/v1.
 * With `configDir` it runs on that one (a restart) and leaves it in place when it stops.
 */
export async function startAgentProcess(work: string, hostedUrl: string, flags: Record<string, string | true>, configDir?: string): Promise<Program & { configDir: string }> {
  const keep = configDir !== undefined;
  configDir ??= await mkdtemp(join(work, 'agent-'));
  const args = ['agent', '--listen', '127.0.0.1:0', '--config-dir', configDir, '--hosted-url', hostedUrl, '--log-level', 'info'];
  for (const [k, v] of Object.entries(flags)) args.push(...(v === true ? [`--${k}`] : [`--${k}`, v]));
  const child = startFerry(args, {}, { built: true, keepLines: KEEP_LINES });
  const line = await ready(child, 'ferry agent ready');
  const dir = configDir;
  return { ...program(child, String(line.url), () => (keep ? Promise.resolve() : rm(dir, { recursive: true, force: true }))), configDir: dir };
}

export interface StoreProgram extends Program {
  /** The `ferry serve` flags that use this store as an external one. */
  flags: string[];
}

/** `ferry objectstore` on an ephemeral port with a fresh data dir under `work`: the external store that several instances share. */
export async function startStoreProcess(work: string, { built = true } = {}): Promise<StoreProgram> {
  const dataDir = await mkdtemp(join(work, 'store-'));
  const keys = { access: 'bench', secret: randomBytes(16).toString('hex') };
  const child = startFerry(['objectstore', '--listen', '127.0.0.1:0', '--data-dir', dataDir, '--access-key', keys.access, '--log-level', 'info'], { FERRY_OBJECTSTORE_SECRET_KEY: keys.secret }, { built, keepLines: KEEP_LINES });
  const line = await ready(child, 'ferry object store ready');
  const url = String(line.url);
  const p = program(child, url, () => rm(dataDir, { recursive: true, force: true }));
  return { ...p, flags: ['--s3-endpoint', url, '--s3-access-key', keys.access, '--s3-secret-key', keys.secret] };
}
