// User sessions: a sign-in with the password, its renewals, and their end. Each
// user token carries the user's token generation when it was signed; a password
// change or reset and "sign out everywhere" move the generation on, which revokes
// every token signed before at once, on every instance (the check reads the users
// row that authenticateUser reads anyway: no query more, no cache to outlive it).
// Renewals carry the time of the password sign-in on, and stop once it is older
// than --max-session-days. docs/hosted-api-notes/accounts.md.
import type { HostedContext } from '../context.js';
import type { Db } from '../db/open.js';
import type { UserClaims } from '../auth/tokens.js';
import { hashSecret, verifyPassword } from '../auth/passwords.js';
import { HttpError, unauthorized } from '../errors.js';
import { findUserById, normalizeEmail, publicUser, setPassword, signIn } from './accounts.js';
import { EVERY_ADDRESS, forgetFailures, guardSecret, type SecretSubject } from './lockouts.js';

/**
 * The lockout subject of an e-mail's password, whether or not a user has it: an unknown
 * e-mail is held back like a known one. Hashed, so that the table keeps no e-mails.
 */
export const accountSubject = (email: string): SecretSubject => ({ kind: 'account', id: hashSecret(normalizeEmail(email)) });

/** Refused when the token was signed before the user's sessions were last ended. */
export function checkGeneration(user: { token_generation: number }, claims: UserClaims): void {
  if (Number(user.token_generation) !== claims.generation) {
    throw unauthorized('this session has ended (a new password, or signed out everywhere): sign in again');
  }
}

/** A token of the user's current generation; `authTime` carries a renewed session's beginning on. */
const tokenFor = (ctx: HostedContext, user: { id: string; token_generation: number }, authTime?: number) =>
  ctx.tokens.signUser(user.id, Number(user.token_generation), authTime);

/** POST /v1/auth: the user, or null for a wrong e-mail or password; 429 while the e-mail is held back. */
export async function signInWithPassword(ctx: HostedContext, email: string, password: string) {
  const found: { user?: Awaited<ReturnType<typeof signIn>> } = {};
  const right = await guardSecret(ctx, accountSubject(email), EVERY_ADDRESS, async () => (found.user = await signIn(ctx.db, email, password)) !== null);
  if (!right || !found.user) return null;
  return { token: await tokenFor(ctx, found.user), user: publicUser(found.user) };
}

/**
 * POST /v1/auth/refresh: a token still valid or expired within the grace (auth/tokens.ts),
 * of the user's current generation, of a sign-in less than --max-session-days old.
 */
export async function renewSession(ctx: HostedContext, token: string) {
  const claims = await ctx.tokens.verifyUserForRefresh(token);
  const user = claims && (await findUserById(ctx.db, claims.userId));
  if (!claims || !user) throw unauthorized('invalid or expired user token');
  checkGeneration(user, claims);
  if ((claims.authTime + ctx.config.maxSessionSeconds) * 1000 <= Date.now()) {
    throw unauthorized(`this session began more than ${Math.round(ctx.config.maxSessionSeconds / 86400)} days ago: sign in again`);
  }
  return { token: await tokenFor(ctx, user, claims.authTime), user: publicUser(user) };
}

/**
 * POST /v1/me/password: the current password (counted against the account as a sign-in
 * is: a stolen token cannot guess it faster), then the new one, which ends every other
 * session; the caller gets a token of the new generation and stays signed in.
 */
export async function changePassword(ctx: HostedContext, userId: string, current: string, next: string) {
  const user = await findUserById(ctx.db, userId);
  if (!user) throw unauthorized('invalid or expired user token');
  if (!(await guardSecret(ctx, accountSubject(user.email), EVERY_ADDRESS, () => verifyPassword(current, user.password_hash)))) {
    throw new HttpError(403, 'wrong_password', 'the current password is wrong');
  }
  const generation = await setPassword(ctx.db, user.id, next);
  if (generation === undefined) throw unauthorized('invalid or expired user token');
  return { token: await tokenFor(ctx, { id: user.id, token_generation: generation }), user: publicUser(user) };
}

/** POST /v1/auth/sign_out_everywhere: every user token of the user is refused from now on, the caller's too. */
export async function endSessions(db: Db, userId: string): Promise<void> {
  await db.updateTable('users').set((eb) => ({ token_generation: eb('token_generation', '+', 1) })).where('id', '=', userId).execute();
}

/**
 * `ferry admin reset-password`: the new password ends every session, and a lock that wrong
 * passwords put on the e-mail is lifted, so the user can sign in at once.
 */
export async function resetPassword(db: Db, user: { id: string; email: string }, password: string): Promise<void> {
  await setPassword(db, user.id, password);
  await forgetFailures(db, accountSubject(user.email), EVERY_ADDRESS);
}
