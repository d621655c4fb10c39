// Runs one cloud transfer per job attempt: the record goes running, the S3
// code moves what is missing (cloud/toS3.ts, cloud/fromS3.ts), or the storage
// gateway does (gateway/transfer.ts: an attempt without its gateway is deferred,
// uncounted, and the transfer stays queued), and the outcome
// is written to the transfer and to its connection (state ok, or error with
// last_error). A failed attempt is retried by the jobs table after a doubling
// back-off and resumes where it stopped; a shutdown interrupts it between
// requests and the next start resumes it. A deleted connection is removed once
// its last transfer ends.
import type { HostedContext } from '../context.js';
import type { CloudConnectionsTable, CloudTransfersTable } from '../db/schema.js';
import type { Job } from '../jobs/queue.js';
import { DeferredJobError, FinalJobError, InterruptedJobError, type JobHandler } from '../jobs/worker.js';
import { gatewayTransfer } from '../gateway/transfer.js';
import { nowIso } from '../ids.js';
import { describeS3Error, s3TargetOf, type S3Target } from '../cloud/s3Target.js';
import { abortOpenUploads, deliverToS3 } from '../cloud/toS3.js';
import { importFromS3 } from '../cloud/fromS3.js';
import { recount } from '../cloud/progress.js';
import { openAuthorization, purgeIfDeleted, setConnectionState } from './cloudConnections.js';
import { unavailableReason } from './cloudTransfers.js';
import { deliveryOf, storedVariant } from './cloudAuthorization.js';
import { bytes } from '../../format/sizes.js';
import { describeNetworkError } from '../net/outboundErrors.js';

const isGateway = (ctx: HostedContext, conn: CloudConnectionsTable) => deliveryOf(conn.provider, storedVariant(conn.provider, openAuthorization(ctx, conn))).kind === 'gateway';

const payloadOf = (job: Job) => JSON.parse(job.payload) as { transfer_id: string };

function describe(err: unknown): string {
  if (err instanceof FinalJobError) return err.message;
  const e = err as { $metadata?: unknown; name?: string; message?: string };
  if (e?.$metadata !== undefined || e?.name === 'TimeoutError') return describeS3Error(err);
  // A socket error names the address and port it failed on: the tenant reads the guard's words instead.
  return describeNetworkError(err) ?? (e?.message ?? String(err)).slice(0, 500);
}

async function loadConnection(ctx: HostedContext, id: string): Promise<CloudConnectionsTable> {
  const conn = await ctx.db.selectFrom('cloud_connections').selectAll().where('id', '=', id).executeTakeFirst();
  if (!conn) throw new FinalJobError('the cloud connection is gone');
  return conn;
}

/** A transfer that ended (complete or error): tell notify_email, and let a deleted connection go. */
async function ended(ctx: HostedContext, t: CloudTransfersTable): Promise<void> {
  // A storage gateway attached now hears that the transfer was given up (it ended well: it heard already).
  if (t.state === 'error') {
    const op = t.direction === 'svc_to_cloud' ? 'deliver.end' : 'collect.end';
    await ctx.gateways.get(t.cloud_connection_id)?.call(op, { transfer_id: t.id, ok: false, error: t.error ?? 'given up' }, AbortSignal.timeout(5000)).catch(() => undefined);
  }
  await purgeIfDeleted(ctx, t.cloud_connection_id);
  if (!t.notify_email) return;
  const pkg = await ctx.db.selectFrom('packages').select(['name']).where('id', '=', t.package_id).executeTakeFirst();
  const what = `"${pkg?.name ?? t.package_id}"`;
  const text =
    t.state === 'complete'
      ? t.direction === 'svc_to_cloud'
        ? `The package ${what} was delivered to ${t.destination ?? 'its cloud connection'}: ${t.files_done} files, ${bytes(t.bytes_done)}.`
        : `The package ${what} was filled from its cloud connection and finalized: ${t.files_done} files, ${bytes(t.bytes_done)}.`
      : `The transfer of the package ${what} failed and was given up: ${t.error ?? 'unknown error'}`;
  await ctx.mailer
    .send({ to: t.notify_email, subject: `Ferry transfer ${t.state === 'complete' ? 'complete' : 'failed'}: ${pkg?.name ?? t.package_id}`, text: `${text}\n\nTransfer ${t.id}\n` })
    .catch((err) => ctx.log.error({ err, transferId: t.id }, 'transfer e-mail failed'));
}

async function setTransfer(ctx: HostedContext, id: string, set: Partial<CloudTransfersTable>): Promise<CloudTransfersTable | undefined> {
  await ctx.db.updateTable('cloud_transfers').set({ ...set, updated_at: nowIso() }).where('id', '=', id).execute();
  return ctx.db.selectFrom('cloud_transfers').selectAll().where('id', '=', id).executeTakeFirst();
}

