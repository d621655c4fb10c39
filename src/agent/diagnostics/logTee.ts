// The agent's log, kept for diagnostics besides wherever its host sends it
// (stdout for `ferry agent`): the last warnings and errors in memory (GET
// /diagnostics), and a rotating file in the config dir (logs/agent.log, then
// agent.1.log and agent.2.log, 5 MiB each), which a support bundle holds. The
// host's logger is teed, not replaced: its stream and level stay as they were.
import fs from 'node:fs';
import path from 'node:path';
import pino, { type Logger } from 'pino';
import type { LoggedProblem } from '../../api/agent/diagnostics.js';

export const RECENT_PROBLEMS = 100;
export const LOG_FILE_BYTES = 5 * 1024 * 1024;
export const LOG_FILES_KEPT = 3;

const LEVEL_NAMES: Record<number, LoggedProblem['level']> = { 40: 'warn', 50: 'error', 60: 'fatal' };
/** Fields every record has, left out of `details`. */
const PLAIN = new Set(['level', 'time', 'pid', 'hostname', 'msg', 'err']);

export interface AgentLogs {
  /** The warnings and errors logged since the agent started, at most RECENT_PROBLEMS, oldest first. */
  recent(): LoggedProblem[];
  /** The log files, newest first (those that exist). */
  files(): string[];
  close(): void;
}

/** The last warnings and errors, as records parsed from the log's lines. */
class ProblemRing {
  private readonly items: LoggedProblem[] = [];
  write(line: string): void {
    let rec: Record<string, unknown>;
    try {
      rec = JSON.parse(line) as Record<string, unknown>;
    } catch {
      return;
    }
    const err = rec.err as { message?: unknown } | string | undefined;
    const rest = Object.fromEntries(Object.entries(rec).filter(([k]) => !PLAIN.has(k)));
    const details = Object.keys(rest).length ? JSON.stringify(rest).slice(0, 2000) : null;
    this.items.push({
      time: new Date(typeof rec.time === 'number' ? rec.time : Date.now()).toISOString(),
      level: LEVEL_NAMES[rec.level as number] ?? 'error',
      message: typeof rec.msg === 'string' ? rec.msg : '',
      error: typeof err === 'string' ? err : typeof err?.message === 'string' ? err.message : null,
      details,
    });
    if (this.items.length > RECENT_PROBLEMS) this.items.splice(0, this.items.length - RECENT_PROBLEMS);
  }
  list(): LoggedProblem[] {
    return this.items.map((p) => ({ ...p }));
  }
}

/**
 * Appends lines to `dir/agent.log`, moving it to agent.1.log (and that to
 * agent.2.log) once it passes LOG_FILE_BYTES. Written synchronously: the agent
 * logs per transfer and per outage, not per part, and a line written is a line
 * a bundle made right after holds. A file that cannot be written is given up.
 */
class RotatingFile {
  private fd: number | undefined;
  private size = 0;
  constructor(private readonly dir: string) {
    try {
      fs.mkdirSync(dir, { recursive: true });
      this.open();
    } catch {
      this.fd = undefined;
    }
  }
  name(i: number): string {
    return path.join(this.dir, i === 0 ? 'agent.log' : `agent.${i}.log`);
  }
  private open(): void {
    this.fd = fs.openSync(this.name(0), 'a', 0o600);
    this.size = fs.fstatSync(this.fd).size;
  }
  write(line: string): void {
    if (this.fd === undefined) return;
    try {
      if (this.size > 0 && this.size + Buffer.byteLength(line) > LOG_FILE_BYTES) this.rotate();
      this.size += fs.writeSync(this.fd, line);
    } catch {
      this.close();
    }
  }
  private rotate(): void {
    fs.closeSync(this.fd!);
    this.fd = undefined;
    for (let i = LOG_FILES_KEPT - 1; i > 0; i--) {
      if (fs.existsSync(this.name(i - 1))) fs.renameSync(this.name(i - 1), this.name(i));
    }
    this.open();
  }
  close(): void {
    if (this.fd !== undefined) fs.closeSync(this.fd);
    this.fd = undefined;
  }
}

const levelValue = (l: string) => pino.levels.values[l] ?? Infinity;

/**
 * A logger that writes to `given`'s stream at `given`'s level, and to the
 * problem ring (warn and above) and the file in `logDir` (info and above, or
 * `given`'s level when lower).
 */
export function teeAgentLog(given: Logger, logDir: string): { log: Logger; logs: AgentLogs } {
  const ring = new ProblemRing();
  const file = new RotatingFile(logDir);
  let closed = false;
  const fileLevel = levelValue(given.level) < levelValue('info') ? given.level : 'info';
  const streams: pino.StreamEntry[] = [
    { level: 'warn', stream: { write: (l: string) => ring.write(l) } },
    { level: fileLevel as pino.Level, stream: { write: (l: string) => (closed ? undefined : file.write(l)) } },
  ];
  const own = (given as unknown as Record<symbol, pino.DestinationStream | undefined>)[pino.symbols.streamSym];
  if (own && given.level !== 'silent') streams.push({ level: given.level as pino.Level, stream: own });
  const min = streams.reduce((a, s) => (levelValue(s.level as string) < levelValue(a) ? (s.level as string) : a), 'warn');
  const log = pino({ level: min }, pino.multistream(streams)).child(given.bindings());
  return {
    log,
    logs: {
      recent: () => ring.list(),
      files: () => Array.from({ length: LOG_FILES_KEPT }, (_, i) => file.name(i)).filter((f) => fs.existsSync(f)),
      close() {
        closed = true;
        file.close();
      },
    },
  };
}
