// Portals of a Team: the wire object, create / update (full object), get,
// the paged /v1.1 list, delete, the public view by subdomain, and who may see one.
import type { HostedContext } from '../context.js';
import { containsIgnoringCase } from '../db/dialect.js';
import type { PortalsTable, Role } from '../db/schema.js';
import type { Portal, PortalBody, PortalListPage, PortalListQuery, PublicPortal } from '../../api/hosted/portals.js';
import type { TagSummary } from '../../api/hosted/tags.js';
import type { WebhookRef } from '../../api/hosted/customWebhooks.js';
import type { PortalCloudConnection } from '../../api/hosted/cloudConnections.js';
import type { UserPrincipal } from '../auth/credentials.js';
import { requireRole, teamRole } from '../auth/credentials.js';
import { hashPassword, verifyPassword } from '../auth/passwords.js';
import { guardSecret } from './lockouts.js';
import { patternProblem } from '../../api/hosted/patterns.js';
import { HttpError, badRequest, conflict, gone, notFound, unauthorized } from '../errors.js';
import { newId, nowIso } from '../ids.js';
import { isValidSubdomain, normalizeEmail } from './accounts.js';
import { parseRecipients } from './packages.js';
import { resolveTagRef } from './tags.js';
import { portalWebhooks, setPortalWebhooks } from './customWebhooks.js';
import { portalConnections, setPortalConnections } from './cloudConnections.js';
import { keepPortalPackagesPrivate, teamspaceOfTeam } from './visibility.js';
import { portalForm, uploaderView, uploaderViews, type UploaderForm } from './forms.js';
import type { TermsOfService } from '../../api/hosted/forms.js';

const flag = (b: boolean) => (b ? 1 : 0);

export const parseList = parseRecipients;

export function portalDto(row: PortalsTable, tag: TagSummary | null, webhooks: WebhookRef[], connections: PortalCloudConnection[], form: UploaderForm = uploaderView(undefined)): Portal {
  return {
    id: row.id,
    team_id: row.team_id,
    name: row.name,
    subdomain: row.subdomain,
    message: row.message,
    has_access_code: row.has_access_code === 1,
    active: row.active === 1,
    recipients: parseList(row.recipients),
    has_download_password: row.has_download_password === 1,
    custom_expiry_days: row.custom_expiry_days,
    tag,
    access_level: row.access_level,
    teamspace_id: row.teamspace_id,
    package_size_restriction_enabled: row.package_size_restriction_enabled === 1,
    max_package_size: row.max_package_size,
    max_file_size: row.max_file_size,
    max_file_count: row.max_file_count,
    file_type_restriction_enabled: row.file_type_restriction_enabled === 1,
    file_types: parseList(row.file_types),
    expiry_enabled: row.expiry_enabled === 1,
    expiry: row.expiry,
    package_name_format: row.package_name_format,
    user_authentication_required: row.user_authentication_required === 1,
    custom_webhooks: webhooks,
    cloud_connections: connections,
    ...termsOf(row),
    ...form,
    created_at: row.created_at,
    updated_at: row.updated_at,
  };
}

async function tagOf(ctx: HostedContext, tagId: string | null): Promise<TagSummary | null> {
  if (!tagId) return null;
  return (await ctx.db.selectFrom('tags').select(['id', 'name']).where('id', '=', tagId).executeTakeFirst()) ?? null;
}

export const toDto = async (ctx: HostedContext, row: PortalsTable) =>
  portalDto(row, await tagOf(ctx, row.tag_id), (await portalWebhooks(ctx.db, [row.id])).get(row.id)!, (await portalConnections(ctx.db, [row.id])).get(row.id)!, uploaderView(await portalForm(ctx.db, row.id)));

/** The Portal's terms of service as the API shows them. */
function termsOf(row: PortalsTable): { terms_of_service_enabled: boolean; terms_of_service: TermsOfService | null } {
  return { terms_of_service_enabled: row.terms_of_service_enabled === 1, terms_of_service: row.terms_of_service ? (JSON.parse(row.terms_of_service) as TermsOfService) : null };
}

