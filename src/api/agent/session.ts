// Wire shapes of the agent's Session group: POST/GET/DELETE /login, GET /teams.
import { Type, type Static } from 'typebox';
import { User } from '../hosted/auth.js';
import { Team, TeamList } from '../hosted/teams.js';

export const LoginBody = Type.Object({
  email: Type.String({ format: 'email', maxLength: 254 }),
  password: Type.String({ minLength: 1, maxLength: 1024 }),
});
export type LoginBody = Static<typeof LoginBody>;

// The session carries the hosted service's own user and Team shapes.
export const SessionUser = User;
export type SessionUser = Static<typeof SessionUser>;
export const SessionTeam = Team;
export type SessionTeam = Static<typeof SessionTeam>;
export { TeamList };

export const SessionAnswer = Type.Object({ user: SessionUser, teams: TeamList });
export type SessionAnswer = Static<typeof SessionAnswer>;

/** `{code, message}`: every error the agent answers; a request that does not fit its schema adds the `field` at fault (`recipients/0`). */
export const ErrorAnswer = Type.Object({ code: Type.Integer(), message: Type.String(), field: Type.Optional(Type.String()) });
export type ErrorAnswer = Static<typeof ErrorAnswer>;
