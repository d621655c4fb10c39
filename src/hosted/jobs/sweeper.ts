// Runs the periodic sweeps (expiry, unused form responses, the events' retention) on an interval; one sweep at a time.
import type { HostedContext } from '../context.js';
import { sweepExpired } from '../services/expiry.js';
import { sweepUnusedResponses } from '../services/formResponses.js';
import { sweepEvents } from '../services/events.js';

export function startSweeper(ctx: HostedContext, intervalMs: number): { stop(): Promise<void> } {
  let running: Promise<unknown> = Promise.resolve();
  const tick = () => {
    running = running
      .then(() => sweepExpired(ctx))
      .then(() => sweepUnusedResponses(ctx))
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
