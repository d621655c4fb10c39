// cloud_to_svc through a storage gateway: the files under the connection's
// source folders (or the files and folders a manual transfer names), relative
// to the gateway's root, become the files of a new Package, which is then
// finalized. The gateway lists them; then, as for a bucket (cloud/fromS3.ts),
// each file is registered and each part goes up to our store, but here the
// gateway sends it: the service hands it the part blueprint, the gateway reads
// that range of its file and PUTs it (its upload machinery, ETag checked), and
// answers the ETag. Parts are recorded as they land, so a later attempt (after
// a disconnect or a restart) sends only what is missing.
import type { HostedContext } from '../context.js';
import type { CloudConnectionsTable, CloudTransfersTable, PackagesTable } from '../db/schema.js';
import { FinalJobError } from '../jobs/worker.js';
import { parseFolders } from '../services/cloudConnections.js';
import { itemsOf } from '../cloud/progress.js';
import { importAll, saveImportPlan, type PartSender } from '../cloud/fromS3.js';
import { GatewayRefusal, type GatewaySession } from './session.js';

/** The refs the gateway lists: the requested files, else the connection's source folders, else its whole root. */
function refsOf(transfer: CloudTransfersTable, sources: string[]): string[] {
  if (transfer.requested_files) return JSON.parse(transfer.requested_files) as string[];
  return sources.length > 0 ? sources.map((s) => (s ? `${s}/` : '')) : [''];
}

function refusedBy(err: unknown): never {
  if (err instanceof GatewayRefusal) {
    if (['permission_denied', 'unsafe_path', 'not_found', 'too_many_files', 'file_changed', 'bad_request'].includes(err.code)) {
      throw new FinalJobError(`the storage gateway refused: ${err.message}`);
    }
    throw new Error(`the storage gateway failed: ${err.message}`);
  }
  throw err;
}

export async function collectFromGateway(
  ctx: HostedContext,
  session: GatewaySession,
  transfer: CloudTransfersTable,
  conn: CloudConnectionsTable,
  pkg: PackagesTable,
  signal: AbortSignal,
  opts: { partSize: number; concurrency: number },
): Promise<void> {
  if (session.permissions !== 'r') {
    throw new FinalJobError(
      `the storage gateway of "${conn.name || conn.id}" is registered write-only (permissions w): it receives deliveries and serves no files; register it with permissions r to bring files in from it`,
    );
  }
  if (pkg.state !== 'new') {
    const items = await itemsOf(ctx.db, transfer.id);
    // The previous attempt finalized it and stopped before saying so.
    if (pkg.state === 'finalized' && transfer.planned && items.every((i) => i.state === 'complete')) return;
    throw new FinalJobError(`the package is ${pkg.state}; a cloud_to_svc transfer fills a new package`);
  }
  if (!transfer.planned) {
    const sources = parseFolders(conn.source_directory_ids);
    const listed = await session
      .call('collect.list', { transfer_id: transfer.id, package_id: pkg.id, package_name: pkg.name, refs: refsOf(transfer, sources) }, signal)
      .catch(refusedBy);
    const found = listed.files.map((f) => ({ key: f.path, size: f.size, lastModified: new Date(f.mtime_ms).toISOString() }));
    await saveImportPlan(ctx, transfer.id, found, sources);
  }
  // Each part's blueprint is made just before it is sent; one that expires anyway fails the attempt, and the next asks afresh.
  const sendPart: PartSender = async (item, _n, { start, length }, bp, partSignal) => {
    const r = await session
      .call(
        'collect.part',
        {
          transfer_id: transfer.id,
          seq: item.seq,
          path: item.source_key,
          size: item.size,
          mtime_ms: Date.parse(item.last_modified),
          offset: start,
          length,
          blueprint: { url: bp.url, method: bp.method, headers: bp.headers, body: '' },
        },
        partSignal,
      )
      .catch(refusedBy);
    return r.etag;
  };
  await importAll({ ctx, pkg, signal, ...opts, sendPart }, transfer.id);
  await session.call('collect.end', { transfer_id: transfer.id, ok: true }, signal).catch(() => undefined);
}
