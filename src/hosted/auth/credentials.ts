// Resolves the credential of a request to a user or a Package grant. Every
// route calls one of these first; objects outside the caller's reach answer 404.
import type { FastifyRequest } from 'fastify';
import type { HostedContext } from '../context.js';
import type { PackagesTable, Role } from '../db/schema.js';
import type { Db } from '../db/open.js';
import { compiledOnce } from '../db/compiled.js';
import { HttpError, conflict, forbidden, gone, notFound, unauthorized } from '../errors.js';
import { hashSecret } from './passwords.js';
import type { PackageAccess } from './tokens.js';
import { nowIso } from '../ids.js';
import { canReadPackage, type Viewer } from '../services/visibility.js';
import { checkGeneration } from '../services/sessions.js';
import { isExpired } from '../services/portals.js';

export interface UserPrincipal {
  userId: string;
  /** Set when the request came with an API key: the key only works in its own Team. */
  apiKey?: { id: string; teamId: string };
}

const header = (req: FastifyRequest, name: string): string | undefined => {
  const v = req.headers[name];
  return typeof v === 'string' && v.length > 0 ? v : undefined;
};

export const hasUserCredential = (req: FastifyRequest) =>
  header(req, 'x-api-key') !== undefined || header(req, 'x-user-token') !== undefined;

/** X-API-KEY or X-User-Token; 401 when absent or invalid. */
export async function authenticateUser(ctx: HostedContext, req: FastifyRequest): Promise<UserPrincipal> {
  const apiKey = header(req, 'x-api-key');
  if (apiKey) {
    const row = await ctx.db.selectFrom('api_keys').selectAll().where('key_hash', '=', hashSecret(apiKey)).executeTakeFirst();
    const now = nowIso();
    if (!row || row.state !== 'active' || (row.expiry && row.expiry <= now)) throw unauthorized('invalid API key');
    await ctx.db.updateTable('api_keys').set({ last_request_at: now }).where('id', '=', row.id).execute();
    return { userId: row.user_id, apiKey: { id: row.id, teamId: row.team_id } };
  }
  const token = header(req, 'x-user-token');
  if (token) {
    const claims = await ctx.tokens.verifyUser(token);
    if (!claims) throw unauthorized('invalid or expired user token');
    // The one read of the user: it also tells whether the token's sessions were ended since.
    const user = await ctx.db.selectFrom('users').select(['id', 'token_generation']).where('id', '=', claims.userId).executeTakeFirst();
    if (!user) throw unauthorized('invalid or expired user token');
    checkGeneration(user, claims);
    return { userId: user.id };
  }
  throw unauthorized('X-API-KEY or X-User-Token required');
}

/**
 * For an answer that lasts (an event stream): whether the request's user token still
 * opens, i.e. is unexpired and its sessions were not ended since. Undefined when the
 * request came with another credential (X-Package-Token, or X-API-KEY, which wins).
 */
export function userTokenRecheck(ctx: HostedContext, req: FastifyRequest): (() => Promise<boolean>) | undefined {
  if (header(req, 'x-api-key') !== undefined || header(req, 'x-package-token') !== undefined || header(req, 'x-user-token') === undefined) return undefined;
  return () => authenticateUser(ctx, req).then(() => true, () => false);
}

/**
 * X-User-Token only, for what a leaked API key must not do (manage keys, change the
 * password, end the sessions): a request with X-API-KEY answers 401 `refusal`.
 */
export async function authenticateUserToken(ctx: HostedContext, req: FastifyRequest, refusal: string): Promise<UserPrincipal> {
  if (req.headers['x-api-key'] !== undefined) throw unauthorized(refusal);
  return authenticateUser(ctx, req);
}

/** The caller's role in a Team; 404 when the caller is not a member (no existence leak). */
export async function teamRole(ctx: HostedContext, who: UserPrincipal, teamId: string, what = 'team'): Promise<Role> {
  if (who.apiKey && who.apiKey.teamId !== teamId) throw notFound(what);
  const m = await ctx.db
    .selectFrom('memberships')
    .select('policy_key')
    .where('team_id', '=', teamId)
    .where('user_id', '=', who.userId)
    .where('approved', '=', 1)
    .executeTakeFirst();
  if (!m) throw notFound(what);
  return m.policy_key;
}

/** The caller as a viewer of one Team's Packages (services/visibility.ts); 404 for a non-member. */
export async function teamViewer(ctx: HostedContext, who: UserPrincipal, teamId: string, what = 'team'): Promise<Viewer> {
  return { userId: who.userId, teamId, role: await teamRole(ctx, who, teamId, what) };
}

