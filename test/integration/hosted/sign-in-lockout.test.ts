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
  svc = await startTestService({ 'trust-proxy': 'true', 'lockout-free': '2', 'lockout-delay-ms': '200', 'lockout-after': '5', 'lockout-ms': '600000' });
  victim = await newActor(svc, 'victim@example.com');
  bystander = await newActor(svc, 'bystander@example.com');
});
afterAll(() => svc?.close());

let address = 0;
/** Each attempt from an address of its own, as from a botnet. */
const signIn = (email: string, password: string) =>
  call(svc.url, 'POST', '/v1/auth', { body: { email, password }, headers: { 'x-forwarded-for': `198.51.100.${++address}` } });
const passwordOf = (who: Actor) => `password-${who.email}`;

/** Repeats `attempt` while it answers 429 too_many_attempts (a wait), and returns the first other answer. */
async function afterTheWait<T extends { status: number; body: any }>(attempt: () => Promise<T>): Promise<T> {
  for (;;) {
    const r = await attempt();
    if (r.status !== 429 || r.body.code !== 'too_many_attempts') return r;
    await new Promise((res) => setTimeout(res, 100));
  }
}

const retryAfter = (headers: Headers) => {
  const s = Number(headers.get('retry-after'));
  expect(Number.isInteger(s) && s >= 1).toBe(true);
  return s;
};

const failuresOf = (email: string) =>
  svc.ctx.db.selectFrom('secret_failures').selectAll().where('subject', '=', `account:${accountSubject(email).id}`).executeTakeFirst();

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
    expect((await afterTheWait(() => signIn(victim.email, passwordOf(victim)))).status).toBe(200);
    expect(await failuresOf(victim.email)).toBeUndefined();
  });

  test('after N wrong tries the account is locked for a bounded time: the right password answers 429 locked_out; the lock ends', async () => {
    for (let i = 1; i <= 5; i++) expect((await afterTheWait(() => signIn(victim.email, `guess ${i}`))).status).toBe(401);
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
    await svc.ctx.db.updateTable('secret_failures').set({ locked_until: Date.now() - 1 }).where('subject', '=', row!.subject).execute();
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
    for (let i = 1; i <= 5; i++) expect((await afterTheWait(() => signIn(who.email, `guess ${i}`))).status).toBe(401);
    expect((await signIn(who.email, passwordOf(who))).body.code).toBe('locked_out');
    await resetPassword(svc.ctx.db, { id: who.userId, email: who.email }, 'given by the operator');
    expect((await signIn(who.email, 'given by the operator')).status).toBe(200);
  });
});
