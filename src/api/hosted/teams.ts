// Teams and their memberships: GET /v1/teams, GET /v1/teams/{team_id}/members.
import { Type, type Static } from 'typebox';

/** What the agent's session answer needs of a Team. */
export const Team = Type.Object({
  id: Type.String(),
  name: Type.String(),
  subdomain: Type.String(),
  max_email_recipients: Type.Integer(),
  custom_expiry_enabled: Type.Boolean(),
  custom_expiry_default: Type.Integer(),
  download_limit_enabled: Type.Boolean(),
  download_limit_default: Type.Integer(),
});
export type Team = Static<typeof Team>;

export const TeamList = Type.Array(Team);

export const Role = Type.Union([Type.Literal('owner'), Type.Literal('admin'), Type.Literal('member')]);
export type Role = Static<typeof Role>;

export const MembershipTeamspace = Type.Object({ id: Type.String(), name: Type.String() });

export const Membership = Type.Object({
  id: Type.String(),
  name: Type.String(),
  email: Type.String(),
  user_id: Type.String(),
  team_id: Type.String(),
  /** The role key: owner, admin or member. */
  policy_key: Role,
  approved: Type.Boolean(),
  /** When the member joined; null while an invitation is pending. */
  invitation_accepted: Type.Union([Type.String(), Type.Null()]),
  teamspaces: Type.Array(MembershipTeamspace),
});
export type Membership = Static<typeof Membership>;

export const MembershipList = Type.Array(Membership);

export const TeamIdParams = Type.Object({ team_id: Type.String({ minLength: 1, maxLength: 100 }) });
export type TeamIdParams = Static<typeof TeamIdParams>;
