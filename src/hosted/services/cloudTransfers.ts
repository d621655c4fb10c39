// Cloud transfers: a Package delivered to a connection's bucket (svc_to_cloud)
// or filled from it (cloud_to_svc). Raised by a Portal Package's finalize for
// each connection attached to the Portal (in the finalize's transaction), or by
// POST /v1/packages/{id}/transfer; each is one job of the jobs table
// (cloudTransferJob.ts runs it). The record is the transfer's state.
import type { Kysely, Transaction } from 'kysely';
import type { HostedContext } from '../context.js';
import type { CloudConnectionsTable, CloudTransfersTable, Database, PackagesTable } from '../db/schema.js';
import type { Transfer, TransferBody } from '../../api/hosted/cloudConnections.js';
import type { FilterRule } from '../../api/hosted/filters.js';
import { conflict, notFound, badRequest, HttpError } from '../errors.js';
import { newId } from '../ids.js';
import { enqueueJob } from '../jobs/queue.js';
import { deliveryOf, providerInfo, storedVariant } from './cloudAuthorization.js';
import { normalizeFolder, openAuthorization, parseFolders } from './cloudConnections.js';
import { visiblePackages, type Viewer } from './visibility.js';

type Conn = Kysely<Database> | Transaction<Database>;

export const CLOUD_TRANSFER_JOB = 'cloud.transfer';
/** A transfer through a storage gateway: it needs the gateway's socket, so only instances that serve the API run it (jobs/handlers.ts). */
export const GATEWAY_TRANSFER_JOB = 'cloud.transfer.gateway';

export function transferDto(row: CloudTransfersTable): Transfer {
  return {
    id: row.id,
    package_id: row.package_id,
    cloud_connection_id: row.cloud_connection_id,
    state: row.state,
    created_at: row.created_at,
    updated_at: row.updated_at,
    ...(row.error !== null ? { error: row.error } : {}),
    direction: row.direction,
    trigger: row.raised_by,
    files_total: row.files_total,
    files_done: row.files_done,
    bytes_total: row.bytes_total,
    bytes_done: row.bytes_done,
    files_filtered_out: row.files_filtered_out,
    attempts: row.attempts,
    destination: row.destination,
    manifest_key: row.manifest_key,
  };
}

/** Why transfers with this connection cannot run in this version; undefined when they can. */
export function unavailableReason(ctx: HostedContext, conn: CloudConnectionsTable): string | undefined {
  const d = deliveryOf(conn.provider, storedVariant(conn.provider, openAuthorization(ctx, conn)));
  // A storage gateway's transfers wait for it when it is not connected (gateway/transfer.ts).
  if (d.kind === 'unavailable') return d.reason;
  return undefined;
}

interface NewTransfer {
  pkg: Pick<PackagesTable, 'id' | 'team_id'>;
  conn: CloudConnectionsTable;
  raisedBy: CloudTransfersTable['raised_by'];
  filterRules: FilterRule[] | null;
  requestedFiles: string[] | null;
  notifyEmail: string | null;
  /** Set when the transfer cannot run: it is recorded as failed, and no job is queued. */
  unavailable?: string;
  maxAttempts: number;
}

/** Writes the record and (unless unavailable) its job with `db`, the transaction of the change that raises it. */
async function insertTransfer(db: Conn, t: NewTransfer, now: Date): Promise<CloudTransfersTable> {
  const at = now.toISOString();
  const row: CloudTransfersTable = {
    id: newId('xfr'),
    team_id: t.pkg.team_id,
    package_id: t.pkg.id,
    cloud_connection_id: t.conn.id,
    direction: t.conn.direction,
    raised_by: t.raisedBy,
    state: t.unavailable ? 'error' : 'queued',
    error: t.unavailable ?? null,
    notify_email: t.notifyEmail,
    filter_rules: t.filterRules ? JSON.stringify(t.filterRules) : null,
    requested_files: t.requestedFiles ? JSON.stringify(t.requestedFiles) : null,
    planned: 0,
    files_total: 0,
    files_done: 0,
    bytes_total: 0,
    bytes_done: 0,
    files_filtered_out: 0,
    attempts: 0,
    destination: null,
    manifest_key: null,
    created_at: at,
    updated_at: at,
  };
  await db.insertInto('cloud_transfers').values(row).execute();
  const kind = t.conn.provider === 'storage_gateway' ? GATEWAY_TRANSFER_JOB : CLOUD_TRANSFER_JOB;
  if (!t.unavailable) await enqueueJob(db, { kind, payload: { transfer_id: row.id }, maxAttempts: t.maxAttempts }, now);
  return row;
}

const parseRules = (json: string): FilterRule[] => {
  try {
    const v: unknown = JSON.parse(json);
    return Array.isArray(v) ? (v as FilterRule[]) : [];
  } catch {
    return [];
  }
};

/**
 * At a Portal Package's finalize, in its transaction: one transfer per
 * svc_to_cloud connection attached to the Portal, with the attachment's filter
 * rules as they are now. Answers how many jobs were queued (wake the worker after the commit).
 */
