// Runs the periodic sweeps (expiry, unused form responses, rate-limit windows and lockouts, the events' retention) on an interval; one sweep at a time.
import type { HostedContext } from '../context.js';
import { sweepExpired } from '../services/expiry.js';
import { sweepUnusedResponses } from '../services/formResponses.js';
import { sweepSecretFailures } from '../services/lockouts.js';
import { sweepRateLimits } from '../ratelimit/store.js';
import { sweepEvents } from '../services/events.js';

export function startSweeper(ctx: HostedContext, intervalMs: number): { stop(): Promise<void> } {
  let running: Promise<unknown> = Promise.resolve();
  const tick = () => {
    running = running
      .then(() => sweepExpired(ctx))
      .then(() => sweepUnusedResponses(ctx))
      .then(() => sweepRateLimits(ctx.db, ctx.config.rateLimits.windowMs))
      .then(() => sweepSecretFailures(ctx.db, ctx.config.lockout))
      .then(() => sweepEvents(ctx))
      .catch((err) => ctx.log.error({ err }, 'sweep failed'));
  };
  const timer = setInterval(tick, intervalMs);
  timer.unref();
  tick();
  return {
    async stop() {
      clearInterval(timer);
      await running;
    },
  };
}
