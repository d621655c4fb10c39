// Wrong passwords for one account (issue #32 item 11): counted per account from
// every address, so that a guesser spread over many addresses is held back as one
// (429 with Retry-After, then a bounded lock), an unknown e-mail the same way, and
// other accounts not at all. Behind a proxy: each X-Forwarded-For is an address.
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { call, startTestService, type TestService } from '../../helpers/hosted.js';
import { newActor, type Actor } from '../../helpers/auth.js';
import { accountSubject, resetPassword } from '../../../src/hosted/services/sessions.js';

let svc: TestService;
let victim: Actor;
let bystander: Actor;

beforeAll(async () => {
  // Waits of 10 s and more: longer than any sign-in takes on a busy machine; the tests end them in the table.
  svc = await startTestService({ 'trust-proxy': 'true', 'lockout-free': '2', 'lockout-delay-ms': '10000', 'lockout-after': '5', 'lockout-ms': '600000' });
  victim = await newActor(svc, 'victim@example.com');
  bystander = await newActor(svc, 'bystander@example.com');
});
afterAll(() => svc?.close());

let address = 0;
/** Each attempt from an address of its own, as from a botnet. */
const signIn = (email: string, password: string) =>
  call(svc.url, 'POST', '/v1/auth', { body: { email, password }, headers: { 'x-forwarded-for': `198.51.100.${++address}` } });
const passwordOf = (who: Actor) => `password-${who.email}`;

const subjectOf = (email: string) => `account:${accountSubject(email).id}`;
const failuresOf = (email: string) => svc.ctx.db.selectFrom('secret_failures').selectAll().where('subject', '=', subjectOf(email)).executeTakeFirst();

/** The wait the account owes is over: its last wrong try moved a minute back (past every wait here, well within --lockout-forget-ms). */
const skipTheWait = (email: string) =>
  svc.ctx.db.updateTable('secret_failures').set({ last_failure_at: Date.now() - 60_000 }).where('subject', '=', subjectOf(email)).execute();

/** `attempt` once the account's wait is over. */
async function afterTheWait<T>(email: string, attempt: () => Promise<T>): Promise<T> {
  await skipTheWait(email);
  return attempt();
}

const retryAfter = (headers: Headers) => {
  const s = Number(headers.get('retry-after'));
  expect(Number.isInteger(s) && s >= 1).toBe(true);
  return s;
};


describe('wrong passwords for one account, from many addresses', () => {
  test('after the free tries the next waits (429, Retry-After), even with the right password; another account is unaffected', async () => {
    expect((await signIn(victim.email, 'guess 1')).status).toBe(401);
    expect((await signIn(victim.email, 'guess 2')).status).toBe(401);
    const held = await signIn(victim.email, passwordOf(victim));
    expect(held.status).toBe(429);
    expect(held.body).toEqual({ code: 'too_many_attempts', message: expect.stringMatching(/wait \d+ s/) });
    retryAfter(held.headers);
    // The same address and password for another account: signed in.
    expect((await signIn(bystander.email, passwordOf(bystander))).status).toBe(200);
    // Once the wait is over the right password signs in, and the wrong tries are forgotten.
    expect((await afterTheWait(victim.email, () => signIn(victim.email, passwordOf(victim)))).status).toBe(200);
    expect(await failuresOf(victim.email)).toBeUndefined();
  });

  test('after N wrong tries the account is locked for a bounded time: the right password answers 429 locked_out; the lock ends', async () => {
    for (let i = 1; i <= 5; i++) expect((await afterTheWait(victim.email, () => signIn(victim.email, `guess ${i}`))).status).toBe(401);
    const row = await failuresOf(victim.email);
    expect(row).toMatchObject({ address: '*', failures: 5 });
    const locked = await signIn(victim.email, passwordOf(victim));
    expect(locked.status).toBe(429);
    expect(locked.body).toEqual({ code: 'locked_out', message: 'too many wrong attempts: signing in with this e-mail is locked for 10 min' });
    expect(retryAfter(locked.headers)).toBeGreaterThan(60);
    expect(retryAfter(locked.headers)).toBeLessThanOrEqual(600);
    // The password change of a session opened before counts the same, and is held back too.
    const token = await svc.ctx.tokens.signUser(victim.userId, 0);
    const change = await call(svc.url, 'POST', '/v1/me/password', { headers: { 'x-user-token': token }, body: { current_password: passwordOf(victim), new_password: 'a new password' } });
    expect(change.status).toBe(429);
    expect(change.body.code).toBe('locked_out');
    expect((await signIn(bystander.email, passwordOf(bystander))).status).toBe(200);
    // The lock runs out (moved to the past here): the right password signs in again.
    await svc.ctx.db.updateTable('secret_failures').set({ locked_until: Date.now() - 1 }).where('subject', '=', subjectOf(victim.email)).execute();
    expect((await signIn(victim.email, passwordOf(victim))).status).toBe(200);
  });

  test('an unknown e-mail is answered exactly as a known one: 401, then the same 429s', async () => {
    const known: { status: number; body: unknown }[] = [];
    const unknown: { status: number; body: unknown }[] = [];
    for (const [email, out] of [[bystander.email, known], ['nobody-here@example.com', unknown]] as const) {
      for (let i = 1; i <= 3; i++) {
        const r = await signIn(email, `guess ${i}`);
        out.push({ status: r.status, body: r.body });
      }
    }
    expect(known.map((r) => r.status)).toEqual([401, 401, 429]);
    expect(unknown).toEqual(known);
    // By the normalized e-mail: another spelling of it is the same account.
    expect((await signIn('NOBODY-HERE@Example.com', 'guess 4')).body.code).toBe('too_many_attempts');
  });

  test('the operator\'s password reset lifts the lock', async () => {
    const who = await newActor(svc, 'reset-lock@example.com');
    for (let i = 1; i <= 5; i++) expect((await afterTheWait(who.email, () => signIn(who.email, `guess ${i}`))).status).toBe(401);
    expect((await signIn(who.email, passwordOf(who))).body.code).toBe('locked_out');
    await resetPassword(svc.ctx.db, { id: who.userId, email: who.email }, 'given by the operator');
    expect((await signIn(who.email, 'given by the operator')).status).toBe(200);
  });
});
