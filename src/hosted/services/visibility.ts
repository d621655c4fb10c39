// Who may read which Package: the one rule every route (and the event stream)
// applies to a user credential. A package token or a Link is a grant of its own
// and is not narrowed by it.
//
// Owners and Admins see every Package of their Team. A member sees a Package when
//   they created it, or
//   (it has no Teamspace and was not kept private, or its Teamspace is one of theirs) and
//   (it did not come through a private Portal, or that Portal's Teamspace is one of theirs).
// A Package whose Teamspace was deleted is therefore seen by Owners, Admins and its creator only;
// one whose private Portal was deleted (private_access) by them and the members of its own Teamspace.
import type { Expression, ExpressionBuilder, SqlBool, Transaction } from 'kysely';
import type { Db } from '../db/open.js';
import type { Database, Role } from '../db/schema.js';
import { badRequest, forbidden } from '../errors.js';

/** A signed-in user looking at one Team's Packages. */
export interface Viewer {
  userId: string;
  teamId: string;
  role: Role;
}

export const seesEverything = (v: Pick<Viewer, 'role'>) => v.role === 'owner' || v.role === 'admin';

/** The ids of the viewer's Teamspaces in the Team, as a subquery. */
function spacesOf(eb: ExpressionBuilder<Database, 'packages'>, v: Viewer) {
  return eb
    .selectFrom('teamspace_members')
    .innerJoin('memberships', 'memberships.id', 'teamspace_members.membership_id')
    .select('teamspace_members.teamspace_id')
    .where('memberships.user_id', '=', v.userId)
    .where('memberships.team_id', '=', v.teamId);
}

/**
 * A where-clause for `selectFrom('packages')`: the Packages the viewer may read.
 * It does not narrow to the Team; the caller's query does that.
 */
export function visiblePackages(v: Viewer) {
  return (eb: ExpressionBuilder<Database, 'packages'>): Expression<SqlBool> => {
    if (seesEverything(v)) return eb.lit(true);
    const hiddenPortal = eb.exists(
      eb
        .selectFrom('portals')
        .select('portals.id')
        .whereRef('portals.id', '=', 'packages.portal_id')
        .where('portals.access_level', '=', 'private')
        .where((p) => p.or([p('portals.teamspace_id', 'is', null), p('portals.teamspace_id', 'not in', spacesOf(eb, v))])),
    );
    const inMySpace = eb('packages.teamspace_id', 'in', spacesOf(eb, v));
    return eb.or([
      eb('packages.created_by', '=', v.userId),
      eb.and([
        eb.or([eb.and([eb('packages.teamspace_id', 'is', null), eb('packages.private_access', '=', 0)]), inMySpace]),
        eb.not(hiddenPortal),
      ]),
    ]);
  };
}

/** Before a Portal is deleted: the Packages of a private one stay private without it. */
export async function keepPortalPackagesPrivate(trx: Transaction<Database>, portalId: string): Promise<void> {
  const portal = await trx.selectFrom('portals').select('access_level').where('id', '=', portalId).executeTakeFirst();
  if (portal?.access_level === 'private') await trx.updateTable('packages').set({ private_access: 1 }).where('portal_id', '=', portalId).execute();
}

/** Whether the viewer may read the Package (of the viewer's Team). */
export async function canReadPackage(db: Db, v: Viewer, packageId: string): Promise<boolean> {
  const row = await db
    .selectFrom('packages')
    .select('packages.id')
    .where('packages.id', '=', packageId)
    .where('packages.team_id', '=', v.teamId)
    .where(visiblePackages(v))
    .executeTakeFirst();
  return row !== undefined;
}

/** The Teamspace ids a user belongs to in a Team. */
export async function teamspacesOfUser(db: Db, teamId: string, userId: string): Promise<string[]> {
  const rows = await db
    .selectFrom('teamspace_members')
    .innerJoin('memberships', 'memberships.id', 'teamspace_members.membership_id')
    .select('teamspace_members.teamspace_id')
    .where('memberships.user_id', '=', userId)
    .where('memberships.team_id', '=', teamId)
    .execute();
  return rows.map((r) => r.teamspace_id);
}

/** Whether the viewer may read the Teamspace: Owners and Admins any of the Team's, a member their own. */
export async function canSeeTeamspace(db: Db, v: Viewer, spaceId: string): Promise<boolean> {
  if (seesEverything(v)) return true;
  return (await teamspacesOfUser(db, v.teamId, v.userId)).includes(spaceId);
}

/**
 * The teamspace_id a Package or Portal may be given: null for none, else a
 * Teamspace of the Team (400 otherwise) that a member must belong to (403).
 */
export async function checkTeamspaceChoice(db: Db, v: Viewer, spaceId: string | null | undefined): Promise<string | null> {
  if (!(await teamspaceOfTeam(db, v.teamId, spaceId))) return null;
  if (!(await canSeeTeamspace(db, v, spaceId!))) throw forbidden('you are not a member of this Teamspace');
  return spaceId!;
}

/** null for none (null or ''), else the id when it is a Teamspace of the Team; 400 otherwise. */
export async function teamspaceOfTeam(db: Db, teamId: string, spaceId: string | null | undefined): Promise<string | null> {
  if (!spaceId) return null;
  const space = await db.selectFrom('teamspaces').select('id').where('id', '=', spaceId).where('team_id', '=', teamId).executeTakeFirst();
  if (!space) throw badRequest(`teamspace_id ${spaceId} is not a Teamspace of this Team`, 'unknown_teamspace');
  return spaceId;
}
