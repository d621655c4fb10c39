// Cloud connections of a Team: the wire object, create / update (unprovided
// properties unchanged) / delete (transfers in progress finish) / list, and the
// Portal side of attachment (configure_cloud_connections with the full list).
import type { Kysely, Transaction } from 'kysely';
import type { HostedContext } from '../context.js';
import type { CloudConnectionsTable, Database, Role } from '../db/schema.js';
import type { CloudConnection, CreateCloudConnectionBody, GatewaySecretAnswer, GatewayView, PortalCloudConnection, UpdateCloudConnectionBody } from '../../api/hosted/cloudConnections.js';
import type { Provider } from '../../api/hosted/cloudProviders.js';
import type { UserPrincipal } from '../auth/credentials.js';
import { requireRole, teamRole } from '../auth/credentials.js';
import { badRequest, notFound } from '../errors.js';
import { newId, newSecret, nowIso } from '../ids.js';
import { hashSecret } from '../auth/passwords.js';
import { sql } from 'kysely';
import { checkAuthorization, deliveryOf, maskAuthorization, mergeAuthorization, providerInfo, storedVariant, type Authorization } from './cloudAuthorization.js';

type Conn = Kysely<Database> | Transaction<Database>;

const S3_VARIANTS = new Set(['s3_compatible_key', 'aws_s3_key', 'aws_s3_role']);

export function parseFolders(json: string): string[] {
  try {
    const v: unknown = JSON.parse(json);
    return Array.isArray(v) ? v.filter((x): x is string => typeof x === 'string') : [];
  } catch {
    return [];
  }
}

/** A bucket folder normalized ("a//b/" is "a/b"); 400 for ".." segments or backslashes. */
export function normalizeFolder(raw: string, field: string): string {
  if (raw.includes('\\')) throw badRequest(`${field} must use "/" between folders, not "\\"`, 'invalid_folder');
  const segs = raw.split('/').filter((s) => s !== '' && s !== '.');
  if (segs.includes('..')) throw badRequest(`${field} must not contain ".." segments`, 'invalid_folder');
  return segs.join('/');
}

export function openAuthorization(ctx: HostedContext, row: Pick<CloudConnectionsTable, 'credentials'>): Authorization {
  return JSON.parse(ctx.sealer.open(row.credentials)) as Authorization;
}

/** A storage gateway connection's gateway, as answers show it. */
function gatewayView(row: CloudConnectionsTable): GatewayView | null {
  if (row.provider !== 'storage_gateway') return null;
  let info: { permissions?: unknown; version?: unknown } = {};
  try {
    info = row.gateway_info ? (JSON.parse(row.gateway_info) as typeof info) : {};
  } catch {
    info = {};
  }
  return {
    connected: row.gateway_session !== null,
    connected_at: row.gateway_connected_at,
    permissions: info.permissions === 'r' || info.permissions === 'w' ? info.permissions : null,
    version: typeof info.version === 'string' ? info.version : null,
  };
}

export function connectionDto(ctx: HostedContext, row: CloudConnectionsTable): CloudConnection {
  return {
    id: row.id,
    name: row.name,
    provider: row.provider,
    direction: row.direction,
    state: row.state,
    last_error: row.last_error,
    authorization: maskAuthorization(openAuthorization(ctx, row)),
    target_directory_id: row.direction === 'svc_to_cloud' ? (row.target_directory_id ?? '') : null,
    source_directory_ids: parseFolders(row.source_directory_ids),
    upload_transfer_manifest: row.upload_transfer_manifest === 1,
    created_at: row.created_at,
    updated_at: row.updated_at,
    gateway: gatewayView(row),
  };
}

/** A tenant's endpoint at a literal private address is refused on write (400 private_target); names are checked when used. */
function checkEndpoint(ctx: HostedContext, auth: Authorization): void {
  // checkAuthorization made sure it parses.
  if (typeof auth.endpoint === 'string') ctx.outbound.checkUrl(new URL(auth.endpoint), 'authorization.endpoint');
}

/** The state a connection starts in (or returns to with new credentials): ok, or why it cannot work. */
function initialState(provider: string, auth: Authorization): Pick<CloudConnectionsTable, 'state' | 'last_error'> {
  const d = deliveryOf(provider, storedVariant(provider, auth));
  if (d.kind === 'unavailable') return { state: 'error', last_error: d.reason };
  if (d.kind === 'gateway') return { state: 'disconnected', last_error: null };
  return { state: 'ok', last_error: null };
}

