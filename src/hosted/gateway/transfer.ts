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

export async function gatewayTransfer(ctx: HostedContext, transfer: CloudTransfersTable, conn: CloudConnectionsTable, pkg: PackagesTable, signal: AbortSignal): Promise<void> {
  const { config } = ctx;
  const session = ctx.gateways.get(conn.id);
  if (!session) {
    if (Date.now() - Date.parse(transfer.created_at) >= config.gatewayWaitMs) {
      throw new FinalJobError(`the storage gateway of "${conn.name || conn.id}" did not connect within ${waitText(config.gatewayWaitMs)} of the transfer`);
    }
    throw new DeferredJobError('waiting for the storage gateway to connect; the transfer starts when it does', config.gatewayRecheckMs);
  }
  try {
    if (transfer.direction === 'svc_to_cloud') {
      if (pkg.state !== 'finalized') throw new FinalJobError(`the package is ${pkg.state}: its files are no longer there to deliver`);
      await deliverToGateway(ctx, session, transfer, conn, pkg, signal, config.cloudPartConcurrency);
    } else {
      await collectFromGateway(ctx, session, transfer, conn, pkg, signal, { partSize: config.cloudPartSize, concurrency: config.cloudPartConcurrency });
    }
  } catch (err) {
    if (err instanceof GatewayGoneError && !signal.aborted) {
      throw new DeferredJobError('the storage gateway disconnected; the transfer resumes where it stopped when it connects again', config.gatewayRecheckMs);
    }
    throw err;
  }
}