export function requireRole(role: Role, allowed: Role[]): void {
  if (!allowed.includes(role)) throw forbidden(`role ${role} may not do this`);
}

/** Authenticates the user and checks Team membership in one step. */
export async function teamMember(ctx: HostedContext, req: FastifyRequest, teamId: string, allowed?: Role[]) {
  const who = await authenticateUser(ctx, req);
  const role = await teamRole(ctx, who, teamId);
  if (allowed) requireRole(role, allowed);
  return { who, role };
}

export type PackageRow = PackagesTable;

export interface PackageGrant {
  pkg: PackageRow;
  access: PackageAccess;
  linkId?: string;
  /** The Link's expiry, read with it: a download URL must not outlive it. */
  linkExpiry?: string | null;
  user?: UserPrincipal;
  /** The X-Package-Token the grant came from. */
  token?: string;
}

// Read for each request a Package token makes (every file of an upload or a download).
const packageById = compiledOnce((db: Db, id: string) => db.selectFrom('packages').selectAll().where('id', '=', id));
const linkById = compiledOnce((db: Db, id: string) => db.selectFrom('links').selectAll().where('id', '=', id));

/**
 * Access to one Package: its token (X-Package-Token), or the API key / user token
 * of a member of its Team (full access). `need` is what the route does: `full`
 * (anything), `upload` (a step of the upload, or the Package's own state: full or
 * an anonymous Portal uploader's token) or `read` (downloads: full or a Link's
 * token). A read-only token from a Link dies with the Link and with the Package;
 * an uploader's with its Portal.
 */
export async function authorizePackage(
  ctx: HostedContext,
  req: FastifyRequest,
  packageId: string,
  need: PackageAccess,
): Promise<PackageGrant> {
  const token = header(req, 'x-package-token');
  let grant: PackageGrant;
  if (token) {
    const claims = await ctx.tokens.verifyPackage(token);
    if (!claims) throw unauthorized('invalid package token');
    if (claims.packageId !== packageId) throw notFound('package');
    const [pkg] = await packageById(ctx.db, packageId);
    if (!pkg) throw notFound('package');
    grant = { pkg, access: claims.access, token, ...(claims.linkId ? { linkId: claims.linkId } : {}) };
    if (claims.linkId) {
      const [link] = await linkById(ctx.db, claims.linkId);
      if (!link || link.package_id !== packageId || !link.active) throw unauthorized('the link of this token is gone');
      if (link.expiry && link.expiry <= nowIso()) throw gone('link expired');
      grant.linkExpiry = link.expiry;
    }
  } else if (hasUserCredential(req)) {
    const who = await authenticateUser(ctx, req);
    const [pkg] = await packageById(ctx.db, packageId);
    if (!pkg) throw notFound('package');
    // A member who may not read it (Teamspaces, private Portals) is told nothing of it.
    const viewer = await teamViewer(ctx, who, pkg.team_id, 'package');
    if (!(await canReadPackage(ctx.db, viewer, pkg.id))) throw notFound('package');
    grant = { pkg, access: 'full', user: who };
  } else {
    throw unauthorized('X-Package-Token required');
  }
  // Full access does everything; upload and read are two separate narrow grants.
  if (grant.access !== 'full' && grant.access !== need) {
    throw forbidden(grant.access === 'read' ? 'this package token is read-only' : "this package token only uploads files to the Package (an anonymous Portal uploader's); it reads nothing of it");
  }
  if (grant.access === 'read' && grant.pkg.state !== 'finalized') throw gone('package is no longer available');
  if (grant.access === 'upload') await requirePortalOpen(ctx, grant.pkg);
  return grant;
}

/**
 * An anonymous uploader's token works only while the Portal it came through takes
 * uploads: a Portal deactivated (409), expired or deleted (410) ends it. The Team
 * keeps the Package and finishes or deletes it with a member's credential.
 */
async function requirePortalOpen(ctx: HostedContext, pkg: PackageRow): Promise<void> {
  const portal = pkg.portal_id
    ? await ctx.db.selectFrom('portals').select(['active', 'expiry_enabled', 'expiry']).where('id', '=', pkg.portal_id).executeTakeFirst()
    : undefined;
  if (!portal) throw new HttpError(410, 'portal_deleted', 'the Portal this Package was sent to has been deleted');
  if (portal.active !== 1) throw conflict('the Portal this Package was sent to is not active', 'portal_inactive');
  if (isExpired(portal)) throw new HttpError(410, 'portal_expired', 'the Portal this Package was sent to has expired');
}