type Settings = Pick<CloudConnectionsTable, 'target_directory_id' | 'source_directory_ids' | 'upload_transfer_manifest'>;

/** The folder and manifest settings after `body` is applied to `base`; 400 where the direction or provider has no such setting. */
function settingsFrom(
  provider: string,
  direction: CloudConnectionsTable['direction'],
  variant: string,
  body: Pick<UpdateCloudConnectionBody, 'target_directory_id' | 'source_directory_ids' | 'upload_transfer_manifest'>,
  base: Settings,
): Settings {
  const s = { ...base };
  // A setting of the other direction is refused, unless it is empty as answers show it (a round trip).
  if (body.target_directory_id !== undefined && (direction === 'svc_to_cloud' || body.target_directory_id)) {
    if (direction !== 'svc_to_cloud') throw badRequest('target_directory_id is for svc_to_cloud connections', 'invalid_field');
    s.target_directory_id = normalizeFolder(body.target_directory_id ?? '', 'target_directory_id');
  }
  if (body.source_directory_ids !== undefined && (direction === 'cloud_to_svc' || body.source_directory_ids.length > 0)) {
    if (direction !== 'cloud_to_svc') throw badRequest('source_directory_ids is for cloud_to_svc connections', 'invalid_field');
    s.source_directory_ids = JSON.stringify([...new Set(body.source_directory_ids.map((f, i) => normalizeFolder(f, `source_directory_ids[${i}]`)))]);
  }
  if (body.upload_transfer_manifest !== undefined) {
    if (body.upload_transfer_manifest && (!S3_VARIANTS.has(variant) || direction !== 'svc_to_cloud')) {
      throw badRequest(`upload_transfer_manifest is for svc_to_cloud connections to S3 and S3-compatible storage, not ${provider}`, 'invalid_field');
    }
    s.upload_transfer_manifest = body.upload_transfer_manifest ? 1 : 0;
  }
  return s;
}

/** The connection when the caller belongs to its Team (404 otherwise, and for a deleted one), checked against `allowed` roles. */
export async function memberConnection(ctx: HostedContext, who: UserPrincipal, id: string, allowed?: Role[]): Promise<CloudConnectionsTable> {
  const row = await ctx.db.selectFrom('cloud_connections').selectAll().where('id', '=', id).where('deleted_at', 'is', null).executeTakeFirst();
  if (!row) throw notFound('cloud connection');
  const role = await teamRole(ctx, who, row.team_id, 'cloud connection');
  if (allowed) requireRole(role, allowed);
  return row;
}

export async function createConnection(ctx: HostedContext, teamId: string, body: CreateCloudConnectionBody): Promise<CloudConnection> {
  const provider = body.provider;
  const info = providerInfo(provider)!;
  const direction = body.direction ?? 'svc_to_cloud';
  if (direction === 'cloud_to_svc' && !info.cloudToSvc) throw badRequest(`${provider} connections only deliver (svc_to_cloud); cloud_to_svc is not supported`, 'direction_not_supported');
  const { variant, auth } = checkAuthorization(provider, body.authorization);
  checkEndpoint(ctx, auth);
  const settings = settingsFrom(provider, direction, variant, body, {
    target_directory_id: direction === 'svc_to_cloud' ? '' : null,
    source_directory_ids: '[]',
    upload_transfer_manifest: 0,
  });
  const now = nowIso();
  // A storage gateway connects with this secret; only its hash is kept.
  const secret = provider === 'storage_gateway' ? newSecret() : undefined;
  const row: CloudConnectionsTable = {
    id: newId('ccn'),
    team_id: teamId,
    name: body.name ?? '',
    provider,
    direction,
    credentials: ctx.sealer.seal(JSON.stringify(auth)),
    ...settings,
    ...initialState(provider, auth),
    deleted_at: null,
    created_at: now,
    updated_at: now,
    gateway_secret_hash: secret ? hashSecret(secret) : null,
    gateway_session: null,
    gateway_connected_at: null,
    gateway_info: null,
  };
  await ctx.db.insertInto('cloud_connections').values(row).execute();
  return { ...connectionDto(ctx, row), ...(secret ? { secret } : {}) };
}

