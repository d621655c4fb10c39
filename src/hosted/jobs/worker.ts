// Runs the jobs table: claims due jobs up to a concurrency, keeps their leases
// while they run, and retries failures after the handler's back-off. It sleeps
// until the next job falls due (at most pollMs, so that other processes' jobs
// and run-out leases are seen), and wakes at once when this process enqueues.
// Its timers are unref'd; stop() claims nothing more, lets the jobs in flight
// finish within a grace, then tells them (their signal aborts): a job that stops
// early because of it (InterruptedJobError), or is still running a moment later,
// is queued again uncounted, at once, for any worker to resume.
import os from 'node:os';
import type { Logger } from 'pino';
import type { Db } from '../db/open.js';
import { randomId } from '../ids.js';
import { claimJob, completeJob, deferJob, failAbandoned, failJob, nextRunAfter, releaseJob, renewLease, retryJob, type Job } from './queue.js';

export interface JobHandler {
  /**
   * One attempt; throwing fails it. `signal` aborts when the service stops: a
   * long job may then throw InterruptedJobError, and the attempt is released, not counted.
   */
  run(job: Job, signal: AbortSignal): Promise<void>;
  /** How long to wait after failed attempt `attempt` (1-based) before the next. */
  retryDelayMs(attempt: number): number;
  /** Once, when the job is given up: its last attempt failed, or its process died during it. */
  gaveUp?(job: Job, error: string): Promise<void>;
}

/** Thrown by a handler when retrying cannot help: the job is given up at once. */
export class FinalJobError extends Error {}

/** Thrown by a handler that stopped early because its signal aborted: the job is released, uncounted. */
export class InterruptedJobError extends Error {}

/** Thrown by a handler that cannot run yet through no fault of the job: queued again after `delayMs`, uncounted. */
export class DeferredJobError extends Error {
  constructor(
    message: string,
    readonly delayMs: number,
  ) {
    super(message);
  }
}

export interface WorkerOptions {
  pollMs: number;
  leaseMs: number;
  concurrency: number;
  /** Who holds the leases; unique per process by default. */
  owner?: string;
}

/** Wakes the worker of this process after a transaction that enqueued has committed. */
export interface JobSignal {
  notify(): void;
  listen(fn: () => void): void;
}

export function createJobSignal(): JobSignal {
  let listener: (() => void) | undefined;
  return { notify: () => listener?.(), listen: (fn) => void (listener = fn) };
}

export interface JobWorker {
  owner: string;
  wake(): void;
  /**
   * Claims nothing more; lets the jobs in flight finish for up to `graceMs`,
   * then aborts their signal, and hands back (queued again at once, the attempt
   * uncounted) any still running a moment later, for another worker to take.
   */
  stop(graceMs?: number): Promise<void>;
}

/** After the abort: how long handlers that heed their signal get to wind down before their jobs are handed back regardless. */
const ABORT_WAIT_MS = 2000;

const settledWithin = (ps: Iterable<Promise<unknown>>, ms: number) =>
  new Promise<void>((resolve) => {
    const timer = setTimeout(resolve, ms);
    void Promise.allSettled([...ps]).then(() => {
      clearTimeout(timer);
      resolve();
    });
  });

const describe = (err: unknown) => (err instanceof Error ? err.message : String(err)).slice(0, 1000);

