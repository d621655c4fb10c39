// Links: a secret address to one finalized Package, optionally locked with a
// password, limited in accesses and time. Secrets and passwords are stored hashed.
import { timingSafeEqual } from 'node:crypto';
import type { HostedContext } from '../context.js';
import type { Db } from '../db/open.js';
import type { LinksTable, PackagesTable } from '../db/schema.js';
import type { CreateLinkBody, CreatedLink, LinkInfo, LinkObject } from '../../api/hosted/links.js';
import { hashPassword, hashSecret, verifyPassword } from '../auth/passwords.js';
import { guardSecret } from './lockouts.js';
import { HttpError, badRequest, conflict, gone, notFound, unauthorized } from '../errors.js';
import { newId, newSecret, nowIso } from '../ids.js';

/** The service has no per-Team branding yet; every Link shows this colour. */
export const DEFAULT_PRIMARY_COLOR = '#1f6feb';

export interface NewLink {
  email: string | null;
  accessLimit: number | null;
  expiry: string | null;
  passwordHash: string | null;
  active: boolean;
}

export const linkUrl = (ctx: HostedContext, id: string, secret: string) => `${ctx.config.linkUrl}/${id}?secret=${secret}`;

/** The Package's default access limit as a Link stores it: null means unlimited. */
export const packageAccessLimit = (pkg: Pick<PackagesTable, 'access_limit'>) =>
  pkg.access_limit !== null && pkg.access_limit > 0 ? pkg.access_limit : null;

export const linkObject = (l: LinksTable): LinkObject => ({
  id: l.id,
  package_id: l.package_id,
  email: l.email,
  expiry: l.expiry,
  locked: l.password_hash !== null,
  access_limit: l.access_limit,
  access_count: l.access_count,
  active: l.active === 1,
  created_at: l.created_at,
});

/** Inserts a Link (inside the caller's transaction when given one) and returns it with its secret. */
export async function insertLink(db: Db, packageId: string, l: NewLink): Promise<{ row: LinksTable; secret: string }> {
  const secret = newSecret();
  const row: LinksTable = {
    id: newId('lnk'),
    package_id: packageId,
    secret_hash: hashSecret(secret),
    email: l.email,
    access_limit: l.accessLimit,
    access_count: 0,
    expiry: l.expiry,
    password_hash: l.passwordHash,
    active: l.active ? 1 : 0,
    created_at: nowIso(),
  };
  await db.insertInto('links').values(row).execute();
  return { row, secret };
}

export async function createLink(ctx: HostedContext, pkg: PackagesTable, body: CreateLinkBody): Promise<CreatedLink> {
  if (pkg.state !== 'finalized') throw conflict(`package is ${pkg.state}; links are made for finalized packages`, 'package_not_finalized');
  let expiry: string | null = null;
  if (body.expiry) {
    expiry = new Date(body.expiry).toISOString();
    if (expiry <= nowIso()) throw badRequest('expiry must lie in the future', 'invalid_expiry');
  }
  const passwordHash =
    body.password === undefined ? pkg.password_hash : body.password === '' ? null : await hashPassword(body.password);
  const { row, secret } = await insertLink(ctx.db, pkg.id, {
    email: body.email ?? null,
    accessLimit: body.access_limit === undefined ? packageAccessLimit(pkg) : body.access_limit,
    expiry,
    passwordHash,
    active: body.active ?? true,
  });
  return { ...linkObject(row), secret, url: linkUrl(ctx, row.id, secret) };
}

export async function listLinks(ctx: HostedContext, packageId: string): Promise<LinkObject[]> {
  const rows = await ctx.db.selectFrom('links').selectAll().where('package_id', '=', packageId).orderBy('created_at').orderBy('id').execute();
  return rows.map(linkObject);
}

export async function findLink(ctx: HostedContext, linkId: string): Promise<LinksTable> {
  const link = await ctx.db.selectFrom('links').selectAll().where('id', '=', linkId).executeTakeFirst();
  if (!link) throw notFound('link');
  return link;
}

export async function deleteLink(ctx: HostedContext, linkId: string): Promise<void> {
  await ctx.db.deleteFrom('links').where('id', '=', linkId).execute();
}

