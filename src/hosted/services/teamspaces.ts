// Teamspaces of a Team and their members. Owners and Admins read and manage every
// Teamspace; a member reads the Teamspaces they belong to and manages none.
import type { Kysely } from 'kysely';
import type { HostedContext } from '../context.js';
import type { Database, TeamspacesTable } from '../db/schema.js';
import type { Package } from '../../api/hosted/packages.js';
import type {
  AddMembersBody,
  CreateTeamspaceBody,
  Teamspace,
  TeamspaceListPage,
  TeamspaceListQuery,
  TeamspaceMember,
  TeamspacePackagesQuery,
} from '../../api/hosted/teamspaces.js';
import { badRequest, conflict, notFound } from '../errors.js';
import { newId, nowIso } from '../ids.js';
import { applySort, matchingPackages } from './packageList.js';
import { pageRecords } from './packageRecords.js';
import { seesEverything, teamspacesOfUser, visiblePackages, type Viewer } from './visibility.js';

export { canSeeTeamspace } from './visibility.js';

type Db = Kysely<Database>;

async function membersOf(db: Db, spaceIds: string[]): Promise<Map<string, TeamspaceMember[]>> {
  const out = new Map<string, TeamspaceMember[]>(spaceIds.map((id) => [id, []]));
  if (spaceIds.length === 0) return out;
  const rows = await db
    .selectFrom('teamspace_members')
    .innerJoin('memberships', 'memberships.id', 'teamspace_members.membership_id')
    .innerJoin('users', 'users.id', 'memberships.user_id')
    .select(['teamspace_members.id', 'teamspace_members.teamspace_id', 'teamspace_members.membership_id', 'users.name', 'users.email', 'users.id as user_id'])
    .where('teamspace_members.teamspace_id', 'in', spaceIds)
    .orderBy('teamspace_members.created_at')
    .orderBy('teamspace_members.id')
    .execute();
  for (const r of rows) out.get(r.teamspace_id)!.push({ id: r.id, membership_id: r.membership_id, name: r.name, email: r.email, user_id: r.user_id });
  return out;
}

const dto = (row: TeamspacesTable, members: TeamspaceMember[]): Teamspace => ({
  id: row.id,
  team_id: row.team_id,
  name: row.name,
  members,
  created_at: row.created_at,
  updated_at: row.updated_at,
});

export async function teamspaceDto(ctx: HostedContext, row: TeamspacesTable): Promise<Teamspace> {
  return dto(row, (await membersOf(ctx.db, [row.id])).get(row.id)!);
}

export async function findTeamspace(db: Db, spaceId: string): Promise<TeamspacesTable | undefined> {
  return db.selectFrom('teamspaces').selectAll().where('id', '=', spaceId).executeTakeFirst();
}

/**
 * The membership ids of a body: member_ids and membership_ids together. 400 when
 * none is given, when one repeats, or when one is not a membership of the Team
 * (another Team's answers the same, so nothing is told about it).
 */
async function membershipIds(db: Db, teamId: string, body: AddMembersBody, required: boolean): Promise<string[]> {
  const ids = [...(body.member_ids ?? []), ...(body.membership_ids ?? [])];
  if (required && ids.length === 0) throw badRequest('member_ids (or membership_ids) must list at least one Team membership id', 'members_required');
  const repeated = [...new Set(ids.filter((id, i) => ids.indexOf(id) !== i))];
  if (repeated.length) throw badRequest(`membership ids given twice: ${repeated.join(', ')}`, 'duplicate_membership');
  if (ids.length === 0) return [];
  const found = await db.selectFrom('memberships').select('id').where('team_id', '=', teamId).where('id', 'in', ids).execute();
  const known = new Set(found.map((r) => r.id));
  const unknown = ids.filter((id) => !known.has(id));
  if (unknown.length) throw badRequest(`not memberships of this Team: ${unknown.join(', ')}`, 'unknown_membership');
  return ids;
}

async function insertMembers(db: Db, spaceId: string, ids: string[]): Promise<void> {
  if (ids.length === 0) return;
  const now = nowIso();
  await db
    .insertInto('teamspace_members')
    .values(ids.map((membership_id) => ({ id: newId('tsm'), teamspace_id: spaceId, membership_id, created_at: now })))
    .execute();
}

export async function createTeamspace(ctx: HostedContext, teamId: string, body: CreateTeamspaceBody): Promise<Teamspace> {
  const now = nowIso();
  const row: TeamspacesTable = { id: newId('tsp'), team_id: teamId, name: body.name.trim(), created_at: now, updated_at: now };
  await ctx.db.transaction().execute(async (trx) => {
    const ids = await membershipIds(trx, teamId, body, false);
    await trx.insertInto('teamspaces').values(row).execute();
    await insertMembers(trx, row.id, ids);
  });
  return teamspaceDto(ctx, row);
}