/** A storage gateway connection's new secret (shown once); the gateway connected with the old one is dropped. */
export async function rotateGatewaySecret(ctx: HostedContext, row: CloudConnectionsTable): Promise<GatewaySecretAnswer> {
  if (row.provider !== 'storage_gateway') throw badRequest(`only storage_gateway connections have a secret; ${row.provider} connections are authorized by their authorization object`, 'not_a_gateway');
  const secret = newSecret();
  await ctx.db.updateTable('cloud_connections').set({ gateway_secret_hash: hashSecret(secret), updated_at: nowIso() }).where('id', '=', row.id).execute();
  ctx.gateways.revoke(row.id, 'the connection has a new secret');
  return { id: row.id, secret };
}

export async function updateConnection(ctx: HostedContext, row: CloudConnectionsTable, body: UpdateCloudConnectionBody): Promise<CloudConnection> {
  if (body.provider !== undefined && body.provider !== row.provider) throw badRequest('provider cannot change; create another connection', 'immutable_field');
  if (body.direction !== undefined && body.direction !== row.direction) throw badRequest('direction cannot change; create another connection', 'immutable_field');
  const provider = row.provider as Provider;
  const stored = openAuthorization(ctx, row);
  const { variant, auth } = body.authorization !== undefined ? mergeAuthorization(provider, stored, body.authorization) : { variant: storedVariant(provider, stored), auth: stored };
  if (body.authorization !== undefined) checkEndpoint(ctx, auth);
  const settings = settingsFrom(provider, row.direction, variant, body, row);
  const set: Partial<CloudConnectionsTable> = { ...settings, updated_at: nowIso() };
  if (body.name !== undefined) set.name = body.name;
  if (body.authorization !== undefined) {
    set.credentials = ctx.sealer.seal(JSON.stringify(auth));
    // New credentials: nothing has failed with them yet.
    Object.assign(set, initialState(provider, auth));
    if (set.state === 'disconnected') Object.assign(set, { state: row.state, last_error: row.last_error });
  }
  // A manifest needs an S3 variant: switching to one that is not drops it.
  if (!S3_VARIANTS.has(variant)) set.upload_transfer_manifest = 0;
  const res = await ctx.db.updateTable('cloud_connections').set(set).where('id', '=', row.id).where('deleted_at', 'is', null).executeTakeFirst();
  if (res.numUpdatedRows === 0n) throw notFound('cloud connection');
  return connectionDto(ctx, { ...row, ...set });
}

/** Transfers of the connection not yet ended. */
async function activeTransfers(db: Conn, connectionId: string): Promise<number> {
  const r = await db
    .selectFrom('cloud_transfers')
    .select((eb) => eb.fn.countAll<number | string>().as('n'))
    .where('cloud_connection_id', '=', connectionId)
    .where('state', 'in', ['queued', 'running'])
    .executeTakeFirstOrThrow();
  return Number(r.n);
}

/**
 * Detaches it from every Portal and hides it; transfers already queued or
 * running finish with it, and the last one removes it (purgeIfDeleted).
 */
export async function deleteConnection(ctx: HostedContext, id: string): Promise<void> {
  const gone = await ctx.db.transaction().execute(async (trx) => {
    const res = await trx.updateTable('cloud_connections').set({ deleted_at: nowIso() }).where('id', '=', id).where('deleted_at', 'is', null).executeTakeFirst();
    if (res.numUpdatedRows === 0n) throw notFound('cloud connection');
    await trx.deleteFrom('portal_cloud_connections').where('cloud_connection_id', '=', id).execute();
    if ((await activeTransfers(trx, id)) > 0) return false;
    await trx.deleteFrom('cloud_connections').where('id', '=', id).execute();
    return true;
  });
  // A storage gateway attached to it is told its credentials no longer work, once no transfer needs it.
  if (gone) ctx.gateways.revoke(id, 'the connection was deleted');
}

/** After a transfer ended: a deleted connection with no transfer left goes for good (and its storage gateway is let go). */
export async function purgeIfDeleted(ctx: Pick<HostedContext, 'db' | 'gateways'>, id: string): Promise<void> {
  const gone = await ctx.db.transaction().execute(async (trx) => {
    const row = await trx.selectFrom('cloud_connections').select('deleted_at').where('id', '=', id).executeTakeFirst();
    if (!row?.deleted_at || (await activeTransfers(trx, id)) > 0) return false;
    await trx.deleteFrom('cloud_connections').where('id', '=', id).execute();
    return true;
  });
  if (gone) ctx.gateways.revoke(id, 'the connection was deleted');
}

