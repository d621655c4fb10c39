// Credentials for tests, made through the service layer so that a test of one
// route does not depend on another route being right.
import type { Role } from '../../src/hosted/db/schema.js';
import { addMember, createTeam, createUser, findUserByEmail } from '../../src/hosted/services/accounts.js';
import { issueApiKey } from '../../src/hosted/services/apiKeys.js';
import type { TestService } from './hosted.js';

export interface Actor {
  userId: string;
  email: string;
  teamId: string;
  apiKey: string;
  userToken: string;
  /** Headers carrying the API key. */
  h: Record<string, string>;
}

/** The `--init-owner` user of the service, with an API key of their Team. */
export async function ownerActor(svc: TestService): Promise<Actor> {
  const user = (await findUserByEmail(svc.ctx.db, svc.owner.email))!;
  const m = await svc.ctx.db.selectFrom('memberships').select('team_id').where('user_id', '=', user.id).executeTakeFirstOrThrow();
  return actorFor(svc, user.id, user.email, m.team_id);
}

/** A new user in a Team of their own (or in `teamId` with `role`). */
export async function newActor(svc: TestService, email: string, opts: { teamId?: string; role?: Role } = {}): Promise<Actor> {
  const user = await createUser(svc.ctx.db, email, 'password-' + email);
  const teamId = opts.teamId ?? (await createTeam(svc.ctx.db, `Team of ${email}`)).id;
  await addMember(svc.ctx.db, teamId, user.id, opts.role ?? 'owner');
  return actorFor(svc, user.id, user.email, teamId);
}

async function actorFor(svc: TestService, userId: string, email: string, teamId: string): Promise<Actor> {
  const { secret } = await issueApiKey(svc.ctx.db, { teamId, userId, name: 'test' });
  return { userId, email, teamId, apiKey: secret, userToken: await svc.ctx.tokens.signUser(userId, 0), h: { 'x-api-key': secret } };
}

export interface TeamActors { owner: Actor; admin: Actor; member: Actor; stranger: Actor }

/** A new Team with an owner, an admin and a member, plus a stranger in a Team of their own: `${prefix}-owner@example.com` and so on. */
export async function teamActors(svc: TestService, prefix: string): Promise<TeamActors> {
  const owner = await newActor(svc, `${prefix}-owner@example.com`);
  const admin = await newActor(svc, `${prefix}-admin@example.com`, { teamId: owner.teamId, role: 'admin' });
  const member = await newActor(svc, `${prefix}-member@example.com`, { teamId: owner.teamId, role: 'member' });
  const stranger = await newActor(svc, `${prefix}-stranger@example.com`);
  return { owner, admin, member, stranger };
}
