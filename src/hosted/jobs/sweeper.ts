// Runs the periodic sweeps (expiry, unfinished Packages, unused form responses, rate-limit windows and lockouts, the events' retention) on an interval; one sweep at a time.
// With several workers on one database, one at a time sweeps: the holder of the `sweeper` lease, kept while it runs and given back when it stops.
import os from 'node:os';
import type { HostedContext } from '../context.js';
import { sweepExpired, sweepUnfinished } from '../services/expiry.js';
import { sweepUnusedResponses } from '../services/formResponses.js';
import { sweepSecretFailures } from '../services/lockouts.js';
import { sweepRateLimits } from '../ratelimit/store.js';
import { sweepEvents } from '../services/events.js';
import { randomId } from '../ids.js';
import { releaseLease, takeLease } from './lease.js';

const LEASE = 'sweeper';

/** `alone`: no other instance can share the database (the embedded store's data dir lock), so no lease is needed. */
export function startSweeper(ctx: HostedContext, intervalMs: number, opts: { alone?: boolean } = {}): { stop(): Promise<void> } {
  const owner = `${os.hostname()}:${process.pid}:${randomId(6)}`;
  // Longer than a few intervals, so that the holder keeps it from one tick to the next; renewed during a long sweep.
  const leaseMs = Math.max(ctx.config.jobsLeaseMs, 3 * intervalMs);
  let stopped = false;
  let running: Promise<unknown> = Promise.resolve();
  const sweep = async () => {
    if (stopped || !(opts.alone || (await takeLease(ctx.db, LEASE, owner, leaseMs)))) return;
    const renew = setInterval(() => {
      if (opts.alone) return;
      takeLease(ctx.db, LEASE, owner, leaseMs).catch((err) => ctx.log.warn({ err }, 'renewing the sweeper lease failed'));
    }, Math.max(10, Math.floor(leaseMs / 3)));
    renew.unref();
    try {
      await sweepExpired(ctx);
      await sweepUnfinished(ctx, ctx.config.unfinishedPackageTtlMs);
      await sweepUnusedResponses(ctx);
      await sweepRateLimits(ctx.db, ctx.config.rateLimits.windowMs);
      await sweepSecretFailures(ctx.db, ctx.config.lockout);
      await sweepEvents(ctx);
    } finally {
      clearInterval(renew);
    }
  };
  const tick = () => {
    running = running.then(sweep).catch((err) => ctx.log.error({ err }, 'sweep failed'));
  };
  const timer = setInterval(tick, intervalMs);
  timer.unref();
  tick();
  return {
    async stop() {
      stopped = true;
      clearInterval(timer);
      await running;
      if (!opts.alone) await releaseLease(ctx.db, LEASE, owner).catch((err) => ctx.log.warn({ err }, 'giving the sweeper lease back failed'));
    },
  };
}
