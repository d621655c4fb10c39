// Every kind of job the hosted service runs, with what each needs at close, and
// which of them an instance of each role runs: a storage gateway's transfers
// need its socket, which reaches only instances that serve the API (`api` and
// `all`), so a `worker` leaves them and an `api` instance runs only them.
import type { HostedContext } from '../context.js';
import type { InstanceRole } from '../config.js';
import type { JobHandler } from './worker.js';
import { WEBHOOK_JOB } from '../services/webhookEvents.js';
import { webhookDelivery } from '../services/webhookDelivery.js';
import { CLOUD_TRANSFER_JOB, GATEWAY_TRANSFER_JOB } from '../services/cloudTransfers.js';
import { cloudTransferJob } from '../services/cloudTransferJob.js';
import { SCAN_JOB, scanJob } from '../services/malwareScan.js';

export function jobHandlers(ctx: HostedContext, role: InstanceRole): { handlers: Record<string, JobHandler>; close(): Promise<void> } {
  const transfers = cloudTransferJob(ctx);
  if (role === 'api') return { handlers: { [GATEWAY_TRANSFER_JOB]: transfers }, close: async () => {} };
  const webhooks = webhookDelivery(ctx, { retryBaseMs: ctx.config.webhookRetryBaseMs, timeoutMs: ctx.config.webhookTimeoutMs });
  const handlers: Record<string, JobHandler> = { [WEBHOOK_JOB]: webhooks.handler, [CLOUD_TRANSFER_JOB]: transfers, [SCAN_JOB]: scanJob(ctx) };
  if (role === 'all') handlers[GATEWAY_TRANSFER_JOB] = transfers;
  return { handlers, close: () => webhooks.close() };
}
