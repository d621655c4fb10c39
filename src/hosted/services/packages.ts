// Team Packages: the Package DTO, creation (raising package.created) and update.
import type { PackageAccess } from '../auth/tokens.js';
import type { HostedContext } from '../context.js';
import type { PackagesTable, TeamsTable } from '../db/schema.js';
import type { CreatePackageBody, Package, UpdatePackageBody } from '../../api/hosted/packages.js';
import { PASSWORD_MASK } from '../../api/hosted/packages.js';
import type { TagSummary } from '../../api/hosted/tags.js';
import { hashPassword } from '../auth/passwords.js';
import { badRequest, conflict, notFound } from '../errors.js';
import { newId, nowIso } from '../ids.js';
import { normalizeEmail } from './accounts.js';
import { CHUNK_LIMITS } from './chunks.js';
import { resolveTagRef } from './tags.js';
import { eventsRaised, raisePackageEvent } from './webhookEvents.js';
import { checkTeamspaceChoice, type Viewer } from './visibility.js';
import { packagePayload, raiseEvent } from './events.js';

const DAY_MS = 24 * 3600 * 1000;

/**
 * The wire Package. `tag` may be given when the caller already loaded it (lists);
 * otherwise it is read. The access token is a fresh full-access token.
 */
export async function packageDto(
  ctx: HostedContext,
  row: PackagesTable,
  tag?: TagSummary | null,
  access: PackageAccess = 'full',
  /** Teamspace names by id, when the caller loaded them for a whole page (packageRecords.ts). */
  spaces?: Map<string, string>,
  /** The caller's own token, answered instead of a fresh one: an uploader's token must not be renewed by reading. */
  token?: string,
): Promise<Package> {
  if (tag === undefined) {
    tag = row.tag_id
      ? ((await ctx.db.selectFrom('tags').select(['id', 'name']).where('id', '=', row.tag_id).executeTakeFirst()) ?? null)
      : null;
  }
  return {
    id: row.id,
    name: row.name,
    description: row.description,
    sender: row.sender,
    // An anonymous Portal uploader does not get to see whom the Portal notifies.
    recipients: access === 'upload' ? [] : parseRecipients(row.recipients),
    state: row.state,
    size: row.size,
    total_files: row.total_files,
    access_limit: row.access_limit ?? 0,
    password: row.password_hash ? PASSWORD_MASK : '',
    access_token: token ?? (await ctx.tokens.signPackage({ packageId: row.id, access })),
    contains_virus: row.contains_virus === 1,
    custom_expiry: row.custom_expiry === 1,
    custom_metadata_id: row.custom_metadata_id,
    expiry: row.expiry,
    unlimited_storage: row.unlimited_storage === 1,
    teamspace: row.teamspace_id ? (spaces ? knownSpace(row.teamspace_id, spaces) : await teamspaceRef(ctx, row.teamspace_id)) : null,
    chunk_size: row.chunk_size,
    created_at: row.created_at,
    updated_at: row.updated_at,
    tag: tag ? { id: tag.id, name: tag.name } : null,
    terms_accepted_at: row.terms_accepted_at ?? null,
  };
}

const knownSpace = (id: string, spaces: Map<string, string>) => (spaces.has(id) ? { id, name: spaces.get(id)! } : { id });

/** `{id, name}`; a deleted Teamspace keeps its id on its Packages and shows without a name. */
async function teamspaceRef(ctx: HostedContext, id: string): Promise<{ id: string; name?: string }> {
  const space = await ctx.db.selectFrom('teamspaces').select('name').where('id', '=', id).executeTakeFirst();
  return space ? { id, name: space.name } : { id };
}

export function parseRecipients(json: string): string[] {
  try {
    const v: unknown = JSON.parse(json);
    return Array.isArray(v) ? v.filter((x): x is string => typeof x === 'string') : [];
  } catch {
    return [];
  }
}

async function loadTeam(ctx: HostedContext, teamId: string): Promise<TeamsTable> {
  const team = await ctx.db.selectFrom('teams').selectAll().where('id', '=', teamId).executeTakeFirst();
  if (!team) throw notFound('team');
  return team;
}

/** Lower-cased, trimmed, duplicates dropped, at most the Team's limit. */
function checkRecipients(team: TeamsTable, recipients: string[]): string[] {
  const list = [...new Set(recipients.map(normalizeEmail))];
  if (list.length > team.max_email_recipients) {
    throw badRequest(`at most ${team.max_email_recipients} recipients are allowed`, 'too_many_recipients');
  }
  return list;
}

function checkChunkSize(size: number | undefined): number {
  if (!size) return 0;
  if (size < CHUNK_LIMITS.min_chunk_size || size > CHUNK_LIMITS.max_chunk_size) {
    throw badRequest(`chunk_size must be 0 or between ${CHUNK_LIMITS.min_chunk_size} and ${CHUNK_LIMITS.max_chunk_size}`);
  }
  return size;
}

const sameList = (a: string[], b: string[]) => a.length === b.length && a.every((x, i) => x === b[i]);

export async function getPackageRow(ctx: HostedContext, packageId: string): Promise<PackagesTable> {
  const row = await ctx.db.selectFrom('packages').selectAll().where('id', '=', packageId).executeTakeFirst();
  if (!row) throw notFound('package');
  return row;
}

