// Custom webhooks of a Team: the wire object, create / update (complete object)
// / delete / list, the checks a webhook passes on write, and the Portal side of
// attachment (the full-list rule of a Portal's custom_webhooks).
import type { Kysely, Transaction } from 'kysely';
import type { HostedContext } from '../context.js';
import type { CustomWebhooksTable, Database, Role } from '../db/schema.js';
import type { CustomWebhook, CustomWebhookBody, WebhookEventType, WebhookRef } from '../../api/hosted/customWebhooks.js';
import { HEADER_NAME, RESERVED_BODY_KEYS } from '../../api/hosted/customWebhooks.js';
import type { UserPrincipal } from '../auth/credentials.js';
import { requireRole, teamRole } from '../auth/credentials.js';
import { badRequest, notFound } from '../errors.js';
import { newId, nowIso } from '../ids.js';
import type { OutboundGuard } from '../net/outbound.js';

type Conn = Kysely<Database> | Transaction<Database>;

/** Headers the service sets itself, or that would break the request if set by hand. */
const RESERVED_HEADERS = new Set(['host', 'content-length', 'content-type', 'transfer-encoding', 'connection', 'keep-alive', 'upgrade', 'te', 'trailer', 'expect', 'proxy-connection']);

export function parseStringMap(json: string): Record<string, string> {
  try {
    const v: unknown = JSON.parse(json);
    if (!v || typeof v !== 'object' || Array.isArray(v)) return {};
    return Object.fromEntries(Object.entries(v).filter((e): e is [string, string] => typeof e[1] === 'string'));
  } catch {
    return {};
  }
}

export function parseEvents(json: string): WebhookEventType[] {
  try {
    const v: unknown = JSON.parse(json);
    return Array.isArray(v) ? (v as WebhookEventType[]) : [];
  } catch {
    return [];
  }
}

export const webhookDto = (row: CustomWebhooksTable, connections: number): CustomWebhook => ({
  id: row.id,
  name: row.name,
  active: row.active === 1,
  events: parseEvents(row.events),
  method: row.method,
  url: row.url,
  headers: parseStringMap(row.headers),
  body_extras: parseStringMap(row.body_extras),
  connections,
  created_at: row.created_at,
  updated_at: row.updated_at,
});

/**
 * http(s) only, with a host, and no user:password (credentials go in headers,
 * where they are not logged); not a private address the operator has not allowed.
 */
function checkUrl(raw: string, guard: OutboundGuard): string {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw badRequest('url is not a valid URL', 'invalid_url');
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw badRequest('url must be an http or https URL', 'invalid_url');
  if (url.username || url.password) throw badRequest('url must not carry a user or password; send a secret in headers', 'invalid_url');
  guard.checkUrl(url, 'url');
  return url.href;
}

function checkHeaders(headers: Record<string, string>): Record<string, string> {
  const seen = new Set<string>();
  for (const name of Object.keys(headers)) {
    const lower = name.toLowerCase();
    if (!HEADER_NAME.test(name)) throw badRequest(`headers: "${name}" is not a valid header name`, 'invalid_header');
    if (RESERVED_HEADERS.has(lower)) throw badRequest(`headers: ${name} is set by the service and cannot be given`, 'invalid_header');
    if (seen.has(lower)) throw badRequest(`headers: ${name} is given twice`, 'invalid_header');
    seen.add(lower);
  }
  return headers;
}

function checkBodyExtras(extras: Record<string, string>): Record<string, string> {
  for (const key of Object.keys(extras)) {
    if (key.length === 0 || key.length > 100 || key.includes('\0')) throw badRequest('body_extras keys are 1 to 100 characters, without NUL', 'invalid_body_extras');
    if ((RESERVED_BODY_KEYS as readonly string[]).includes(key)) throw badRequest(`body_extras may not use "${key}": the event body has it`, 'invalid_body_extras');
  }
  return extras;
}

type Settings = Pick<CustomWebhooksTable, 'name' | 'active' | 'events' | 'method' | 'url' | 'headers' | 'body_extras'>;

/** The stored settings after `body` is applied to `base`; omitted optional fields keep their value. */
function settingsFrom(guard: OutboundGuard, body: CustomWebhookBody, base?: Settings): Settings {
  return {
    name: body.name ?? base?.name ?? '',
    active: body.active ? 1 : 0,
    events: JSON.stringify(body.events),
    method: body.method,
    url: checkUrl(body.url, guard),
    headers: body.headers !== undefined ? JSON.stringify(checkHeaders(body.headers)) : (base?.headers ?? '{}'),
    body_extras: body.body_extras !== undefined ? JSON.stringify(checkBodyExtras(body.body_extras)) : (base?.body_extras ?? '{}'),
  };
}