export async function renameTeamspace(ctx: HostedContext, space: TeamspacesTable, name: string): Promise<Teamspace> {
  const updated = { ...space, name: name.trim(), updated_at: nowIso() };
  await ctx.db.updateTable('teamspaces').set({ name: updated.name, updated_at: updated.updated_at }).where('id', '=', space.id).execute();
  return teamspaceDto(ctx, updated);
}

/**
 * Deletes a Teamspace and its memberships. Refused (409) while a Portal sends its
 * Packages there: the Portal must be moved first. Its Packages keep their
 * teamspace_id, so members stop seeing them (Owners, Admins and their creators still do).
 */
export async function deleteTeamspace(ctx: HostedContext, space: TeamspacesTable): Promise<void> {
  await ctx.db.transaction().execute(async (trx) => {
    const portals = await trx.selectFrom('portals').select('id').where('teamspace_id', '=', space.id).execute();
    if (portals.length) {
      throw conflict(`Portals use this Teamspace (${portals.map((p) => p.id).join(', ')}); give them another Teamspace or none first`, 'teamspace_in_use');
    }
    await trx.deleteFrom('teamspace_members').where('teamspace_id', '=', space.id).execute();
    await trx.deleteFrom('teamspaces').where('id', '=', space.id).execute();
  });
}

/** The Teamspaces the viewer may read, by name (case-insensitive), the id breaking ties; page 0 is the first. */
export async function listTeamspaces(ctx: HostedContext, v: Viewer, query: TeamspaceListQuery): Promise<TeamspaceListPage> {
  let base = ctx.db.selectFrom('teamspaces').where('team_id', '=', v.teamId);
  if (!seesEverything(v)) {
    const mine = await teamspacesOfUser(ctx.db, v.teamId, v.userId);
    if (mine.length === 0) return { metadata: { per_page: query.limit, total: 0, page: query.page }, records: [] };
    base = base.where('id', 'in', mine);
  }
  const { n } = await base.select((eb) => eb.fn.countAll<number | string>().as('n')).executeTakeFirstOrThrow();
  const rows = await base
    .selectAll()
    .orderBy((eb) => eb.fn('lower', ['name']))
    .orderBy('id')
    .limit(query.limit)
    .offset(query.page * query.limit)
    .execute();
  const members = await membersOf(ctx.db, rows.map((r) => r.id));
  return { metadata: { per_page: query.limit, total: Number(n), page: query.page }, records: rows.map((r) => dto(r, members.get(r.id)!)) };
}

export async function listMembers(ctx: HostedContext, spaceId: string): Promise<TeamspaceMember[]> {
  return (await membersOf(ctx.db, [spaceId])).get(spaceId)!;
}

/** Adds Team memberships; 409 when one is in the Teamspace already. All or nothing. */
export async function addMembers(ctx: HostedContext, space: TeamspacesTable, body: AddMembersBody): Promise<TeamspaceMember[]> {
  const ids = await ctx.db.transaction().execute(async (trx) => {
    const ids = await membershipIds(trx, space.team_id, body, true);
    const already = await trx
      .selectFrom('teamspace_members')
      .select('membership_id')
      .where('teamspace_id', '=', space.id)
      .where('membership_id', 'in', ids)
      .execute();
    if (already.length) throw conflict(`already in this Teamspace: ${already.map((r) => r.membership_id).join(', ')}`, 'already_member');
    await insertMembers(trx, space.id, ids);
    await trx.updateTable('teamspaces').set({ updated_at: nowIso() }).where('id', '=', space.id).execute();
    return ids;
  });
  const added = new Set(ids);
  return (await listMembers(ctx, space.id)).filter((m) => added.has(m.membership_id));
}

export async function removeMember(ctx: HostedContext, space: TeamspacesTable, teamspaceMembershipId: string): Promise<void> {
  const res = await ctx.db
    .deleteFrom('teamspace_members')
    .where('id', '=', teamspaceMembershipId)
    .where('teamspace_id', '=', space.id)
    .executeTakeFirst();
  if (Number(res.numDeletedRows) === 0) throw notFound('teamspace membership');
}

/** GET /v1.1/spaces/{id}/packages: the Team list's filters, narrowed to the Teamspace and to what the viewer may read. */
export async function listSpacePackages(ctx: HostedContext, v: Viewer, space: TeamspacesTable, query: TeamspacePackagesQuery): Promise<Package[]> {
  const { page, limit, sort, ...filters } = query;
  const base = (await matchingPackages(ctx.db, space.team_id, { page: 1, limit, ...filters })).rows
    .where('teamspace_id', '=', space.id)
    .where(visiblePackages(v));
  const rows = await applySort(base.selectAll(), sort).limit(limit).offset(page * limit).execute();
  return pageRecords(ctx, rows);
}