/**
 * The cloud connections a create or update sets: only with configure_cloud_connections
 * true, and then the list is required (an absent one would detach everything by accident).
 */
function connectionsToSet(body: PortalBody): PortalCloudConnection[] | undefined {
  if (body.configure_cloud_connections !== true) return undefined;
  if (body.cloud_connections === undefined) throw badRequest('cloud_connections is required with configure_cloud_connections: list every connection to keep ([] for none)', 'cloud_connections_required');
  return body.cloud_connections;
}

export async function findPortal(ctx: HostedContext, portalId: string): Promise<PortalsTable | undefined> {
  return ctx.db.selectFrom('portals').selectAll().where('id', '=', portalId).executeTakeFirst();
}

/** The Portal when the caller belongs to its Team (404 otherwise), checked against `allowed` roles. */
export async function memberPortal(ctx: HostedContext, who: UserPrincipal, portalId: string, allowed?: Role[]): Promise<PortalsTable> {
  const portal = await findPortal(ctx, portalId);
  if (!portal) throw notFound('portal');
  const role = await teamRole(ctx, who, portal.team_id, 'portal');
  if (allowed) requireRole(role, allowed);
  return portal;
}

/** Whether the caller is a member of the Portal's Team; never throws for another Team. */
export async function isMember(ctx: HostedContext, who: UserPrincipal | undefined, portal: PortalsTable): Promise<boolean> {
  if (!who) return false;
  try {
    await teamRole(ctx, who, portal.team_id, 'portal');
    return true;
  } catch (err) {
    if (err instanceof HttpError && err.status === 404) return false;
    throw err;
  }
}

export const isExpired = (p: Pick<PortalsTable, 'expiry_enabled' | 'expiry'>, now = nowIso()) =>
  p.expiry_enabled === 1 && p.expiry !== null && p.expiry <= now;

/**
 * X-Access-Code arrives URI-encoded; a value that is not valid encoding is taken
 * as written. 401 when the code is missing or wrong (it is a credential); 429 while
 * the client's address (clientAddress in ratelimit/plugin.ts) is held back after
 * wrong codes (lockouts.ts). Every route that takes an access code checks it here.
 */
export async function checkAccessCode(ctx: HostedContext, portal: PortalsTable, header: string | undefined, address: string): Promise<void> {
  if (!portal.access_code_hash) return;
  if (header === undefined) throw new HttpError(401, 'access_code_required', 'this Portal needs its access code (X-Access-Code)');
  let code = header;
  try {
    code = decodeURIComponent(header);
  } catch {
    // not URI-encoded: use as is
  }
  const hash = portal.access_code_hash;
  if (!(await guardSecret(ctx, { kind: 'portal', id: portal.id }, address, () => verifyPassword(code, hash)))) throw new HttpError(401, 'invalid_access_code', 'wrong access code');
}

/**
 * GET /v1/portals/{id} by access code: only an active Portal that has a code can be
 * read this way, and only its public view (the code opens uploads, not the Team's
 * settings: recipients, webhooks, connections), as by subdomain; 410 once expired.
 */
export async function portalByAccessCode(ctx: HostedContext, portalId: string, header: string | undefined, address: string): Promise<PublicPortal> {
  if (header === undefined) throw unauthorized('X-API-KEY or X-Access-Code required');
  const portal = await findPortal(ctx, portalId);
  if (!portal || portal.active !== 1) throw notFound('portal');
  if (!portal.access_code_hash) throw unauthorized('this Portal has no access code; use X-API-KEY');
  await checkAccessCode(ctx, portal, header, address);
  if (isExpired(portal)) throw gone('this Portal has expired');
  return publicView(ctx, portal);
}

type Settings = Omit<PortalsTable, 'id' | 'team_id' | 'tag_id' | 'created_at' | 'updated_at'>;

const DEFAULTS: Settings = {
  name: '', subdomain: '', message: '', access_code_hash: null, has_access_code: 0, active: 0, recipients: '[]',
  download_password_hash: null, has_download_password: 0, custom_expiry_days: 0, access_level: 'regular',
  package_size_restriction_enabled: 0, max_package_size: null, max_file_size: null, max_file_count: null,
  file_type_restriction_enabled: 0, file_types: '[]', expiry_enabled: 0, expiry: null, package_name_format: '',
  user_authentication_required: 0, teamspace_id: null, terms_of_service_enabled: 0, terms_of_service: null,
};