async function connectionsOf(db: Conn, webhookIds: string[]): Promise<Map<string, number>> {
  if (webhookIds.length === 0) return new Map();
  const rows = await db
    .selectFrom('portal_custom_webhooks')
    .select((eb) => ['custom_webhook_id', eb.fn.countAll<number | string>().as('n')])
    .where('custom_webhook_id', 'in', webhookIds)
    .groupBy('custom_webhook_id')
    .execute();
  return new Map(rows.map((r) => [r.custom_webhook_id, Number(r.n)]));
}

export async function toDto(ctx: HostedContext, row: CustomWebhooksTable): Promise<CustomWebhook> {
  return webhookDto(row, (await connectionsOf(ctx.db, [row.id])).get(row.id) ?? 0);
}

/** The webhook when the caller belongs to its Team (404 otherwise), checked against `allowed` roles. */
export async function memberWebhook(ctx: HostedContext, who: UserPrincipal, webhookId: string, allowed?: Role[]): Promise<CustomWebhooksTable> {
  const row = await ctx.db.selectFrom('custom_webhooks').selectAll().where('id', '=', webhookId).executeTakeFirst();
  if (!row) throw notFound('custom webhook');
  const role = await teamRole(ctx, who, row.team_id, 'custom webhook');
  if (allowed) requireRole(role, allowed);
  return row;
}

export async function createWebhook(ctx: HostedContext, teamId: string, body: CustomWebhookBody): Promise<CustomWebhook> {
  const now = nowIso();
  const row: CustomWebhooksTable = { id: newId('cwh'), team_id: teamId, ...settingsFrom(ctx.outbound, body), created_at: now, updated_at: now };
  await ctx.db.insertInto('custom_webhooks').values(row).execute();
  return webhookDto(row, 0);
}

/** PUT of the complete webhook. Events already raised keep the request they were composed with. */
export async function updateWebhook(ctx: HostedContext, hook: CustomWebhooksTable, body: CustomWebhookBody): Promise<CustomWebhook> {
  const { id: _id, team_id: _team, created_at: _created, updated_at: _updated, ...current } = hook;
  const set = { ...settingsFrom(ctx.outbound, body, current), updated_at: nowIso() };
  const res = await ctx.db.updateTable('custom_webhooks').set(set).where('id', '=', hook.id).executeTakeFirst();
  if (res.numUpdatedRows === 0n) throw notFound('custom webhook');
  return toDto(ctx, { ...hook, ...set });
}

/** Detaches it from every Portal; events already raised are still delivered. */
export async function deleteWebhook(ctx: HostedContext, webhookId: string): Promise<void> {
  const res = await ctx.db.deleteFrom('custom_webhooks').where('id', '=', webhookId).executeTakeFirst();
  if (res.numDeletedRows === 0n) throw notFound('custom webhook');
}

export async function listWebhooks(ctx: HostedContext, teamId: string): Promise<CustomWebhook[]> {
  const rows = await ctx.db.selectFrom('custom_webhooks').selectAll().where('team_id', '=', teamId).orderBy('created_at').orderBy('id').execute();
  const counts = await connectionsOf(ctx.db, rows.map((r) => r.id));
  return rows.map((r) => webhookDto(r, counts.get(r.id) ?? 0));
}

/** The webhooks attached to each of `portalIds`, as the Portal object lists them. */
export async function portalWebhooks(db: Conn, portalIds: string[]): Promise<Map<string, WebhookRef[]>> {
  const out = new Map<string, WebhookRef[]>(portalIds.map((id) => [id, []]));
  if (portalIds.length === 0) return out;
  const rows = await db
    .selectFrom('portal_custom_webhooks')
    .select(['portal_id', 'custom_webhook_id'])
    .where('portal_id', 'in', portalIds)
    .orderBy('portal_id')
    .orderBy('custom_webhook_id')
    .execute();
  for (const r of rows) out.get(r.portal_id)!.push({ id: r.custom_webhook_id });
  return out;
}

/**
 * The full-list rule: `refs` becomes the Portal's whole list (omitted webhooks
 * are detached). Every id must name a webhook of the Portal's Team (400
 * otherwise, the same for another Team's id). Run inside the Portal's write.
 */
export async function setPortalWebhooks(trx: Conn, teamId: string, portalId: string, refs: WebhookRef[]): Promise<void> {
  const ids = [...new Set(refs.map((r) => r.id))];
  if (ids.length > 0) {
    const known = await trx.selectFrom('custom_webhooks').select('id').where('team_id', '=', teamId).where('id', 'in', ids).execute();
    const found = new Set(known.map((r) => r.id));
    const missing = ids.filter((id) => !found.has(id));
    if (missing.length > 0) throw badRequest(`custom_webhooks: no webhook ${missing.join(', ')} in this Team`, 'unknown_custom_webhook');
  }
  await trx.deleteFrom('portal_custom_webhooks').where('portal_id', '=', portalId).execute();
  if (ids.length > 0) await trx.insertInto('portal_custom_webhooks').values(ids.map((id) => ({ portal_id: portalId, custom_webhook_id: id }))).execute();
}
