// Every kind of job the hosted service runs, with what each needs at close.
import type { HostedContext } from '../context.js';
import type { JobHandler } from './worker.js';
import { WEBHOOK_JOB } from '../services/webhookEvents.js';
import { webhookDelivery } from '../services/webhookDelivery.js';
import { CLOUD_TRANSFER_JOB } from '../services/cloudTransfers.js';
import { cloudTransferJob } from '../services/cloudTransferJob.js';
import { SCAN_JOB, scanJob } from '../services/malwareScan.js';

export function jobHandlers(ctx: HostedContext): { handlers: Record<string, JobHandler>; close(): Promise<void> } {
  const webhooks = webhookDelivery(ctx, { retryBaseMs: ctx.config.webhookRetryBaseMs, timeoutMs: ctx.config.webhookTimeoutMs });
  return {
    handlers: { [WEBHOOK_JOB]: webhooks.handler, [CLOUD_TRANSFER_JOB]: cloudTransferJob(ctx), [SCAN_JOB]: scanJob(ctx) },
    close: () => webhooks.close(),
  };
}
