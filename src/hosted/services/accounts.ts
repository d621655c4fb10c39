// Users, Teams and memberships. The API has no invitation route, so these are
// driven by `--init-owner` and the `ferry admin` command.
import type { Db } from '../db/open.js';
import type { Role, TeamsTable } from '../db/schema.js';
import { hashPassword, verifyPassword } from '../auth/passwords.js';
import { newId, newSecret, nowIso } from '../ids.js';

export const normalizeEmail = (email: string) => email.trim().toLowerCase();

export async function findUserByEmail(db: Db, email: string) {
  return db.selectFrom('users').selectAll().where('email', '=', normalizeEmail(email)).executeTakeFirst();
}

export async function createUser(db: Db, email: string, password: string, name?: string) {
  const now = nowIso();
  const row = {
    id: newId('usr'),
    email: normalizeEmail(email),
    name: name ?? normalizeEmail(email).split('@')[0]!,
    password_hash: await hashPassword(password),
    token_generation: 0,
    created_at: now,
    updated_at: now,
  };
  await db.insertInto('users').values(row).execute();
  return row;
}

/** A subdomain derived from the name, made unique with a numeric suffix. */
async function freeSubdomain(db: Db, name: string): Promise<string> {
  const base = name.toLowerCase().replace(/[^a-z0-9]+/g, '-').replace(/^-+|-+$/g, '').slice(0, 40) || 'team';
  for (let i = 0; i < 1000; i++) {
    const candidate = i === 0 ? base : `${base}-${i + 1}`;
    const taken = await db.selectFrom('teams').select('id').where('subdomain', '=', candidate).executeTakeFirst();
    if (!taken) return candidate;
  }
  return `${base}-${newId('t').slice(2, 10).toLowerCase()}`;
}

export async function createTeam(db: Db, name: string, subdomain?: string) {
  const now = nowIso();
  const row = {
    id: newId('team'),
    name,
    subdomain: subdomain ?? (await freeSubdomain(db, name)),
    max_email_recipients: 50,
    custom_expiry_enabled: 1,
    custom_expiry_default: 7,
    download_limit_enabled: 0,
    download_limit_default: 0,
    created_at: now,
    updated_at: now,
  };
  await db.insertInto('teams').values(row).execute();
  return row;
}

export async function addMember(db: Db, teamId: string, userId: string, role: Role) {
  const now = nowIso();
  await db
    .insertInto('memberships')
    .values({ id: newId('mem'), team_id: teamId, user_id: userId, policy_key: role, approved: 1, invitation_accepted: now, created_at: now })
    .onConflict((oc) => oc.columns(['team_id', 'user_id']).doUpdateSet({ policy_key: role }))
    .execute();
}

/**
 * A new password ends every session of the user: the token generation moves on in the same
 * statement (services/sessions.ts). Answers the new generation (undefined for no such user).
 */
export async function setPassword(db: Db, userId: string, password: string): Promise<number | undefined> {
  const hash = await hashPassword(password);
  const row = await db
    .updateTable('users')
    .set((eb) => ({ password_hash: hash, token_generation: eb('token_generation', '+', 1), updated_at: nowIso() }))
    .where('id', '=', userId)
    .returning('token_generation')
    .executeTakeFirst();
  return row?.token_generation;
}

/** `--init-owner`: creates the first owner and their Team; does nothing when the user exists. */
export async function ensureInitOwner(db: Db, email: string, password: string): Promise<boolean> {
  if (await findUserByEmail(db, email)) return false;
  try {
    // One transaction: instances started together on one database make one owner with one Team.
    await db.transaction().execute(async (trx) => {
      const user = await createUser(trx, email, password);
      const team = await createTeam(trx, `${user.name}'s Team`);
      await addMember(trx, team.id, user.id, 'owner');
    });
    return true;
  } catch (err) {
    // Another instance made them first.
    if (await findUserByEmail(db, email)) return false;
    throw err;
  }
}

// ---- sign-in, Teams and memberships as the API shows them ----

export type UserRow = Awaited<ReturnType<typeof createUser>>;
export const publicUser = (u: Pick<UserRow, 'id' | 'email' | 'name'>) => ({ id: u.id, email: u.email, name: u.name });

export async function findUserById(db: Db, id: string) {
  return db.selectFrom('users').selectAll().where('id', '=', id).executeTakeFirst();
}

/** Compared against when the e-mail is unknown, so both failures take as long. */
let dummyHash: Promise<string> | undefined;

