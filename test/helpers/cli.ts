// Runs the real `ferry` command as a child process, either to completion or as
// a long-running server, as bin/ferry.cjs runs it: built (dist/, see
// scripts/build.mjs) when the bundle is newer than every file under src/, else
// from the TypeScript sources (node --import tsx), so never stale code. The
// bundle starts in about a third of the time tsx takes to compile the command
// (a CLI suite spawns dozens). Either way with libuv's thread pool sized as
// bin/ferry.cjs sizes it (bin/threadPool.cjs).
import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

export const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const MAIN = path.join(repoRoot, 'src/cli/main.ts');
const BUILT = path.join(repoRoot, 'dist/ferry.mjs');
const THREAD_POOL = path.join(repoRoot, 'bin/threadPool.cjs');

export interface FerryOptions {
  /** true: dist/ferry.mjs (the caller builds it first); false: the sources; absent: the bundle if it is fresh. */
  built?: boolean;
  /** A bundle of the caller's own (scripts/build.mjs's buildCli into another folder), run instead. */
  bundle?: string;
  /** Keep only the last this many lines of stdout (a benchmark's service logs a line per request); all when absent. */
  keepLines?: number;
}

/** Newest modification time of the files under dir, in ms. */
function newest(dir: string): number {
  let t = 0;
  for (const e of fs.readdirSync(dir, { withFileTypes: true })) {
    const p = path.join(dir, e.name);
    t = Math.max(t, e.isDirectory() ? newest(p) : fs.statSync(p).mtimeMs);
  }
  return t;
}

/** Whether dist/ferry.mjs is at least as new as every source (bin/ferry.cjs's test); checked at each spawn, as sources may change between runs of a watch. */
export function bundleIsFresh(): boolean {
  try {
    return fs.statSync(BUILT).mtimeMs >= newest(path.join(repoRoot, 'src'));
  } catch {
    return false;
  }
}

export interface Ran { code: number | null; stdout: string; stderr: string }

function spawnFerry(args: string[], env: Record<string, string | undefined>, opts: FerryOptions = {}): ChildProcessWithoutNullStreams {
  const entry = opts.bundle ? [opts.bundle] : (opts.built ?? bundleIsFresh()) ? [BUILT] : ['--import', 'tsx', MAIN];
  return spawn(process.execPath, ['--require', THREAD_POOL, ...entry, ...args], {
    cwd: repoRoot,
    env: { ...process.env, NODE_NO_WARNINGS: '1', ...env },
  });
}

/** Runs `ferry ...args` to its end. */
export function ferry(args: string[], env: Record<string, string | undefined> = {}): Promise<Ran> {
  return new Promise((resolve, reject) => {
    const child = spawnFerry(args, env);
    let stdout = '', stderr = '';
    child.stdout.setEncoding('utf8').on('data', (d: string) => (stdout += d));
    child.stderr.setEncoding('utf8').on('data', (d: string) => (stderr += d));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stdout, stderr }));
  });
}

export interface Running {
  child: ChildProcessWithoutNullStreams;
  /** Every stdout line so far. */
  lines: string[];
  stderr(): string;
  /** Resolves with the first stdout line (past or future) that `match` accepts. */
  waitFor(match: (line: string) => boolean, what: string, ms?: number): Promise<string>;
  /** Sends the signal and resolves with the exit code. */
  stop(signal?: NodeJS.Signals): Promise<number | null>;
  /** Resolves with the exit code once the process ends by itself. */
  done(): Promise<number | null>;
}

/** Starts `ferry ...args` and keeps it running until stop(). */
export function startFerry(args: string[], env: Record<string, string | undefined> = {}, opts: FerryOptions = {}): Running {
  const child = spawnFerry(args, env, opts);
  const lines: string[] = [];
  const waiters: { match: (l: string) => boolean; resolve: (l: string) => void }[] = [];
  let partial = '', err = '';
  const exited = new Promise<number | null>((resolve) => child.on('close', (code) => resolve(code)));
  child.stderr.setEncoding('utf8').on('data', (d: string) => (err += d));
  child.stdout.setEncoding('utf8').on('data', (d: string) => {
    const parts = (partial + d).split('\n');
    partial = parts.pop()!;
    for (const line of parts) {
      lines.push(line);
      for (const w of [...waiters]) if (w.match(line)) { waiters.splice(waiters.indexOf(w), 1); w.resolve(line); }
    }
    if (opts.keepLines !== undefined && lines.length > 2 * opts.keepLines) lines.splice(0, lines.length - opts.keepLines);
  });
  return {
    child,
    lines,
    stderr: () => err,
    waitFor(match, what, ms = 45_000) {
      const seen = lines.find(match);
      if (seen !== undefined) return Promise.resolve(seen);
      return new Promise((resolve, reject) => {
        const timer = setTimeout(() => reject(new Error(`no ${what} from ferry ${args[0]}; stdout:\n${lines.join('\n')}\nstderr:\n${err}`)), ms);
        void exited.then((code) => { clearTimeout(timer); reject(new Error(`ferry ${args[0]} exited (${code}) before ${what}; stderr:\n${err}`)); });
        waiters.push({ match, resolve: (l) => { clearTimeout(timer); resolve(l); } });
      });
    },
    done: () => exited,
    async stop(signal = 'SIGTERM') {
      if (child.exitCode === null && child.signalCode === null) child.kill(signal);
      return exited;
    },
  };
}

/** Parses a pino JSON line; undefined for any other line. */
export function jsonLine(line: string): Record<string, unknown> | undefined {
  if (!line.startsWith('{')) return undefined;
  try {
    return JSON.parse(line) as Record<string, unknown>;
  } catch {
    return undefined;
  }
}