/**
 * A secret switched by its has_ flag: a given secret sets it (unless the flag is
 * false), false clears it, true without a secret keeps the current one.
 */
async function secretSetting(has: boolean | undefined, secret: string | undefined, current: string | null, what: string): Promise<string | null> {
  if (has === false) return null;
  if (secret !== undefined) return hashPassword(secret);
  if (has === true && !current) throw badRequest(`${what} is required when has_${what} is true`);
  return current;
}

/** The stored settings after `body` is applied to `base` (omitted fields keep their value); 400 on bad input. */
async function settingsFrom(ctx: HostedContext, teamId: string, body: PortalBody, base: Settings): Promise<Settings> {
  const subdomain = body.subdomain.toLowerCase();
  if (!isValidSubdomain(subdomain)) throw badRequest('subdomain must be a DNS label: letters, digits and inner hyphens, at most 63', 'invalid_subdomain');
  const s: Settings = { ...base, name: body.name, subdomain };
  if (body.message !== undefined) s.message = body.message;
  if (body.active !== undefined) s.active = flag(body.active);
  if (body.recipients !== undefined) {
    const list = [...new Set(body.recipients.map(normalizeEmail))];
    const team = await ctx.db.selectFrom('teams').select('max_email_recipients').where('id', '=', teamId).executeTakeFirstOrThrow();
    if (list.length > team.max_email_recipients) throw badRequest(`at most ${team.max_email_recipients} recipients are allowed`, 'too_many_recipients');
    s.recipients = JSON.stringify(list);
  }
  if (body.custom_expiry_days !== undefined) s.custom_expiry_days = body.custom_expiry_days;
  if (body.access_level !== undefined) s.access_level = body.access_level;
  if (body.teamspace_id !== undefined) s.teamspace_id = await teamspaceOfTeam(ctx.db, teamId, body.teamspace_id);
  if (body.package_size_restriction_enabled !== undefined) s.package_size_restriction_enabled = flag(body.package_size_restriction_enabled);
  if (body.max_package_size !== undefined) s.max_package_size = body.max_package_size;
  if (body.max_file_size !== undefined) s.max_file_size = body.max_file_size;
  if (body.max_file_count !== undefined) s.max_file_count = body.max_file_count;
  if (body.file_type_restriction_enabled !== undefined) s.file_type_restriction_enabled = flag(body.file_type_restriction_enabled);
  if (body.file_types !== undefined) s.file_types = JSON.stringify([...new Set(body.file_types.map((t) => t.toLowerCase()))]);
  if (s.file_type_restriction_enabled && parseList(s.file_types).length === 0) {
    throw badRequest('file_types must list at least one extension when file_type_restriction_enabled is true');
  }
  if (body.expiry_enabled !== undefined) s.expiry_enabled = flag(body.expiry_enabled);
  if (body.expiry !== undefined) s.expiry = body.expiry === null ? null : new Date(body.expiry).toISOString();
  if (s.expiry_enabled && !s.expiry) throw badRequest('expiry is required when expiry_enabled is true');
  if (body.package_name_format !== undefined) {
    const problem = patternProblem(body.package_name_format);
    if (problem) throw badRequest(`package_name_format is not a regular expression RE2 runs: ${problem}`, 'invalid_package_name_format');
    s.package_name_format = body.package_name_format;
  }
  if (body.user_authentication_required !== undefined) s.user_authentication_required = flag(body.user_authentication_required);
  // Terms: omitted keep their value, null clears them; enabled terms need a title and a text.
  if (body.terms_of_service !== undefined) s.terms_of_service = body.terms_of_service === null ? null : JSON.stringify({ title: body.terms_of_service.title, text: body.terms_of_service.text });
  if (body.terms_of_service_enabled !== undefined) s.terms_of_service_enabled = flag(body.terms_of_service_enabled);
  if (s.terms_of_service_enabled && !s.terms_of_service) throw badRequest('terms_of_service {title, text} is required when terms_of_service_enabled is true', 'terms_required');
  // Secrets last: hashing is slow, and it must not run for a body refused above.
  s.access_code_hash = await secretSetting(body.has_access_code, body.access_code, base.access_code_hash, 'access_code');
  s.has_access_code = flag(s.access_code_hash !== null);
  s.download_password_hash = await secretSetting(body.has_download_password, body.download_password, base.download_password_hash, 'download_password');
  s.has_download_password = flag(s.download_password_hash !== null);
  return s;
}