/** The user whose e-mail and password match, or null; never says which one was wrong. */
export async function signIn(db: Db, email: string, password: string) {
  const user = await findUserByEmail(db, email);
  const ok = await verifyPassword(password, user ? user.password_hash : await (dummyHash ??= hashPassword(newSecret())));
  return user && ok ? user : null;
}

const teamView = (t: TeamsTable) => ({
  id: t.id,
  name: t.name,
  subdomain: t.subdomain,
  max_email_recipients: t.max_email_recipients,
  custom_expiry_enabled: t.custom_expiry_enabled === 1,
  custom_expiry_default: t.custom_expiry_default,
  download_limit_enabled: t.download_limit_enabled === 1,
  download_limit_default: t.download_limit_default,
});

/** The Teams a user is an approved member of; narrowed to one Team for an API key. */
export async function teamsOfUser(db: Db, userId: string, onlyTeamId?: string) {
  let q = db
    .selectFrom('teams')
    .innerJoin('memberships', 'memberships.team_id', 'teams.id')
    .selectAll('teams')
    .where('memberships.user_id', '=', userId)
    .where('memberships.approved', '=', 1);
  if (onlyTeamId) q = q.where('teams.id', '=', onlyTeamId);
  return (await q.orderBy('teams.created_at').orderBy('teams.id').execute()).map(teamView);
}

/** Every membership of a Team, oldest first, each with the Teamspaces it belongs to (by name). */
export async function teamMembers(db: Db, teamId: string) {
  const rows = await db
    .selectFrom('memberships')
    .innerJoin('users', 'users.id', 'memberships.user_id')
    .select([
      'memberships.id', 'memberships.team_id', 'memberships.user_id', 'memberships.policy_key',
      'memberships.approved', 'memberships.invitation_accepted', 'users.name', 'users.email',
    ])
    .where('memberships.team_id', '=', teamId)
    .orderBy('memberships.created_at')
    .orderBy('memberships.id')
    .execute();
  const spaces = await db
    .selectFrom('teamspace_members')
    .innerJoin('teamspaces', 'teamspaces.id', 'teamspace_members.teamspace_id')
    .select(['teamspace_members.membership_id', 'teamspaces.id', 'teamspaces.name'])
    .where('teamspaces.team_id', '=', teamId)
    .orderBy((eb) => eb.fn('lower', ['teamspaces.name']))
    .orderBy('teamspaces.id')
    .execute();
  const spacesOf = new Map<string, { id: string; name: string }[]>();
  for (const s of spaces) spacesOf.set(s.membership_id, [...(spacesOf.get(s.membership_id) ?? []), { id: s.id, name: s.name }]);
  return rows.map((m) => ({
    id: m.id,
    name: m.name,
    email: m.email,
    user_id: m.user_id,
    team_id: m.team_id,
    policy_key: m.policy_key,
    approved: m.approved === 1,
    invitation_accepted: m.invitation_accepted,
    teamspaces: spacesOf.get(m.id) ?? [],
  }));
}

/** A Team by id or by subdomain (the admin command takes either). */
export async function findTeam(db: Db, idOrSubdomain: string) {
  return db
    .selectFrom('teams')
    .selectAll()
    .where((eb) => eb.or([eb('id', '=', idOrSubdomain), eb('subdomain', '=', idOrSubdomain.toLowerCase())]))
    .executeTakeFirst();
}

/** The role of a user in a Team, or undefined when not an approved member. */
export async function roleIn(db: Db, teamId: string, userId: string): Promise<Role | undefined> {
  const m = await db
    .selectFrom('memberships')
    .select('policy_key')
    .where('team_id', '=', teamId)
    .where('user_id', '=', userId)
    .where('approved', '=', 1)
    .executeTakeFirst();
  return m?.policy_key;
}

/** DNS-label rules, since a subdomain can become a host name. */
export const isValidSubdomain = (s: string) => /^[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?$/.test(s);

/** Every Team with its members, and the users in no Team: what `ferry admin list` prints. */
export async function accountsOverview(db: Db) {
  const teams = await db.selectFrom('teams').selectAll().orderBy('created_at').orderBy('id').execute();
  const out = [];
  for (const t of teams) {
    const members = (await teamMembers(db, t.id)).map((m) => ({ user_id: m.user_id, email: m.email, name: m.name, role: m.policy_key }));
    out.push({ id: t.id, name: t.name, subdomain: t.subdomain, members });
  }
  const loners = await db
    .selectFrom('users')
    .select(['id', 'email', 'name'])
    .where(({ not, exists, selectFrom }) => not(exists(selectFrom('memberships').select('id').whereRef('memberships.user_id', '=', 'users.id'))))
    .orderBy('email')
    .execute();
  return { teams: out, users_without_team: loners };
}
