// Teamspaces: groups of Team members that control who sees which Packages.
// POST/GET/PUT/DELETE /v1/spaces..., the paged /v1.1 lists of Teamspaces and of
// a Teamspace's Packages, and Teamspace memberships.
import { Type, type Static } from 'typebox';
import { Package, SORT_FIELDS, STATES } from './packages.js';
import { TeamParams } from './tags.js';

export { TeamParams };

const Id = Type.String({ minLength: 1, maxLength: 100 });
const Name = Type.String({ minLength: 1, maxLength: 255, pattern: '^[^\\u0000]*\\S[^\\u0000]*$' });

/** One Team membership in a Teamspace; `id` is the teamspace_membership_id. */
export const TeamspaceMember = Type.Object({
  id: Type.String(),
  /** The Team membership (GET /v1/teams/{team_id}/members). */
  membership_id: Type.String(),
  name: Type.String(),
  email: Type.String(),
  user_id: Type.String(),
});
export type TeamspaceMember = Static<typeof TeamspaceMember>;

export const Teamspace = Type.Object({
  id: Type.String(),
  team_id: Type.String(),
  name: Type.String(),
  members: Type.Array(TeamspaceMember),
  created_at: Type.String(),
  updated_at: Type.String(),
});
export type Teamspace = Static<typeof Teamspace>;

/** Team membership ids; both names are accepted (docs/hosted-api-notes/teamspaces.md). */
const MembershipIds = Type.Array(Id, { maxItems: 1000 });

export const CreateTeamspaceBody = Type.Object({
  name: Name,
  member_ids: Type.Optional(MembershipIds),
  membership_ids: Type.Optional(MembershipIds),
});
export type CreateTeamspaceBody = Static<typeof CreateTeamspaceBody>;

export const UpdateTeamspaceBody = Type.Object({ name: Name });
export type UpdateTeamspaceBody = Static<typeof UpdateTeamspaceBody>;

export const AddMembersBody = Type.Object({
  member_ids: Type.Optional(MembershipIds),
  membership_ids: Type.Optional(MembershipIds),
});
export type AddMembersBody = Static<typeof AddMembersBody>;

export const SpaceParams = Type.Object({ space_id: Id });
export const SpaceMemberParams = Type.Object({ space_id: Id, teamspace_membership_id: Id });

export const TeamspaceListQuery = Type.Object({
  /** Zero-based, as the spec gives for this route. */
  page: Type.Integer({ minimum: 0, maximum: 1_000_000, default: 0 }),
  limit: Type.Integer({ minimum: 1, maximum: 50, default: 50 }),
});
export type TeamspaceListQuery = Static<typeof TeamspaceListQuery>;

export const TeamspaceListPage = Type.Object({
  metadata: Type.Object({ per_page: Type.Integer(), total: Type.Integer(), page: Type.Integer() }),
  records: Type.Array(Teamspace),
});
export type TeamspaceListPage = Static<typeof TeamspaceListPage>;

const oneState = `(${STATES.join('|')})`;
const Day = Type.String({ format: 'date' });

/** GET /v1.1/spaces/{space_id}/packages: zero-based page, limit 1..100, dates as YYYY-MM-DD. */
export const TeamspacePackagesQuery = Type.Object({
  page: Type.Integer({ minimum: 0, maximum: 1_000_000, default: 0 }),
  limit: Type.Integer({ minimum: 1, maximum: 100, default: 50 }),
  sort: Type.Optional(Type.String({ pattern: `^-?(${SORT_FIELDS.join('|')})$` })),
  status: Type.Optional(Type.Array(Type.String({ pattern: `^${oneState}(,${oneState})*$` }), { maxItems: 10 })),
  name: Type.Optional(Type.String({ maxLength: 255 })),
  sender: Type.Optional(Type.String({ maxLength: 254 })),
  tags: Type.Optional(Type.String({ maxLength: 4000 })),
  created_at_start: Type.Optional(Day),
  created_at_end: Type.Optional(Day),
});
export type TeamspacePackagesQuery = Static<typeof TeamspacePackagesQuery>;

export const TeamspacePackageList = Type.Array(Package);