/** 409 when another Portal holds the subdomain (checked inside the writing transaction). */
async function claimSubdomain(db: HostedContext['db'], subdomain: string, exceptId?: string): Promise<void> {
  let q = db.selectFrom('portals').select('id').where('subdomain', '=', subdomain);
  if (exceptId) q = q.where('id', '!=', exceptId);
  if (await q.executeTakeFirst()) throw conflict(`the subdomain "${subdomain}" is taken`, 'subdomain_taken');
}

export async function createPortal(ctx: HostedContext, teamId: string, body: PortalBody): Promise<Portal> {
  const s = await settingsFrom(ctx, teamId, body, DEFAULTS);
  const now = nowIso();
  const row = await ctx.db.transaction().execute(async (trx) => {
    await claimSubdomain(trx, s.subdomain);
    const tag = await resolveTagRef(ctx, teamId, body.tag, trx);
    const row: PortalsTable = { id: newId('prt'), team_id: teamId, ...s, tag_id: tag?.id ?? null, created_at: now, updated_at: now };
    await trx.insertInto('portals').values(row).execute();
    if (body.custom_webhooks !== undefined) await setPortalWebhooks(trx, teamId, row.id, body.custom_webhooks);
    const connections = connectionsToSet(body);
    if (connections) await setPortalConnections(trx, teamId, row.id, connections);
    return row;
  });
  return toDto(ctx, row);
}

/** PUT of the complete Portal: omitted fields keep their value, except tag (omitted removes it). */
export async function updatePortal(ctx: HostedContext, portal: PortalsTable, body: PortalBody): Promise<Portal> {
  const { id: _id, team_id: _team, tag_id: _tag, created_at: _created, updated_at: _updated, ...current } = portal;
  const s = await settingsFrom(ctx, portal.team_id, body, current);
  const row = await ctx.db.transaction().execute(async (trx) => {
    await claimSubdomain(trx, s.subdomain, portal.id);
    const tag = await resolveTagRef(ctx, portal.team_id, body.tag, trx);
    const res = await trx.updateTable('portals').set({ ...s, tag_id: tag?.id ?? null, updated_at: nowIso() }).where('id', '=', portal.id).executeTakeFirst();
    if (Number(res.numUpdatedRows) === 0) throw notFound('portal');
    // The spec's full-list rule: a given list replaces the attached webhooks; an omitted one keeps them.
    if (body.custom_webhooks !== undefined) await setPortalWebhooks(trx, portal.team_id, portal.id, body.custom_webhooks);
    // Cloud connections: the same rule, switched by configure_cloud_connections (without it they are unchanged).
    const connections = connectionsToSet(body);
    if (connections) await setPortalConnections(trx, portal.team_id, portal.id, connections);
    return trx.selectFrom('portals').selectAll().where('id', '=', portal.id).executeTakeFirstOrThrow();
  });
  return toDto(ctx, row);
}

/** Packages received through the Portal stay in the Team; they keep its id. */
export async function deletePortal(ctx: HostedContext, portalId: string): Promise<void> {
  await ctx.db.transaction().execute(async (trx) => {
    await keepPortalPackagesPrivate(trx, portalId);
    const res = await trx.deleteFrom('portals').where('id', '=', portalId).executeTakeFirst();
    if (Number(res.numDeletedRows) === 0) throw notFound('portal');
  });
}

const csv = (v: string | undefined) => (v ?? '').split(',').map((s) => s.trim()).filter(Boolean);