export async function raisePortalTransfers(ctx: HostedContext, trx: Conn, pkg: Pick<PackagesTable, 'id' | 'team_id' | 'portal_id'>, now: Date): Promise<number> {
  if (!pkg.portal_id) return 0;
  const attached = await trx
    .selectFrom('portal_cloud_connections as pc')
    .innerJoin('cloud_connections as c', 'c.id', 'pc.cloud_connection_id')
    .leftJoin('filters as f', 'f.id', 'pc.filter_id')
    .selectAll('c')
    .select(['f.rules as filter_rules_json'])
    .where('pc.portal_id', '=', pkg.portal_id)
    .where('c.deleted_at', 'is', null)
    .where('c.direction', '=', 'svc_to_cloud')
    .orderBy('pc.position')
    .execute();
  let queued = 0;
  for (const a of attached) {
    const { filter_rules_json, ...conn } = a;
    const unavailable = unavailableReason(ctx, conn);
    await insertTransfer(
      trx,
      {
        pkg,
        conn,
        raisedBy: 'portal',
        filterRules: filter_rules_json ? parseRules(filter_rules_json) : null,
        requestedFiles: null,
        notifyEmail: null,
        maxAttempts: ctx.config.cloudAttempts,
        ...(unavailable ? { unavailable } : {}),
      },
      now,
    );
    if (!unavailable) queued++;
  }
  return queued;
}

const under = (key: string, folder: string) => folder === '' || key === folder || key.startsWith(`${folder}/`);

/** cloud_to_svc `files`: keys or folders ("x/"), normalized, each inside a source folder when the connection has any. */
function requestedFiles(conn: CloudConnectionsTable, files: NonNullable<TransferBody['files']>): string[] {
  const sources = parseFolders(conn.source_directory_ids);
  const out = files.map((f, i) => {
    const folder = f.path.endsWith('/');
    const key = normalizeFolder(f.path, `files[${i}].path`);
    if (key === '' && !folder) throw badRequest(`files[${i}].path names nothing`, 'invalid_folder');
    if (sources.length > 0 && !sources.some((s) => under(key, s))) {
      throw badRequest(`files[${i}].path ${f.path} is outside the connection's source_directory_ids`, 'outside_source_directories');
    }
    return folder ? `${key}/`.replace(/^\/$/, '') : key;
  });
  return [...new Set(out)];
}

/**
 * POST /v1/packages/{id}/transfer. svc_to_cloud delivers the whole finalized
 * Package (no filter: the caller asked for this Package); cloud_to_svc fills a
 * new Package with the connection's objects (or `files`) and finalizes it.
 */
export async function startManualTransfer(ctx: HostedContext, pkg: PackagesTable, body: TransferBody): Promise<Transfer> {
  const conn = await ctx.db
    .selectFrom('cloud_connections')
    .selectAll()
    .where('id', '=', body.cloud_connection_id)
    .where('team_id', '=', pkg.team_id)
    .where('deleted_at', 'is', null)
    .executeTakeFirst();
  if (!conn) throw notFound('cloud connection');
  const unavailable = unavailableReason(ctx, conn);
  if (unavailable) throw new HttpError(409, 'transfer_not_available', unavailable);
  let requested: string[] | null = null;
  if (conn.direction === 'svc_to_cloud') {
    if (body.files !== undefined) throw badRequest('files is for cloud_to_svc connections; svc_to_cloud delivers the whole Package', 'invalid_field');
    if (pkg.state !== 'finalized') throw conflict(`the package is ${pkg.state}; only a finalized package can be delivered`, 'package_not_finalized');
  } else {
    if (!providerInfo(conn.provider)?.cloudToSvc) throw conflict(`${conn.provider} cannot bring files in`, 'transfer_not_available');
    if (pkg.state !== 'new') throw conflict(`the package is ${pkg.state}; cloud_to_svc fills a new package`, 'package_not_new');
    if (body.files !== undefined) requested = requestedFiles(conn, body.files);
    const busy = await ctx.db.selectFrom('cloud_transfers').select('id').where('package_id', '=', pkg.id).where('direction', '=', 'cloud_to_svc').where('state', 'in', ['queued', 'running']).executeTakeFirst();
    if (busy) throw conflict(`transfer ${busy.id} is already filling this package`, 'transfer_in_progress');
  }
  const row = await ctx.db.transaction().execute((trx) =>
    insertTransfer(trx, { pkg, conn, raisedBy: 'manual', filterRules: null, requestedFiles: requested, notifyEmail: body.notify_email ?? null, maxAttempts: ctx.config.cloudAttempts }, new Date()),
  );
  ctx.jobs.notify();
  return transferDto(row);
}

export async function listPackageTransfers(ctx: HostedContext, packageId: string, limit: number): Promise<Transfer[]> {
  const rows = await ctx.db.selectFrom('cloud_transfers').selectAll().where('package_id', '=', packageId).orderBy('created_at', 'desc').orderBy('id', 'desc').limit(limit).execute();
  return rows.map(transferDto);
}

export async function getPackageTransfer(ctx: HostedContext, packageId: string, transferId: string): Promise<Transfer> {
  const row = await ctx.db.selectFrom('cloud_transfers').selectAll().where('id', '=', transferId).where('package_id', '=', packageId).executeTakeFirst();
  if (!row) throw notFound('transfer');
  return transferDto(row);
}

export async function listConnectionTransfers(ctx: HostedContext, viewer: Viewer, connectionId: string, limit: number): Promise<Transfer[]> {
  const rows = await ctx.db
    .selectFrom('cloud_transfers')
    .selectAll()
    .where('cloud_connection_id', '=', connectionId)
    .where('package_id', 'in', (eb) => eb.selectFrom('packages').select('packages.id').where('packages.team_id', '=', viewer.teamId).where(visiblePackages(viewer)))
    .orderBy('created_at', 'desc')
    .orderBy('id', 'desc')
    .limit(limit)
    .execute();
  return rows.map(transferDto);
}

