// svc_to_cloud through a storage gateway: a finalized Package's files (those
// the filter lets through), each fetched by the gateway from our store with a
// pre-signed GET and written under its root at
// target_directory_id/"name (package id)"/path/name. The service sends a few
// files at a time and records each the gateway acknowledges, so an attempt after
// a disconnect (or a restart of either side) sends only the rest; the gateway
// keeps its own progress per file, so a file it had half written resumes with
// ranges. A file whose path the gateway refuses (it would leave its root) is not
// written; the others are, and the transfer ends in error naming it.
import type { HostedContext } from '../context.js';
import type { CloudConnectionsTable, CloudTransfersTable, PackagesTable } from '../db/schema.js';
import { FinalJobError } from '../jobs/worker.js';
import { planDelivery } from '../cloud/toS3.js';
import { completeItem, itemPages, pool, type Item } from '../cloud/progress.js';
import { GatewayRefusal, type GatewaySession } from './session.js';
import { TransferProgress } from './progress.js';

/** Fresh URLs for one file after the gateway found its URL expired, in a row. */
const MAX_URL_REFRESHES = 3;

export async function deliverToGateway(
  ctx: HostedContext,
  session: GatewaySession,
  transfer: CloudTransfersTable,
  conn: CloudConnectionsTable,
  pkg: PackagesTable,
  signal: AbortSignal,
  concurrency: number,
): Promise<void> {
  if (session.permissions !== 'w') {
    throw new FinalJobError(
      `the storage gateway of "${conn.name || conn.id}" is registered read-only (permissions r): it serves files to Ferry and receives no deliveries; register it with permissions w to deliver to it`,
    );
  }
  if (!transfer.planned) await planDelivery(ctx, transfer, conn, pkg, (folder) => `${folder}/`);
  const row = await ctx.db.selectFrom('cloud_transfers').select(['destination', 'files_total', 'bytes_total']).where('id', '=', transfer.id).executeTakeFirstOrThrow();
  await session.call(
    'deliver.begin',
    {
      transfer_id: transfer.id,
      package_id: pkg.id,
      package_name: pkg.name,
      folder: (row.destination ?? '').replace(/\/$/, ''),
      files_total: row.files_total,
      bytes_total: row.bytes_total,
    },
    signal,
  );
  const refused: string[] = [];
  // One file failing stops new ones from starting; those under way finish or fail on their own.
  // The items come a page at a time (a Package may hold a million files).
  const progress = new TransferProgress(ctx.db, transfer.id, session);
  try {
    for await (const items of itemPages(ctx.db, transfer.id, { size: ctx.config.cloudPageSize, pendingOnly: true })) {
      await pool(items, concurrency, (item) => deliverFile(ctx, session, transfer, item, signal, refused, progress));
    }
  } finally {
    await progress.close();
  }
  if (refused.length > 0) {
    const why = `the storage gateway refused ${refused.length} file(s), and wrote nothing for them: ${refused.slice(0, 5).join('; ')}${refused.length > 5 ? '; ...' : ''}`;
    await session.call('deliver.end', { transfer_id: transfer.id, ok: false, error: why }, signal).catch(() => undefined);
    throw new FinalJobError(why);
  }
  await session.call('deliver.end', { transfer_id: transfer.id, ok: true }, signal);
}

async function deliverFile(
  ctx: HostedContext,
  session: GatewaySession,
  transfer: CloudTransfersTable,
  item: Item,
  signal: AbortSignal,
  refused: string[],
  progress: TransferProgress,
): Promise<void> {
  for (let refresh = 0; ; refresh++) {
    const url = await ctx.storage.downloadUrl(item.source_key, item.name, ctx.config.blueprintTtlSeconds);
    try {
      await session.call(
        'deliver.file',
        { transfer_id: transfer.id, seq: item.seq, path: item.dest_key!, size: item.size, url, last_modified: item.last_modified },
        signal,
      );
      await completeItem(ctx.db, item, null, 0);
      progress.done(item.seq);
      return;
    } catch (err) {
      if (!(err instanceof GatewayRefusal)) throw err;
      if (err.code === 'url_expired' && refresh < MAX_URL_REFRESHES) continue;
      if (err.code === 'unsafe_path') {
        refused.push(`${item.dest_key}: ${err.message}`);
        return;
      }
      if (err.code === 'permission_denied') throw new FinalJobError(`the storage gateway refused the delivery: ${err.message}`);
      throw new Error(`the storage gateway could not write ${item.dest_key}: ${err.message}`);
    }
  }
}
