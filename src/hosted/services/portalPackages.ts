// Packages that arrive through a Portal: who may create one, the Package it
// becomes, the Portal's limits while files are registered and finalized, and
// whom the Package is delivered to at finalize.
import type { HostedContext } from '../context.js';
import type { Db } from '../db/open.js';
import { lockRow } from '../db/dialect.js';
import type { FilesTable, PackagesTable, PortalsTable } from '../db/schema.js';
import type { CreatePortalPackageBody } from '../../api/hosted/portals.js';
import type { Package } from '../../api/hosted/packages.js';
import type { UserPrincipal } from '../auth/credentials.js';
import { HttpError, badRequest, conflict, forbidden, gone, notFound, unauthorized } from '../errors.js';
import { newId, nowIso } from '../ids.js';
import { normalizeEmail } from './accounts.js';
import { CHUNK_LIMITS } from './chunks.js';
import { packageDto } from './packages.js';
import { checkAccessCode, findPortal, isExpired, isMember, parseList, restrictionsOf } from './portals.js';
import { eventsRaised, raisePackageEvent } from './webhookEvents.js';
import { claimResponse, packageFields, responseForPackage } from './formResponses.js';
import { packagePayload, raiseEvent } from './events.js';
import { patternFound, patternProblem } from '../../api/hosted/patterns.js';

export interface Uploader {
  /** A user credential that came with the request (a Team member skips the access code). */
  who?: UserPrincipal;
  /** The raw X-Access-Code header. */
  accessCode?: string;
  /** The client's address, for the access code's lockout. */
  address: string;
}

const overLimit = (code: string, message: string) => new HttpError(413, code, message);

/**
 * Who may send to a Portal (a Package, a form response). Order of refusals:
 * unknown (404), inactive (404, or 409 to a member), expired (410), member
 * required (401/403), access code (401).
 */
export async function admitUploader(ctx: HostedContext, portalId: string, uploader: Uploader): Promise<{ portal: PortalsTable; member: boolean }> {
  const portal = await findPortal(ctx, portalId);
  if (!portal) throw notFound('portal');
  const member = await isMember(ctx, uploader.who, portal);
  if (portal.active !== 1) throw member ? conflict('this Portal is not active', 'portal_inactive') : notFound('portal');
  if (isExpired(portal)) throw gone('this Portal has expired');
  if (portal.user_authentication_required === 1 && !member) {
    if (uploader.who) throw forbidden("only members of the Portal's Team may upload to it");
    throw unauthorized('this Portal requires a signed-in Team member (X-API-KEY or X-User-Token)');
  }
  if (!member) await checkAccessCode(ctx, portal, uploader.accessCode, uploader.address);
  return { portal, member };
}

/**
 * POST /v1/portals/{id}/packages: admitUploader's refusals, then the body against
 * the Portal's rules (400): terms of service, form response, name format, chunk size.
 */
export async function createPortalPackage(ctx: HostedContext, portalId: string, uploader: Uploader, body: CreatePortalPackageBody): Promise<Package> {
  const { portal, member } = await admitUploader(ctx, portalId, uploader);
  if (portal.terms_of_service_enabled === 1 && body.terms_accepted !== true) {
    throw badRequest("this Portal's terms of service must be accepted (terms_accepted: true)", 'terms_not_accepted');
  }
  const response = await responseForPackage(ctx.db, portal, body.form_data_id);
  // The form's answers win: they are what the uploader filled in, and what is delivered.
  const fromForm = response ? packageFields(response) : {};
  const name = fromForm.name ?? body.name;
  const description = fromForm.description ?? body.description;
  const sender = fromForm.sender ?? body.sender;
  const missing = [name === undefined && 'name', description === undefined && 'description', sender === undefined && 'sender'].filter(Boolean);
  if (missing.length) throw badRequest(`body must have ${missing.join(', ')} (or a form response that answers them)`, 'validation_failed');
  const format = portal.package_name_format;
  // A format stored before formats ran on RE2 may be one RE2 refuses (a lookahead): no name can be checked against it.
  if (format && patternProblem(format)) throw conflict("this Portal's package_name_format is not one RE2 runs; its Team must change it", 'invalid_package_name_format');
  if (format && !patternFound(format, name!)) {
    throw badRequest(`name must match the Portal's format ${portal.package_name_format}`, 'package_name_format');
  }
  const chunkSize = body.chunk_size ?? 0;
  if (chunkSize !== 0 && (chunkSize < CHUNK_LIMITS.min_chunk_size || chunkSize > CHUNK_LIMITS.max_chunk_size)) {
    throw badRequest(`chunk_size must be 0 or between ${CHUNK_LIMITS.min_chunk_size} and ${CHUNK_LIMITS.max_chunk_size}`);
  }
  const team = await ctx.db.selectFrom('teams').selectAll().where('id', '=', portal.team_id).executeTakeFirstOrThrow();
  const accessLimit = team.download_limit_enabled ? team.download_limit_default : 0;
  const now = nowIso();
  const row: PackagesTable = {
    id: newId('pkg'),
    team_id: portal.team_id,
    portal_id: portal.id,
    // The Portal's Teamspace, as it is now: who may see the Package (services/visibility.ts).
    teamspace_id: portal.teamspace_id,
    created_by: member ? uploader.who!.userId : null,
    name: name!,
    description: description!,
    sender: normalizeEmail(sender!),
    recipients: JSON.stringify(parseList(portal.recipients)),
    state: 'new',
    size: 0,
    total_files: 0,
    access_limit: accessLimit > 0 ? accessLimit : null,
    password_hash: portal.download_password_hash,
    contains_virus: 0,
    custom_expiry: 0,
    custom_metadata_id: response?.id ?? null,
    expiry: null,
    unlimited_storage: portal.custom_expiry_days === -1 ? 1 : 0,
    chunk_size: chunkSize,
    tag_id: portal.tag_id,
    finalized_at: null,
    objects_deleted: 0,
    created_at: now,
    updated_at: now,
    terms_accepted_at: portal.terms_of_service_enabled === 1 ? now : null,
  };
  const events = await ctx.db.transaction().execute(async (trx) => {
    await trx.insertInto('packages').values(row).execute();
    if (response) await claimResponse(trx, response.id, row.id);
    await raiseEvent(ctx, trx, 'package.created', row, packagePayload(row), now);
    return raisePackageEvent(trx, 'package.created', row);
  });
  eventsRaised(ctx, events);
  // Anyone may create a Portal Package: without a member's credential the token only adds files.
  return packageDto(ctx, row, undefined, member ? 'full' : 'upload');
}