const sameHash = (a: string, b: string) => a.length === b.length && timingSafeEqual(Buffer.from(a), Buffer.from(b));

/** The earlier of two optional expiries. */
export const earlier = (a: string | null, b: string | null) => (a === null ? b : b === null ? a : a < b ? a : b);

export interface ResolvedLink {
  info: LinkInfo;
  link: LinksTable;
  pkg: PackagesTable;
}

/**
 * What a recipient's GET of a Link does: checks in the order 404 (unknown, wrong
 * secret, inactive), 410 (Link or Package expired), 401 (password), 403 (access
 * limit), then counts one access and hands out a read-only package token.
 */
export async function resolveLink(
  ctx: HostedContext,
  linkId: string,
  secret: string | undefined,
  password: string | undefined,
  /** The client's address: wrong passwords are counted per Link and address (lockouts.ts). */
  address: string,
): Promise<ResolvedLink> {
  const { link, pkg } = await openableLink(ctx, linkId, secret);
  const hash = link.password_hash;
  if (hash && !(password && (await guardSecret(ctx, { kind: 'link', id: link.id }, address, () => verifyPassword(password, hash))))) {
    throw unauthorized(password ? 'wrong link password' : 'this link needs a password (X-Link-Password)');
  }
  // One statement, so concurrent openings cannot both take the last access.
  const counted = await ctx.db
    .updateTable('links')
    .set((eb) => ({ access_count: eb('access_count', '+', 1) }))
    .where('id', '=', link.id)
    .where((eb) => eb.or([eb('access_limit', 'is', null), eb('access_count', '<', eb.ref('access_limit'))]))
    .executeTakeFirst();
  if (counted.numUpdatedRows === 0n) throw new HttpError(403, 'access_limit_reached', 'this link has reached its access limit');
  const token = await ctx.tokens.signPackage({ packageId: pkg.id, access: 'read', linkId: link.id });
  return { info: linkInfo(link, pkg, token), link: { ...link, access_count: link.access_count + 1 }, pkg };
}

/**
 * The Link page's visit goes on (a reload, another file, a ZIP): the read-only token
 * this Link handed out earlier stands for the access already counted and the password
 * already given. The Link must still be openable (active, not expired); nothing is
 * counted. Null when the token is not this Link's (expired, forged, another Link's).
 */
export async function reopenLink(ctx: HostedContext, linkId: string, secret: string | undefined, token: string): Promise<ResolvedLink | null> {
  const claims = await ctx.tokens.verifyPackage(token);
  if (!claims || claims.access !== 'read' || claims.linkId !== linkId) return null;
  const { link, pkg } = await openableLink(ctx, linkId, secret);
  if (claims.packageId !== pkg.id) return null;
  return { info: linkInfo(link, pkg, token), link, pkg };
}

/** 404 (unknown, wrong secret, inactive), then 410 (Link or Package expired). */
async function openableLink(ctx: HostedContext, linkId: string, secret: string | undefined): Promise<{ link: LinksTable; pkg: PackagesTable }> {
  const link = await ctx.db.selectFrom('links').selectAll().where('id', '=', linkId).executeTakeFirst();
  if (!link || !secret || !sameHash(hashSecret(secret), link.secret_hash) || link.active !== 1) throw notFound('link');
  const pkg = await ctx.db.selectFrom('packages').selectAll().where('id', '=', link.package_id).executeTakeFirst();
  if (!pkg) throw notFound('link');
  const now = nowIso();
  if (link.expiry && link.expiry <= now) throw gone('this link has expired');
  if (pkg.state !== 'finalized' || (pkg.expiry && pkg.expiry <= now)) throw gone('this package is no longer available');
  return { link, pkg };
}

const linkInfo = (link: LinksTable, pkg: PackagesTable, token: string): LinkInfo => ({
  branding: { primary_color: DEFAULT_PRIMARY_COLOR },
  expiry: earlier(link.expiry, pkg.expiry),
  id: link.id,
  name: pkg.name,
  package_id: pkg.id,
  package_size: pkg.size,
  total_files: pkg.total_files,
  package_token: token,
  recipient_email: link.email,
  sender_email: pkg.sender,
  description: pkg.description,
});