export function startJobWorker(db: Db, log: Logger, handlers: Record<string, JobHandler>, opts: WorkerOptions): JobWorker {
  const owner = opts.owner ?? `${os.hostname()}:${process.pid}:${randomId(6)}`;
  const kinds = Object.keys(handlers);
  const inflight = new Map<Promise<void>, Job>();
  const stopping = new AbortController();
  let stopped = false;
  let timer: NodeJS.Timeout | undefined;
  let pumping: Promise<void> | undefined;
  let again = false;

  const schedule = (ms: number) => {
    if (stopped) return;
    if (timer) clearTimeout(timer);
    timer = setTimeout(() => {
      timer = undefined;
      void pump();
    }, Math.max(0, ms));
    timer.unref();
  };

  async function giveUp(job: Job, error: string) {
    try {
      await handlers[job.kind]?.gaveUp?.(job, error);
    } catch (err) {
      log.error({ err, jobId: job.id, kind: job.kind }, 'job give-up hook failed');
    }
  }

  async function execute(job: Job) {
    const handler = handlers[job.kind]!;
    // A third of the lease: two renewals may fail before another process takes the job over.
    const renew = setInterval(() => {
      renewLease(db, job.id, owner, opts.leaseMs).catch((err) => log.warn({ err, jobId: job.id }, 'lease renewal failed'));
    }, Math.max(10, Math.floor(opts.leaseMs / 3)));
    renew.unref();
    let error: unknown;
    try {
      await handler.run(job, stopping.signal);
    } catch (err) {
      error = err;
    } finally {
      clearInterval(renew);
    }
    try {
      if (error === undefined) {
        await completeJob(db, job.id, owner);
      } else if (error instanceof InterruptedJobError && stopping.signal.aborted) {
        await releaseJob(db, job.id, owner, 'interrupted by a shutdown; handed back to any worker');
        log.info({ jobId: job.id, kind: job.kind }, 'job interrupted by the shutdown, released');
      } else if (error instanceof DeferredJobError) {
        await deferJob(db, job.id, owner, describe(error), new Date(Date.now() + error.delayMs));
        log.info({ jobId: job.id, kind: job.kind, retryInMs: error.delayMs, why: describe(error) }, 'job deferred');
      } else if (error instanceof FinalJobError || job.attempts >= job.max_attempts) {
        if (await failJob(db, job.id, owner, describe(error))) await giveUp(job, describe(error));
        log.warn({ jobId: job.id, kind: job.kind, attempts: job.attempts, error: describe(error) }, 'job given up');
      } else {
        const delay = handler.retryDelayMs(job.attempts);
        await retryJob(db, job.id, owner, describe(error), new Date(Date.now() + delay));
        log.info({ jobId: job.id, kind: job.kind, attempt: job.attempts, retryInMs: delay, error: describe(error) }, 'job attempt failed');
      }
    } catch (err) {
      // The lease runs out and another claim retries the job.
      log.error({ err, jobId: job.id }, 'recording a job attempt failed');
    }
  }

  async function fill(): Promise<number | undefined> {
    for (const job of await failAbandoned(db, kinds)) await giveUp(job, job.last_error ?? 'abandoned');
    while (!stopped && inflight.size < opts.concurrency) {
      const job = await claimJob(db, owner, kinds, opts.leaseMs);
      if (!job) break;
      const p = execute(job).finally(() => {
        inflight.delete(p);
        schedule(0); // a slot is free
      });
      inflight.set(p, job);
    }
    if (inflight.size >= opts.concurrency) return undefined; // a finishing job wakes us
    const next = await nextRunAfter(db, kinds);
    return next === undefined ? undefined : Date.parse(next) - Date.now();
  }

  async function pump(): Promise<void> {
    if (stopped) return;
    if (pumping) {
      again = true;
      return;
    }
    let wait: number | undefined;
    pumping = (async () => {
      do {
        again = false;
        try {
          wait = await fill();
        } catch (err) {
          log.error({ err }, 'claiming jobs failed');
          wait = undefined;
        }
      } while (again && !stopped);
    })();
    await pumping;
    pumping = undefined;
    schedule(Math.min(opts.pollMs, wait ?? opts.pollMs));
  }

  schedule(0);
  return {
    owner,
    wake: () => schedule(0),
    async stop(graceMs = 0) {
      stopped = true;
      if (timer) clearTimeout(timer);
      await pumping;
      if (graceMs > 0 && inflight.size > 0) await settledWithin(inflight.keys(), graceMs);
      stopping.abort();
      if (inflight.size > 0) await settledWithin(inflight.keys(), ABORT_WAIT_MS);
      // Still running: its lease is given back now rather than left to run out; what it does later is refused (it no longer owns the job).
      for (const job of [...inflight.values()]) {
        const released = await releaseJob(db, job.id, owner, 'handed back by a shutdown').catch((err) => {
          log.error({ err, jobId: job.id }, 'handing a job back failed; its lease runs out instead');
          return false;
        });
        if (released) log.warn({ jobId: job.id, kind: job.kind }, 'job still running at the end of the shutdown, handed back');
      }
    },
  };
}
