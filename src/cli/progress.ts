// The progress of a transfer: on a terminal, one live line with a bar, speed and
// time left; otherwise (a pipe, a log file, CI) a plain line at each state change and
// each tenth of the way, so logs stay short. A transfer that waits for the
// service or the store says so ("waiting for the service (retry in 20 s)")
// instead of showing a frozen speed.
import type { Waiting } from '../api/agent/waiting.js';
import { bytes, speed } from '../format/sizes.js';
import { timeLeft } from '../format/times.js';

export interface ProgressOut {
  write(text: string): unknown;
  isTTY?: boolean;
  columns?: number;
}

export interface ProgressOptions {
  /** What moves, e.g. "upload upl_…". */
  label: string;
  /** A shorter label for the live line, where width is scarce. */
  ttyLabel?: string;
  out?: ProgressOut;
  /** Defaults to out.isTTY. */
  tty?: boolean;
  now?: () => number;
  /** Least time between two redraws of the live line. */
  redrawMs?: number;
}

// Sizes, speeds and times in the one format of src/format, under the names the CLI's commands use.
export { bytes as formatBytes, speed as formatRate } from '../format/sizes.js';
export { duration as formatDuration } from '../format/times.js';

/** Bytes per second over the last few seconds of samples. */
export class RateMeter {
  private samples: { t: number; bytes: number }[] = [];
  constructor(private readonly windowMs = 10_000) {}

  add(t: number, bytes: number): void {
    const last = this.samples[this.samples.length - 1];
    // Fewer bytes than before (a file restarted): the old samples say nothing now.
    if (last && bytes < last.bytes) this.samples = [];
    this.samples.push({ t, bytes });
    while (this.samples.length > 2 && t - this.samples[0]!.t > this.windowMs) this.samples.shift();
  }

  /** undefined until half a second of samples exists. */
  rate(): number | undefined {
    const first = this.samples[0], last = this.samples[this.samples.length - 1];
    if (!first || !last || last.t - first.t < 500) return undefined;
    return ((last.bytes - first.bytes) * 1000) / (last.t - first.t);
  }
}

/** "waiting for the service" or "waiting for the storage". */
const waitingFor = (w: Pick<Waiting, 'reason'>) => `waiting for the ${w.reason.startsWith('service') ? 'service' : 'storage'}`;

/** "waiting for the service (retry in 20 s)", or "(retrying)" once the time has come. */
export function describeWaiting(w: Pick<Waiting, 'reason' | 'next_attempt_at'>, now = Date.now()): string {
  const secs = Math.ceil((Date.parse(w.next_attempt_at) - now) / 1000);
  return `${waitingFor(w)} (${secs > 0 ? `retry in ${secs} s` : 'retrying'})`;
}

export class ProgressBar {
  private readonly out: ProgressOut;
  private readonly tty: boolean;
  private readonly now: () => number;
  private readonly redrawMs: number;
  private readonly meter = new RateMeter();
  private lastDraw = -Infinity;
  private lastState: string | undefined;
  private lastTenth = -1;
  private drawn = false;
  private readonly started: number;
  private waiting: Pick<Waiting, 'reason' | 'next_attempt_at'> | undefined;

  constructor(private readonly opts: ProgressOptions) {
    this.out = opts.out ?? process.stderr;
    this.tty = opts.tty ?? this.out.isTTY === true;
    this.now = opts.now ?? Date.now;
    this.redrawMs = opts.redrawMs ?? 100;
    this.started = this.now();
  }

  /** The current numbers; draws when something worth showing changed (a wait that begins or ends counts as a change of state). */
  update(done: number, total: number, state: string, waiting?: Pick<Waiting, 'reason' | 'next_attempt_at'>): void {
    const t = this.now();
    this.meter.add(t, done);
    const shown = waiting && state === 'transferring' ? `${state} ${waitingFor(waiting)}` : state;
    const stateChanged = shown !== this.lastState;
    this.lastState = shown;
    this.waiting = shown === state ? undefined : waiting;
    if (this.tty) {
      if (!stateChanged && t - this.lastDraw < this.redrawMs) return;
      this.lastDraw = t;
      const width = Math.max(20, (this.out.columns || 80) - 1);
      this.out.write(`\r${this.line(done, total, state, width).slice(0, width)}\x1b[K`);
      this.drawn = true;
      return;
    }
    const tenth = total > 0 ? Math.floor((done / total) * 10) : 0;
    if (!stateChanged && tenth <= this.lastTenth) return;
    this.lastTenth = Math.max(this.lastTenth, tenth);
    this.out.write(`${this.line(done, total, state)}\n`);
  }

  /** Ends the live line; `message` follows on a line of its own. */
  finish(message?: string): void {
    if (this.tty && this.drawn) this.out.write('\n');
    this.drawn = false;
    if (message) this.out.write(`${message}\n`);
  }

  /** A line of its own between updates; the next update draws below it. */
  note(message: string): void {
    this.finish(message);
  }

  /** Average speed since the bar was made. */
  averageRate(bytes: number): number {
    const s = (this.now() - this.started) / 1000;
    return s > 0 ? bytes / s : 0;
  }

  elapsedSeconds(): number {
    return (this.now() - this.started) / 1000;
  }

  /** The text of one update; with `width`, the live line, with a bar as wide as fits (up to 30). */
  line(done: number, total: number, state: string, width?: number): string {
    const pct = total > 0 ? Math.min(100, Math.floor((done / total) * 100)) : state === 'complete' ? 100 : 0;
    const rate = this.meter.rate();
    const rest = [`${bytes(done)} / ${bytes(total)}`];
    if (state === 'transferring' && this.waiting) rest.push(describeWaiting(this.waiting, this.now()));
    else {
      if (state === 'transferring' && rate !== undefined) {
        rest.push(speed(Math.max(0, rate)));
        rest.push(rate > 0 && total > done ? timeLeft((total - done) / rate) : 'time left unknown');
      }
      // On the live line, speed and time left already say it is moving.
      if (width === undefined || state !== 'transferring') rest.push(state);
    }
    const head = [width === undefined ? this.opts.label : (this.opts.ttyLabel ?? this.opts.label), `${String(pct).padStart(3)}%`];
    if (width !== undefined) {
      const w = Math.min(30, width - [...head, ...rest].join('  ').length - 4);
      if (w >= 10) {
        const filled = Math.round((pct / 100) * w);
        head.push(`[${'#'.repeat(filled)}${'-'.repeat(w - filled)}]`);
      }
    }
    return [...head, ...rest].join('  ');
  }
}