export function cloudTransferJob(ctx: HostedContext): JobHandler {
  const { config } = ctx;

  async function attempt(transfer: CloudTransfersTable, signal: AbortSignal): Promise<void> {
    const conn = await loadConnection(ctx, transfer.cloud_connection_id);
    const unavailable = unavailableReason(ctx, conn);
    if (unavailable) throw new FinalJobError(unavailable);
    const pkg = await ctx.db.selectFrom('packages').selectAll().where('id', '=', transfer.package_id).executeTakeFirst();
    if (!pkg) throw new FinalJobError('the package is gone');
    if (isGateway(ctx, conn)) return gatewayTransfer(ctx, transfer, conn, pkg, signal);
    let target: S3Target | undefined;
    try {
      target = s3TargetOf(ctx, conn.provider, openAuthorization(ctx, conn));
      const opts = { partSize: config.cloudPartSize, concurrency: config.cloudPartConcurrency };
      if (transfer.direction === 'svc_to_cloud') {
        if (pkg.state !== 'finalized') throw new FinalJobError(`the package is ${pkg.state}: its files are no longer there to deliver`);
        await deliverToS3(ctx, transfer, conn, pkg, target, signal, opts);
      } else {
        await importFromS3(ctx, transfer, conn, pkg, target, signal, opts);
      }
    } finally {
      target?.client.destroy();
    }
  }

  return {
    retryDelayMs: (n) => config.cloudRetryBaseMs * 2 ** (n - 1),

    async run(job, signal) {
      const { transfer_id } = payloadOf(job);
      const transfer = await ctx.db.selectFrom('cloud_transfers').selectAll().where('id', '=', transfer_id).executeTakeFirst();
      if (!transfer || transfer.state === 'complete' || transfer.state === 'error') return;
      await setTransfer(ctx, transfer.id, { state: 'running', attempts: job.attempts });
      await recount(ctx.db, transfer.id);
      try {
        await attempt({ ...transfer, state: 'running' }, signal);
      } catch (err) {
        // Waiting for what it needs (its storage gateway): queued again, the attempt not counted, the connection's state untouched.
        if (err instanceof DeferredJobError && !signal.aborted) {
          await setTransfer(ctx, transfer.id, { state: 'queued', error: err.message });
          throw err;
        }
        if (signal.aborted && !(err instanceof FinalJobError)) {
          await setTransfer(ctx, transfer.id, { state: 'queued' });
          throw new InterruptedJobError('interrupted by a shutdown');
        }
        const why = describe(err);
        // The tenant reads `why`; the operator's log keeps the error itself (a socket error's address and port).
        ctx.log.info({ err, transferId: transfer.id, error: why }, 'cloud transfer attempt failed');
        const last = err instanceof FinalJobError || job.attempts >= job.max_attempts;
        const t = await setTransfer(ctx, transfer.id, { state: last ? 'error' : 'queued', error: last ? why : `attempt ${job.attempts} of ${job.max_attempts} failed, retrying: ${why}` });
        await setConnectionState(ctx.db, transfer.cloud_connection_id, 'error', why);
        if (last && t) {
          await giveUpUploads(t);
          await ended(ctx, t);
        }
        throw err instanceof FinalJobError ? err : new Error(why);
      }
      const t = await setTransfer(ctx, transfer.id, { state: 'complete', error: null });
      await setConnectionState(ctx.db, transfer.cloud_connection_id, 'ok', null);
      if (t) await ended(ctx, t);
    },

    /** Given up: after a run that recorded it already (nothing more to do), or when its process died during the last attempt. */
    async gaveUp(job, error) {
      const id = payloadOf(job).transfer_id;
      const now = await ctx.db.selectFrom('cloud_transfers').select('state').where('id', '=', id).executeTakeFirst();
      if (!now || now.state === 'complete' || now.state === 'error') return;
      const t = await setTransfer(ctx, id, { state: 'error', error });
      await setConnectionState(ctx.db, t!.cloud_connection_id, 'error', error);
      await giveUpUploads(t!);
      await ended(ctx, t!);
    },
  };

  /** A given-up delivery leaves no multipart upload open in the customer's bucket. */
  async function giveUpUploads(t: CloudTransfersTable): Promise<void> {
    if (t.direction !== 'svc_to_cloud') return;
    const conn = await ctx.db.selectFrom('cloud_connections').selectAll().where('id', '=', t.cloud_connection_id).executeTakeFirst();
    if (!conn || unavailableReason(ctx, conn) || isGateway(ctx, conn)) return;
    const target = s3TargetOf(ctx, conn.provider, openAuthorization(ctx, conn));
    try {
      await abortOpenUploads(ctx, t.id, target);
    } finally {
      target.client.destroy();
    }
  }
}
