// A transfer's trouble: from its first transient failure until its next
// success it is waiting (the record's `waiting` field says for what, since when,
// and when it tries next), and once it has waited `retryFor` without a single
// success it gives up into a recoverable error.
import type { Waiting } from '../../api/agent/waiting.js';
import type { Target } from './outages.js';
import { GaveUpError } from './retry.js';

/** The longest a Node timer waits; a longer retryFor is checked again at that pace. */
const MAX_TIMER_MS = 2 ** 31 - 1;

const iso = (ms: number) => new Date(ms).toISOString();

function duration(ms: number): string {
  if (ms % 3_600_000 === 0) return `${ms / 3_600_000} h`;
  if (ms % 60_000 === 0) return `${ms / 60_000} min`;
  return `${Math.round(ms / 100) / 10} s`;
}

export class Trouble {
  private state: { since: number; target: Target; error: string; retryAt: number } | undefined;
  private timer: NodeJS.Timeout | undefined;

  constructor(
    private readonly retryForMs: number,
    private readonly hooks: {
      /** The waiting state began, changed or ended. */
      changed(): void;
      /** retryFor passed without a success. */
      gaveUp(err: GaveUpError): void;
    },
  ) {}

  /** A transient failure of a request to `target`; the next try is due at `retryAt` (Date.now() time) unless the target is down. */
  failed(target: Target, error: string, retryAt: number): void {
    if (!this.state) {
      this.state = { since: Date.now(), target, error, retryAt };
      this.arm(this.retryForMs);
    } else Object.assign(this.state, { target, error, retryAt });
    this.hooks.changed();
  }

  /**
   * The transfer has work for `target`, which is down: it waits for the target's
   * probe as if it had failed itself (a transfer whose parts all stood in the
   * queue when the outage began has no failure of its own to show).
   */
  blockedBy(target: Target): void {
    const down = target.down;
    if (!down || this.state?.target === target) return;
    this.failed(target, down.lastError, down.nextAttemptAt);
  }

  succeeded(): void {
    if (!this.state) return;
    this.clear();
    this.hooks.changed();
  }

  /** Forgets the trouble without a word (the transfer stopped: paused, failed, deleted). */
  clear(): void {
    this.state = undefined;
    clearTimeout(this.timer);
    this.timer = undefined;
  }

  waiting(): Waiting | undefined {
    const s = this.state;
    if (!s) return undefined;
    const down = s.target.down;
    return {
      reason: `${s.target.kind}_${down ? 'unreachable' : 'error'}`,
      since: iso(s.since),
      next_attempt_at: iso(down ? down.nextAttemptAt : s.retryAt),
      last_error: down?.lastError ?? s.error,
    };
  }

  private arm(ms: number): void {
    this.timer = setTimeout(() => {
      const s = this.state;
      if (!s) return;
      const left = s.since + this.retryForMs - Date.now();
      if (left > 0) return this.arm(left);
      const error = s.target.down?.lastError ?? s.error;
      this.clear();
      this.hooks.gaveUp(new GaveUpError(`no success for ${duration(this.retryForMs)} (--retry-for); last: ${error}. It resumes by itself when the ${s.target.kind} is back, or with resume`));
    }, Math.min(Math.max(0, ms), MAX_TIMER_MS));
    this.timer.unref();
  }
}