export async function listPortals(ctx: HostedContext, teamId: string, query: PortalListQuery): Promise<PortalListPage> {
  const { page, limit } = query;
  let base = ctx.db.selectFrom('portals').where('team_id', '=', teamId);
  if (query.name) base = base.where((eb) => containsIgnoringCase(eb.ref('name'), query.name!));
  if (query.subdomain) base = base.where((eb) => containsIgnoringCase(eb.ref('subdomain'), query.subdomain!));
  const tags = csv(query.tags);
  if (tags.length) base = base.where('tag_id', 'in', tags);
  const spaces = csv(query.teamspaces);
  if (spaces.length) base = base.where('teamspace_id', 'in', spaces);
  const { n } = await base.select((eb) => eb.fn.countAll<number | string>().as('n')).executeTakeFirstOrThrow();

  // Default: by name. Names sort case-insensitively; the id breaks ties so pages never overlap.
  const desc = query.sort?.startsWith('-') ?? false;
  const field = (query.sort?.replace(/^-/, '') || 'name') as 'name' | 'created_at' | 'active';
  const dir = desc ? 'desc' : 'asc';
  let q = base.selectAll();
  q = field === 'name' ? q.orderBy((eb) => eb.fn('lower', ['name']), dir) : q.orderBy(field, dir);
  const rows = await q.orderBy('id', dir).limit(limit).offset((page - 1) * limit).execute();

  const tagIds = [...new Set(rows.map((r) => r.tag_id).filter((t): t is string => t !== null))];
  const found = tagIds.length ? await ctx.db.selectFrom('tags').select(['id', 'name']).where('id', 'in', tagIds).execute() : [];
  const byId = new Map(found.map((t) => [t.id, t]));
  const hooks = await portalWebhooks(ctx.db, rows.map((r) => r.id));
  const connections = await portalConnections(ctx.db, rows.map((r) => r.id));
  const forms = await uploaderViews(ctx.db, rows.map((r) => r.id));
  const records = rows.map((r) => portalDto(r, r.tag_id ? (byId.get(r.tag_id) ?? null) : null, hooks.get(r.id)!, connections.get(r.id)!, forms.get(r.id)));
  return { metadata: { total: Number(n), page, limit }, records };
}

/** The limits in force, as the public view and the upload checks see them. */
export function restrictionsOf(p: PortalsTable): PublicPortal['restrictions'] {
  const r: PublicPortal['restrictions'] = {};
  if (p.package_size_restriction_enabled === 1) {
    if (p.max_package_size !== null) r.max_package_size = p.max_package_size;
    if (p.max_file_size !== null) r.max_file_size = p.max_file_size;
    if (p.max_file_count !== null) r.max_file_count = p.max_file_count;
  }
  if (p.file_type_restriction_enabled === 1) r.file_types = parseList(p.file_types);
  if (p.package_name_format) r.package_name_format = p.package_name_format;
  return r;
}

/** GET /v1/subdomains/portals/{subdomain}: 404 unless active, 410 once expired. */
export async function publicPortal(ctx: HostedContext, subdomain: string): Promise<PublicPortal> {
  const p = await ctx.db.selectFrom('portals').selectAll().where('subdomain', '=', subdomain.toLowerCase()).executeTakeFirst();
  if (!p || p.active !== 1) throw notFound('portal');
  if (isExpired(p)) throw gone('this Portal has expired');
  return publicView(ctx, p);
}

/** What anyone who is not a member of the Team sees of a Portal: what an upload page needs, nothing of the Team. */
async function publicView(ctx: HostedContext, p: PortalsTable): Promise<PublicPortal> {
  return {
    id: p.id,
    name: p.name,
    subdomain: p.subdomain,
    message: p.message,
    has_access_code: p.has_access_code === 1,
    user_authentication_required: p.user_authentication_required === 1,
    ...uploaderView(await portalForm(ctx.db, p.id)),
    terms_of_service_enabled: p.terms_of_service_enabled === 1,
    terms_of_service: p.terms_of_service_enabled === 1 ? termsOf(p).terms_of_service : null,
    restrictions: restrictionsOf(p),
  };
}