type Entry = { kind: FilesTable['kind']; name: string; size?: number | undefined };

/** Count of the Package's entries (files and folders) and bytes of its files, but `exceptFileId`. */
async function filesSoFar(db: Db, packageId: string, exceptFileId?: string): Promise<{ count: number; bytes: number }> {
  let q = db
    .selectFrom('files')
    .select((eb) => [eb.fn.countAll<number>().as('count'), eb.fn.coalesce(eb.fn.sum<number>('size'), eb.lit(0)).as('bytes')])
    .where('package_id', '=', packageId);
  if (exceptFileId) q = q.where('id', '!=', exceptFileId);
  const r = await q.executeTakeFirstOrThrow();
  return { count: Number(r.count), bytes: Number(r.bytes) };
}

/**
 * An entry about to be registered in a Portal Package, against the Portal's limits
 * as they are now. Run it inside the registration transaction, after a replaced
 * entry is removed, so concurrent registrations cannot overrun a limit together.
 * Folders have no type or size, but count toward max_file_count like files: each
 * is a row, an event and a ZIP entry, and would otherwise be free without end.
 */
export async function checkPortalFile(db: Db, pkg: Pick<PackagesTable, 'id' | 'portal_id'>, entry: Entry): Promise<void> {
  if (!pkg.portal_id) return;
  const portal = await db.selectFrom('portals').selectAll().where('id', '=', pkg.portal_id).executeTakeFirst();
  if (!portal) return;
  const r = restrictionsOf(portal);
  const isFile = entry.kind === 'file';
  if (isFile) {
    const lower = entry.name.toLowerCase();
    if (r.file_types && !r.file_types.some((t) => lower.endsWith(t))) {
      throw overLimit('file_type_not_allowed', `this Portal accepts only ${r.file_types.join(', ')} files`);
    }
    if ((r.max_file_size !== undefined || r.max_package_size !== undefined) && entry.size === undefined) {
      throw badRequest('this Portal limits sizes: size is required', 'size_required');
    }
    if (r.max_file_size !== undefined && entry.size! > r.max_file_size) {
      throw overLimit('file_too_large', `files may be at most ${r.max_file_size} bytes on this Portal`);
    }
  }
  const sizeCounts = isFile && r.max_package_size !== undefined;
  if (r.max_file_count === undefined && !sizeCounts) return;
  // Concurrent registrations to one Package take turns here (PostgreSQL; SQLite serializes writers anyway).
  await lockRow(db, 'packages', pkg.id);
  const so = await filesSoFar(db, pkg.id);
  if (r.max_file_count !== undefined && so.count + 1 > r.max_file_count) {
    throw overLimit('too_many_files', `a Package may hold at most ${r.max_file_count} entries (files and folders) on this Portal`);
  }
  if (sizeCounts && so.bytes + entry.size! > r.max_package_size!) {
    throw overLimit('package_too_large', `a Package may hold at most ${r.max_package_size} bytes on this Portal`);
  }
}

/** At file finalize the real size is known: it must still fit the Portal's size limits. */
export async function checkPortalFinalSize(db: Db, pkg: Pick<PackagesTable, 'id' | 'portal_id'>, fileId: string, size: number): Promise<void> {
  if (!pkg.portal_id) return;
  const portal = await db.selectFrom('portals').selectAll().where('id', '=', pkg.portal_id).executeTakeFirst();
  if (!portal) return;
  const r = restrictionsOf(portal);
  if (r.max_file_size !== undefined && size > r.max_file_size) {
    throw overLimit('file_too_large', `files may be at most ${r.max_file_size} bytes on this Portal`);
  }
  if (r.max_package_size !== undefined && (await filesSoFar(db, pkg.id, fileId)).bytes + size > r.max_package_size) {
    throw overLimit('package_too_large', `a Package may hold at most ${r.max_package_size} bytes on this Portal`);
  }
}

/**
 * Whom a Portal Package goes to at finalize, and for how long it is kept: the
 * Portal's recipients as they are then (so an uploader cannot redirect the
 * e-mails) and its custom_expiry_days. null for a Package that came no Portal.
 * A Portal deleted meanwhile notifies nobody.
 */
export async function portalDelivery(db: Db, pkg: Pick<PackagesTable, 'portal_id'>): Promise<{ recipients: string[]; expiryDays: number | null } | null> {
  if (!pkg.portal_id) return null;
  const portal = await db.selectFrom('portals').select(['recipients', 'custom_expiry_days']).where('id', '=', pkg.portal_id).executeTakeFirst();
  if (!portal) return { recipients: [], expiryDays: null };
  return { recipients: parseList(portal.recipients), expiryDays: portal.custom_expiry_days > 0 ? portal.custom_expiry_days : null };
}