/**
 * A Package sent by a Team member, in state `new`; its expiry starts at finalization.
 * Its Teamspace must be one of the Team's that the sender may use.
 */
export async function createTeamPackage(ctx: HostedContext, viewer: Viewer, body: CreatePackageBody): Promise<Package> {
  const { teamId, userId } = viewer;
  const team = await loadTeam(ctx, teamId);
  const teamspaceId = await checkTeamspaceChoice(ctx.db, viewer, body.teamspace_id);
  const recipients = checkRecipients(team, body.recipients);
  const chunkSize = checkChunkSize(body.chunk_size);
  const user = await ctx.db.selectFrom('users').select('email').where('id', '=', userId).executeTakeFirstOrThrow();
  const passwordHash = body.password ? await hashPassword(body.password) : null;
  const accessLimit = body.access_limit ?? (team.download_limit_enabled ? team.download_limit_default : 0);
  const now = nowIso();
  const created = await ctx.db.transaction().execute(async (trx) => {
    const tag = await resolveTagRef(ctx, teamId, body.tag, trx);
    const row: PackagesTable = {
      id: newId('pkg'),
      team_id: teamId,
      portal_id: null,
      teamspace_id: teamspaceId,
      created_by: userId,
      name: body.name,
      description: body.description,
      sender: user.email,
      recipients: JSON.stringify(recipients),
      state: 'new',
      size: 0,
      total_files: 0,
      access_limit: accessLimit > 0 ? accessLimit : null,
      password_hash: passwordHash,
      contains_virus: 0,
      custom_expiry: 0,
      custom_metadata_id: null,
      expiry: null,
      unlimited_storage: body.unlimited_storage ? 1 : 0,
      chunk_size: chunkSize,
      tag_id: tag?.id ?? null,
      finalized_at: null,
      objects_deleted: 0,
      created_at: now,
      updated_at: now,
    };
    await trx.insertInto('packages').values(row).execute();
    await raiseEvent(ctx, trx, 'package.created', row, packagePayload(row), now);
    return { row, events: await raisePackageEvent(trx, 'package.created', row) };
  });
  eventsRaised(ctx, created.events);
  return packageDto(ctx, created.row);
}

/**
 * PUT of the complete Package. Recipients and chunk size change only while the
 * Package is new; expired and archived Packages are read-only. Omitted optional
 * fields keep their value, except tag (omitted removes it) as the spec says.
 */
export async function updatePackage(ctx: HostedContext, pkg: PackagesTable, body: UpdatePackageBody): Promise<Package> {
  const team = await loadTeam(ctx, pkg.team_id);
  const set: Partial<PackagesTable> = { name: body.name };
  if (body.description !== undefined) set.description = body.description;
  if (body.access_limit !== undefined) set.access_limit = body.access_limit > 0 ? body.access_limit : null;

  const stateErrors: string[] = [];
  if (body.recipients !== undefined) {
    const recipients = checkRecipients(team, body.recipients);
    if (!sameList(recipients, parseRecipients(pkg.recipients))) {
      if (pkg.state !== 'new') stateErrors.push('recipients can only change while the package is new');
      set.recipients = JSON.stringify(recipients);
    }
  }
  if (body.chunk_size !== undefined) {
    const chunkSize = checkChunkSize(body.chunk_size);
    if (chunkSize !== pkg.chunk_size) {
      if (pkg.state !== 'new') stateErrors.push('chunk_size can only change while the package is new');
      set.chunk_size = chunkSize;
    }
  }
  if (pkg.state !== 'new' && pkg.state !== 'finalized') throw conflict(`a ${pkg.state} package cannot be updated`, 'wrong_state');
  if (stateErrors.length) throw conflict(stateErrors.join('; '), 'wrong_state');

  if (body.password !== undefined && body.password !== PASSWORD_MASK) {
    set.password_hash = body.password === '' ? null : await hashPassword(body.password);
  }
  if (body.unlimited_storage !== undefined && (body.unlimited_storage ? 1 : 0) !== pkg.unlimited_storage) {
    set.unlimited_storage = body.unlimited_storage ? 1 : 0;
    // Leaving unlimited storage restarts the Team's default period of a finalized Package.
    set.expiry = body.unlimited_storage || pkg.state !== 'finalized' ? null : new Date(Date.now() + team.custom_expiry_default * DAY_MS).toISOString();
    set.custom_expiry = 0;
  }
  set.updated_at = nowIso();

  const updated = await ctx.db.transaction().execute(async (trx) => {
    const tag = await resolveTagRef(ctx, pkg.team_id, body.tag, trx);
    set.tag_id = tag?.id ?? null;
    const res = await trx.updateTable('packages').set(set).where('id', '=', pkg.id).where('state', '=', pkg.state).executeTakeFirst();
    if (Number(res.numUpdatedRows) === 0) throw conflict('the package changed state; retry', 'wrong_state');
    return trx.selectFrom('packages').selectAll().where('id', '=', pkg.id).executeTakeFirstOrThrow();
  });
  return packageDto(ctx, updated);
}