/** A deleted connection still has transfers to finish (its storage gateway may connect for them). */
export const hasActiveTransfers = async (db: Conn, id: string) => (await activeTransfers(db, id)) > 0;

export async function listConnections(ctx: HostedContext, teamId: string): Promise<CloudConnection[]> {
  const rows = await ctx.db
    .selectFrom('cloud_connections')
    .selectAll()
    .where('team_id', '=', teamId)
    .where('deleted_at', 'is', null)
    .orderBy('created_at')
    .orderBy('id')
    .execute();
  return rows.map((r) => connectionDto(ctx, r));
}

/** The connections attached to each of `portalIds`, as the Portal object lists them. */
export async function portalConnections(db: Conn, portalIds: string[]): Promise<Map<string, PortalCloudConnection[]>> {
  const out = new Map<string, PortalCloudConnection[]>(portalIds.map((id) => [id, []]));
  if (portalIds.length === 0) return out;
  const rows = await db
    .selectFrom('portal_cloud_connections')
    .selectAll()
    .where('portal_id', 'in', portalIds)
    .orderBy('portal_id')
    .orderBy('position')
    .execute();
  for (const r of rows) out.get(r.portal_id)!.push({ id: r.cloud_connection_id, target_action: r.target_action, ...(r.filter_id ? { filter_id: r.filter_id } : {}) });
  return out;
}

/**
 * The full-list rule: `items` becomes the Portal's whole list (connections left
 * out are detached, a filter left out is removed). Every connection must be a
 * svc_to_cloud connection of the Portal's Team, every filter a filter of it; a
 * connection may be listed once. 400 otherwise, and the Portal is unchanged.
 */
export async function setPortalConnections(trx: Conn, teamId: string, portalId: string, items: PortalCloudConnection[]): Promise<void> {
  const ids = items.map((i) => i.id);
  const twice = ids.find((id, i) => ids.indexOf(id) !== i);
  if (twice) throw badRequest(`cloud_connections: ${twice} is listed twice`, 'duplicate_cloud_connection');
  if (ids.length > 0) {
    const known = await trx
      .selectFrom('cloud_connections')
      .select(['id', 'direction'])
      .where('team_id', '=', teamId)
      .where('deleted_at', 'is', null)
      .where('id', 'in', ids)
      .execute();
    const byId = new Map(known.map((r) => [r.id, r]));
    const missing = ids.filter((id) => !byId.has(id));
    if (missing.length > 0) throw badRequest(`cloud_connections: no cloud connection ${missing.join(', ')} in this Team`, 'unknown_cloud_connection');
    const inbound = ids.filter((id) => byId.get(id)!.direction !== 'svc_to_cloud');
    if (inbound.length > 0) throw badRequest(`cloud_connections: ${inbound.join(', ')} bring files in (cloud_to_svc); a Portal delivers only to svc_to_cloud connections`, 'wrong_direction');
    const filterIds = [...new Set(items.map((i) => i.filter_id).filter((f): f is string => !!f))];
    if (filterIds.length > 0) {
      const found = new Set((await trx.selectFrom('filters').select('id').where('team_id', '=', teamId).where('id', 'in', filterIds).execute()).map((r) => r.id));
      const unknown = filterIds.filter((f) => !found.has(f));
      if (unknown.length > 0) throw badRequest(`cloud_connections: no filter ${unknown.join(', ')} in this Team`, 'unknown_filter');
    }
  }
  await trx.deleteFrom('portal_cloud_connections').where('portal_id', '=', portalId).execute();
  if (items.length > 0) {
    await trx
      .insertInto('portal_cloud_connections')
      .values(items.map((i, position) => ({ portal_id: portalId, cloud_connection_id: i.id, target_action: i.target_action, filter_id: i.filter_id ?? null, position })))
      .execute();
  }
}

/**
 * Records what the last transfer found: ok clears last_error. A deleted
 * connection's record no longer matters. A storage gateway that is not
 * connected stays disconnected (the error is kept in last_error).
 */
export async function setConnectionState(db: Conn, id: string, state: 'ok' | 'error', lastError: string | null): Promise<void> {
  await db
    .updateTable('cloud_connections')
    .set({ state: sql<CloudConnectionsTable['state']>`CASE WHEN state = 'disconnected' THEN state ELSE ${state} END`, last_error: lastError })
    .where('id', '=', id)
    .execute();
}
