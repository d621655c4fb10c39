// One attempt of a transfer through a storage gateway (the cloud transfer job
// dispatches here for provider storage_gateway). With no gateway connected the
// attempt is deferred, uncounted: the transfer waits, queued, until its gateway
// connects (which wakes it) or --gateway-wait-ms after it was raised (then it is
// given up). A gateway that drops mid-transfer defers it the same way; the next
// attempt resumes from what both sides recorded.
import type { HostedContext } from '../context.js';
import type { CloudConnectionsTable, CloudTransfersTable, PackagesTable } from '../db/schema.js';
import { DeferredJobError, FinalJobError } from '../jobs/worker.js';
import { GatewayGoneError } from './session.js';
import { deliverToGateway } from './deliver.js';
import { collectFromGateway } from './collect.js';

const waitText = (ms: number) => (ms % 86_400_000 === 0 ? `${ms / 86_400_000} day(s)` : ms % 3_600_000 === 0 ? `${ms / 3_600_000} hour(s)` : `${Math.round(ms / 1000)} s`);

/** How long an attempt whose gateway dropped waits for it to come back before it lets its job go. */
const RECONNECT_WAIT_MS = 5000;
/** Gateways that come back within one attempt, at most: past that it is deferred (a gateway that keeps dropping). */
const MAX_REATTACH = 3;

export async function gatewayTransfer(ctx: HostedContext, transfer: CloudTransfersTable, conn: CloudConnectionsTable, pkg: PackagesTable, signal: AbortSignal): Promise<void> {
  const { config } = ctx;
  let session = ctx.gateways.get(conn.id);
  if (!session) {
    if (Date.now() - Date.parse(transfer.created_at) >= config.gatewayWaitMs) {
      throw new FinalJobError(`the storage gateway of "${conn.name || conn.id}" did not connect within ${waitText(config.gatewayWaitMs)} of the transfer`);
    }
    throw new DeferredJobError('waiting for the storage gateway to connect; the transfer starts when it does', config.gatewayRecheckMs);
  }
  for (let reattached = 0; ; reattached++) {
    try {
      // Read again each time: what the last try recorded (planned, items) is where this one starts.
      const now = await ctx.db.selectFrom('cloud_transfers').selectAll().where('id', '=', transfer.id).executeTakeFirstOrThrow();
      if (now.direction === 'svc_to_cloud') {
        if (pkg.state !== 'finalized') throw new FinalJobError(`the package is ${pkg.state}: its files are no longer there to deliver`);
        await deliverToGateway(ctx, session, now, conn, pkg, signal, config.cloudPartConcurrency);
      } else {
        const fresh = await ctx.db.selectFrom('packages').selectAll().where('id', '=', pkg.id).executeTakeFirstOrThrow();
        await collectFromGateway(ctx, session, now, conn, fresh, signal, { partSize: config.cloudPartSize, concurrency: config.cloudPartConcurrency });
      }
      return;
    } catch (err) {
      if (!(err instanceof GatewayGoneError) || signal.aborted) throw err;
      // A gateway that dropped (its agent restarting, a network blip) usually comes back within seconds: this attempt goes on with it.
      const back = reattached < MAX_REATTACH ? await ctx.gateways.whenAttached(conn.id, RECONNECT_WAIT_MS, signal) : undefined;
      if (!back) {
        throw new DeferredJobError('the storage gateway disconnected; the transfer resumes where it stopped when it connects again', config.gatewayRecheckMs);
      }
      session = back;
    }
  }
}
