// Delivers one webhook event per job attempt: the stored request is sent as
// composed (same event_id and body every time), the attempt recorded with its
// status or error and times; a 2xx answer delivers it, anything else (another
// status, a refused connection, no answer within the timeout) fails the attempt
// and the jobs table retries it after a doubling back-off, 5 attempts in all.
// Redirects are not followed: a 3xx fails the attempt. A shutdown cuts the
// attempt short and hands it back uncounted (the receiver may have had it: the
// same event_id then arrives twice). Connections go through the outbound guard
// (net/outbound.ts): a receiver at a private address is refused, and an attempt
// without an answer records the guard's words, not the socket error.
import { Agent, request } from 'undici';
import type { HostedContext } from '../context.js';
import { describeNetworkError } from '../net/outboundErrors.js';
import { InterruptedJobError, type JobHandler } from '../jobs/worker.js';
import type { Job } from '../jobs/queue.js';
import { nowIso } from '../ids.js';
import { parseStringMap } from './customWebhooks.js';

export interface WebhookDeliverySettings {
  /** The wait after the first failed attempt; each later wait doubles. */
  retryBaseMs: number;
  /** For connecting, for the answer's headers, and for the whole attempt. */
  timeoutMs: number;
}

const USER_AGENT = 'Ferry-Webhooks/1';

/** Why an attempt got no status, in words that name no address or port. */
function errorText(err: unknown, timeoutMs: number): string {
  const net = describeNetworkError(err, timeoutMs);
  if (net) return net;
  if (err instanceof Error && err.name === 'AbortError') return `no answer within ${timeoutMs} ms`;
  return 'unreachable';
}

export function webhookDelivery(ctx: HostedContext, settings: WebhookDeliverySettings): { handler: JobHandler; close(): Promise<void> } {
  const agent = new Agent({
    connect: ctx.outbound.connector({ timeout: settings.timeoutMs }),
    headersTimeout: settings.timeoutMs,
    bodyTimeout: settings.timeoutMs,
    keepAliveTimeout: 4000,
  });

  async function send(method: string, url: string, headers: Record<string, string>, body: string, stop: AbortSignal): Promise<{ status: number | null; error: string | null }> {
    try {
      const res = await request(url, {
        method: method as 'POST' | 'PUT',
        headers: { ...headers, 'content-type': 'application/json', 'user-agent': USER_AGENT },
        body,
        dispatcher: agent,
        signal: AbortSignal.any([AbortSignal.timeout(settings.timeoutMs), stop]),
      });
      // The answer's body is not used; read a little of it so the connection can be reused.
      await res.body.dump({ limit: 64 * 1024 }).catch(() => undefined);
      return { status: res.statusCode, error: null };
    } catch (err) {
      const error = errorText(err, settings.timeoutMs);
      ctx.log.info({ err, url: new URL(url).origin, error }, 'webhook attempt got no answer');
      return { status: null, error };
    }
  }

  const handler: JobHandler = {
    retryDelayMs: (attempt) => settings.retryBaseMs * 2 ** (attempt - 1),

    async run(job: Job, signal: AbortSignal) {
      const { event_id } = JSON.parse(job.payload) as { event_id: string };
      const event = await ctx.db.selectFrom('webhook_events').selectAll().where('id', '=', event_id).executeTakeFirst();
      // Gone with its Team, or settled by an attempt whose lease had run out.
      if (!event || event.state !== 'pending') return;
      const attempt = job.attempts;
      const started = { status: null, error: null, started_at: nowIso(), finished_at: null };
      // An attempt a shutdown handed back is not counted: the next one runs under the same number and starts its row over.
      await ctx.db
        .insertInto('webhook_attempts')
        .values({ event_id, attempt, ...started })
        .onConflict((oc) => oc.columns(['event_id', 'attempt']).doUpdateSet(started))
        .execute();

      const { status, error } = await send(event.method, event.url, parseStringMap(event.headers), event.body, signal);
      if (signal.aborted && status === null) {
        await ctx.db.updateTable('webhook_attempts').set({ error: 'interrupted by a shutdown', finished_at: nowIso() }).where('event_id', '=', event_id).where('attempt', '=', attempt).execute();
        throw new InterruptedJobError('interrupted by a shutdown');
      }
      const ok = status !== null && status >= 200 && status < 300;
      const finished = nowIso();
      await ctx.db.transaction().execute(async (trx) => {
        await trx.updateTable('webhook_attempts').set({ status, error, finished_at: finished }).where('event_id', '=', event_id).where('attempt', '=', attempt).execute();
        await trx
          .updateTable('webhook_events')
          .set({ state: ok ? 'delivered' : attempt >= job.max_attempts ? 'failed' : 'pending', attempts: attempt, updated_at: finished })
          .where('id', '=', event_id)
          .where('state', '=', 'pending')
          .execute();
      });
      if (!ok) throw new Error(error ?? `the receiver answered ${status}`);
    },

    async gaveUp(job: Job) {
      const { event_id } = JSON.parse(job.payload) as { event_id: string };
      await ctx.db.updateTable('webhook_events').set({ state: 'failed', updated_at: nowIso() }).where('id', '=', event_id).where('state', '=', 'pending').execute();
    },
  };

  return { handler, close: () => agent.close() };
}
