// API keys: random secrets shown once, stored as a SHA-256 hash with a masked
// preview (prefix and last four characters) for later listings.
import type { Db } from '../db/open.js';
import type { ApiKeysTable, Role } from '../db/schema.js';
import { hashSecret } from '../auth/passwords.js';
import { badRequest, forbidden, notFound } from '../errors.js';
import { newId, nowIso, randomId } from '../ids.js';
import { roleIn } from './accounts.js';

export interface NewApiKey {
  teamId: string;
  userId: string;
  name: string;
  description?: string;
  expiry?: string | null;
  state?: 'active' | 'inactive';
}

/** Creates a key and returns its row plus the only copy of the secret. */
export async function issueApiKey(db: Db, k: NewApiKey): Promise<{ row: ApiKeysTable; secret: string }> {
  const secret = `fk_${randomId(40)}`;
  const now = nowIso();
  const row: ApiKeysTable = {
    id: newId('key'),
    team_id: k.teamId,
    user_id: k.userId,
    name: k.name,
    description: k.description ?? '',
    key_hash: hashSecret(secret),
    key_prefix: secret.slice(0, 7),
    key_last4: secret.slice(-4),
    expiry: k.expiry ?? null,
    state: k.state ?? 'active',
    last_request_at: null,
    created_at: now,
    updated_at: now,
  };
  await db.insertInto('api_keys').values(row).execute();
  return { row, secret };
}

export const maskedKey = (row: Pick<ApiKeysTable, 'key_prefix' | 'key_last4'>) => `${row.key_prefix}…${row.key_last4}`;

// ---- key management as the API shows it ----

export interface KeyOwner { id: string; email: string; name: string }

/** The key object of the API; `secret` only right after creation. */
export function apiKeyView(row: ApiKeysTable, owner: KeyOwner, secret?: string) {
  return {
    id: row.id,
    name: row.name,
    description: row.description,
    key: secret ?? maskedKey(row),
    expiry: row.expiry,
    state: row.state,
    last_request_at: row.last_request_at,
    created_at: row.created_at,
    updated_at: row.updated_at,
    owner: { id: owner.id, email: owner.email, name: owner.name },
  };
}

const withOwner = (db: Db) =>
  db
    .selectFrom('api_keys')
    .innerJoin('users', 'users.id', 'api_keys.user_id')
    .selectAll('api_keys')
    .select(['users.email as owner_email', 'users.name as owner_name']);

type KeyWithOwner = ApiKeysTable & { owner_email: string; owner_name: string };
const view = (r: KeyWithOwner) => apiKeyView(r, { id: r.user_id, email: r.owner_email, name: r.owner_name });

/** Admins see their own keys, Owners every key of the Team; members manage none. */
function assertManager(role: Role | undefined): asserts role is 'owner' | 'admin' {
  if (role === 'member') throw forbidden('only owners and admins manage API keys');
  if (role !== 'owner' && role !== 'admin') throw notFound('team');
}

/** Date-times are kept in one ISO form, so that text comparison orders them. */
function futureExpiry(value: string | null | undefined): string | null | undefined {
  if (value === undefined || value === null) return value;
  const t = Date.parse(value);
  if (Number.isNaN(t)) throw badRequest('expiry is not a date-time');
  if (t <= Date.now()) throw badRequest('expiry must be in the future');
  return new Date(t).toISOString();
}

export async function listApiKeys(db: Db, teamId: string, userId: string, role: Role) {
  assertManager(role);
  let q = withOwner(db).where('api_keys.team_id', '=', teamId);
  if (role !== 'owner') q = q.where('api_keys.user_id', '=', userId);
  return (await q.orderBy('api_keys.created_at').orderBy('api_keys.id').execute()).map(view);
}

export async function createApiKey(
  db: Db,
  teamId: string,
  userId: string,
  role: Role,
  body: { name: string; description?: string; expiry?: string | null; state?: 'active' | 'inactive' },
) {
  assertManager(role);
  const expiry = futureExpiry(body.expiry);
  const { row, secret } = await issueApiKey(db, { teamId, userId, name: body.name, description: body.description, expiry, state: body.state });
  const owner = await db.selectFrom('users').select(['id', 'email', 'name']).where('id', '=', userId).executeTakeFirstOrThrow();
  return apiKeyView(row, owner, secret);
}

/**
 * A key the caller may manage, with the caller's role in its Team. Keys of other
 * Teams, and of other users for an admin, answer 404: their existence is not shown.
 */
export async function managedKey(db: Db, userId: string, keyId: string) {
  const key = await withOwner(db).where('api_keys.id', '=', keyId).executeTakeFirst();
  if (!key) throw notFound('api key');
  const m = await db
    .selectFrom('memberships')
    .select('policy_key')
    .where('team_id', '=', key.team_id)
    .where('user_id', '=', userId)
    .where('approved', '=', 1)
    .executeTakeFirst();
  if (!m) throw notFound('api key');
  assertManager(m.policy_key);
  if (m.policy_key === 'admin' && key.user_id !== userId) throw notFound('api key');
  return { key, role: m.policy_key };
}

export const getApiKey = async (db: Db, userId: string, keyId: string) => view((await managedKey(db, userId, keyId)).key);

export interface ApiKeyChanges {
  name?: string;
  description?: string;
  expiry?: string | null;
  state?: 'active' | 'inactive';
  owner?: string | { id: string };
}

/** Validates every change before writing any. Only an Owner moves a key to another member. */
export async function updateApiKey(db: Db, userId: string, keyId: string, changes: ApiKeyChanges) {
  const { key, role } = await managedKey(db, userId, keyId);
  const set: Partial<ApiKeysTable> = {};
  if (changes.name !== undefined) set.name = changes.name;
  if (changes.description !== undefined) set.description = changes.description;
  if (changes.state !== undefined) set.state = changes.state;
  // An unchanged expiry may lie in the past (a GET-modify-PUT of an expired key).
  if (changes.expiry !== undefined && changes.expiry !== key.expiry) set.expiry = futureExpiry(changes.expiry);
  const ownerId = typeof changes.owner === 'string' ? changes.owner : changes.owner?.id;
  if (ownerId !== undefined && ownerId !== key.user_id) {
    if (role !== 'owner') throw forbidden('only an owner may give a key to another member');
    if (!(await roleIn(db, key.team_id, ownerId))) throw badRequest('the new owner is not a member of the team');
    set.user_id = ownerId;
  }
  if (Object.keys(set).length > 0) {
    await db.updateTable('api_keys').set({ ...set, updated_at: nowIso() }).where('id', '=', key.id).execute();
  }
  return view((await withOwner(db).where('api_keys.id', '=', key.id).executeTakeFirstOrThrow()) as KeyWithOwner);
}

export const setApiKeyState = (db: Db, userId: string, keyId: string, state: 'active' | 'inactive') =>
  updateApiKey(db, userId, keyId, { state });

export async function deleteApiKey(db: Db, userId: string, keyId: string): Promise<void> {
  const { key } = await managedKey(db, userId, keyId);
  await db.deleteFrom('api_keys').where('id', '=', key.id).execute();
}
