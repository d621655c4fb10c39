// Ending user sessions (issue #32 item 7): a password change, a reset by the
// operator and "sign out everywhere" revoke every user token signed before, on
// every route, on the renewal, in open event streams and on every instance of one
// database; a chain of renewals stops --max-session-days after the sign-in.
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, test, vi } from 'vitest';
import { call, startTestService, type TestService } from '../../helpers/hosted.js';
import { newActor, type Actor } from '../../helpers/auth.js';
import { openEventStream } from '../../helpers/agent.js';
import { startObjectStore, type RunningObjectStore } from '../../../src/objectstore/index.js';
import { setPassword } from '../../../src/hosted/services/accounts.js';

let svc: TestService;

beforeAll(async () => {
  svc = await startTestService({ 'events-heartbeat-ms': '100' });
});
afterAll(() => svc?.close());

const passwordOf = (who: Actor) => `password-${who.email}`;
const signIn = (base: string, email: string, password: string) => call(base, 'POST', '/v1/auth', { body: { email, password } });
const me = (base: string, token: string) => call(base, 'GET', '/v1/me', { headers: { 'x-user-token': token } });
const refresh = (base: string, token: string) => call(base, 'POST', '/v1/auth/refresh', { headers: { 'x-user-token': token } });
const signOutEverywhere = (base: string, token: string) => call(base, 'POST', '/v1/auth/sign_out_everywhere', { headers: { 'x-user-token': token } });
const changePassword = (base: string, token: string, body: unknown) => call(base, 'POST', '/v1/me/password', { headers: { 'x-user-token': token }, body });

/** Two sessions of one new user (say a laptop and a stolen copy), both working. */
async function twoSessions(email: string) {
  const who = await newActor(svc, email);
  const a = await signIn(svc.url, who.email, passwordOf(who));
  const b = await signIn(svc.url, who.email, passwordOf(who));
  expect(a.status).toBe(200);
  expect((await me(svc.url, a.body.token)).status).toBe(200);
  expect((await me(svc.url, b.body.token)).status).toBe(200);
  return { who, a: a.body.token as string, b: b.body.token as string };
}

/** Refused on use and on renewal alike. */
async function expectRevoked(base: string, token: string) {
  const use = await me(base, token);
  expect(use.status).toBe(401);
  expect(use.body).toEqual({ code: 'unauthorized', message: expect.stringMatching(/session has ended/) });
  const renewal = await refresh(base, token);
  expect(renewal.status).toBe(401);
  expect(renewal.body.code).toBe('unauthorized');
}

describe('a new password ends every earlier session', () => {
  test('a reset (setPassword, which ferry admin reset-password runs): earlier tokens are refused on use and on renewal; a new sign-in works', async () => {
    const { who, a, b } = await twoSessions('reset@example.com');
    await setPassword(svc.ctx.db, who.userId, 'a-new-password');
    await expectRevoked(svc.url, a);
    await expectRevoked(svc.url, b);
    const again = await signIn(svc.url, who.email, 'a-new-password');
    expect(again.status).toBe(200);
    expect((await me(svc.url, again.body.token)).status).toBe(200);
    // API keys are credentials of their own: a new password leaves them alone.
    expect((await call(svc.url, 'GET', '/v1/me', { headers: who.h })).status).toBe(200);
  });

  test('POST /v1/me/password answers a fresh token for the caller; every other session ends, the old password too', async () => {
    const { who, a, b } = await twoSessions('change@example.com');
    const r = await changePassword(svc.url, a, { current_password: passwordOf(who), new_password: 'brand new secret' });
    expect(r.status, JSON.stringify(r.body)).toBe(200);
    expect(r.body).toEqual({ token: expect.any(String), user: { id: who.userId, email: who.email, name: expect.any(String) } });
    expect((await me(svc.url, r.body.token)).status).toBe(200);
    expect((await refresh(svc.url, r.body.token)).status).toBe(200);
    await expectRevoked(svc.url, a);
    await expectRevoked(svc.url, b);
    expect((await signIn(svc.url, who.email, passwordOf(who))).status).toBe(401);
    expect((await signIn(svc.url, who.email, 'brand new secret')).status).toBe(200);
  });

  test('a wrong current password answers 403 wrong_password and changes nothing; a short new one 400; an API key or no token 401', async () => {
    const { who, a } = await twoSessions('change-refused@example.com');
    const wrong = await changePassword(svc.url, a, { current_password: 'not it', new_password: 'brand new secret' });
    expect(wrong.status).toBe(403);
    expect(wrong.body).toEqual({ code: 'wrong_password', message: 'the current password is wrong' });
    const short = await changePassword(svc.url, a, { current_password: passwordOf(who), new_password: 'short' });
    expect(short.status).toBe(400);
    expect(short.body.code).toBe('validation_failed');
    for (const headers of [who.h, {}, { 'x-user-token': 'not.a.token' }]) {
      const r = await call(svc.url, 'POST', '/v1/me/password', { headers, body: { current_password: passwordOf(who), new_password: 'brand new secret' } });
      expect(r.status, JSON.stringify(headers)).toBe(401);
    }
    // Nothing changed: the session and the password are as they were.
    expect((await me(svc.url, a)).status).toBe(200);
    expect((await signIn(svc.url, who.email, passwordOf(who))).status).toBe(200);
  });
});

describe('POST /v1/auth/sign_out_everywhere', () => {
  test('answers 204 and ends every session of the user, the caller\'s included; another user\'s sessions and API keys stay', async () => {
    const { who, a, b } = await twoSessions('everywhere@example.com');
    const other = await twoSessions('bystander@example.com');
    const r = await signOutEverywhere(svc.url, b);
    expect(r.status).toBe(204);
    expect(r.body).toBe('');
    await expectRevoked(svc.url, a);
    await expectRevoked(svc.url, b);
    expect((await me(svc.url, other.a)).status).toBe(200);
    expect((await call(svc.url, 'GET', '/v1/me', { headers: who.h })).status).toBe(200);
    const again = await signIn(svc.url, who.email, passwordOf(who));
    expect((await me(svc.url, again.body.token)).status).toBe(200);
  });

  test('takes a user token only: an API key, a revoked token or none answer 401', async () => {
    const { who, a } = await twoSessions('everywhere-refused@example.com');
    expect((await call(svc.url, 'POST', '/v1/auth/sign_out_everywhere', { headers: who.h })).status).toBe(401);
    expect((await call(svc.url, 'POST', '/v1/auth/sign_out_everywhere')).status).toBe(401);
    expect((await me(svc.url, a)).status).toBe(200);
    expect((await signOutEverywhere(svc.url, a)).status).toBe(204);
    expect((await signOutEverywhere(svc.url, a)).status).toBe(401);
  });

  test('an event stream opened with a revoked token ends (at the next heartbeat); opening it again answers 401', async () => {
    const { who, a } = await twoSessions('everywhere-stream@example.com');
    const headers = { 'x-user-token': a };
    const stream = await openEventStream(`${svc.url}/v1/teams/${who.teamId}`, { headers });
    try {
      expect(stream.status).toBe(200);
      // One held by the API key stays open.
      const keyed = await openEventStream(`${svc.url}/v1/teams/${who.teamId}`, { headers: who.h });
      try {
        expect((await signOutEverywhere(svc.url, a)).status).toBe(204);
        expect(await stream.ended).toBe(true);
        const again = await openEventStream(`${svc.url}/v1/teams/${who.teamId}`, { headers });
        expect(again.status).toBe(401);
        again.close();
        const pkg = await call(svc.url, 'POST', `/v1/teams/${who.teamId}/packages`, { headers: who.h, body: { name: 'after', description: '', recipients: [] } });
        expect(pkg.status).toBe(201);
        expect((await keyed.next((m) => m.event === 'package.created')).json.package_id).toBe(pkg.body.id);
      } finally {
        keyed.close();
      }
    } finally {
      stream.close();
    }
  });
});

describe('the renewal chain is bounded by --max-session-days', () => {
  let short: TestService;
  beforeAll(async () => {
    short = await startTestService({ 'max-session-days': '1' });
  });
  afterAll(() => short?.close());
  afterEach(() => {
    vi.useRealTimers();
  });

  const authTimeOf = (token: string): number => (JSON.parse(Buffer.from(token.split('.')[1]!, 'base64url').toString()) as { auth_time: number }).auth_time;

  test('each renewal carries the sign-in time on; once the sign-in is older than the maximum, the renewal is refused', async () => {
    const signedIn = await signIn(short.url, short.owner.email, short.owner.password);
    expect(signedIn.status).toBe(200);
    const start = Date.now();
    const began = authTimeOf(signedIn.body.token);
    // The service's clock (this process's Date) moves on as it would for a client that stays
    // running and renews half-way through each 12-hour token.
    vi.useFakeTimers({ toFake: ['Date'], now: start });
    let token = signedIn.body.token as string;
    for (const hours of [6, 12, 18]) {
      vi.setSystemTime(start + hours * 3600_000);
      const r = await refresh(short.url, token);
      expect(r.status, `after ${hours} h: ${JSON.stringify(r.body)}`).toBe(200);
      expect(authTimeOf(r.body.token)).toBe(began);
      token = r.body.token;
    }
    vi.setSystemTime(start + 24 * 3600_000 + 1000);
    // The last token is still valid (it was signed 6 h ago): it opens, but renews no more.
    expect((await me(short.url, token)).status).toBe(200);
    const refused = await refresh(short.url, token);
    expect(refused.status).toBe(401);
    expect(refused.body).toEqual({ code: 'unauthorized', message: expect.stringMatching(/began more than 1 days ago: sign in again/) });
    // Signing in with the password begins a new session.
    const again = await signIn(short.url, short.owner.email, short.owner.password);
    expect(again.status).toBe(200);
    expect((await refresh(short.url, again.body.token)).status).toBe(200);
  });

  test('a token kept past its expiry (within the grace) is no way around the maximum either', async () => {
    const signedIn = await signIn(short.url, short.owner.email, short.owner.password);
    const start = Date.now();
    vi.useFakeTimers({ toFake: ['Date'], now: start });
    // Expired 8 h ago, well within the week of grace, but the sign-in is 20 h old: renews.
    vi.setSystemTime(start + 20 * 3600_000);
    expect((await me(short.url, signedIn.body.token)).status).toBe(401);
    expect((await refresh(short.url, signedIn.body.token)).status).toBe(200);
    // The same token a day and a half after the sign-in: refused.
    vi.setSystemTime(start + 36 * 3600_000);
    expect((await refresh(short.url, signedIn.body.token)).status).toBe(401);
  });
});

describe('several instances on one database', () => {
  let store: RunningObjectStore;
  let dataDir: string;
  let storeDir: string;
  const instances: TestService[] = [];

  beforeAll(async () => {
    storeDir = await fs.mkdtemp(path.join(os.tmpdir(), 'ferry-sessions-store-'));
    dataDir = await fs.mkdtemp(path.join(os.tmpdir(), 'ferry-sessions-'));
    const creds = { accessKey: 'SESSIONSSTOREKEY', secretKey: 'sessions-store-secret-of-the-instances' };
    store = await startObjectStore({ host: '127.0.0.1', port: 0, dataDir: storeDir, ...creds, buckets: ['sessions'] });
    const external = { 's3-endpoint': store.url, 's3-bucket': 'sessions', 's3-access-key': creds.accessKey, 's3-secret-key': creds.secretKey, 's3-path-style': true };
    // One data dir (its signing key, and on PostgreSQL its database) shared by both.
    instances.push(await startTestService(external, dataDir));
    instances.push(await startTestService(external, dataDir));
  }, 60_000);
  afterAll(async () => {
    await instances[1]?.stop();
    await instances[0]?.close();
    await store?.close();
    await fs.rm(storeDir, { recursive: true, force: true });
  });

  test('a session ended on one instance is refused by the other at once, on use and on renewal', async () => {
    const [one, two] = instances as [TestService, TestService];
    const { email, password } = one.owner;
    const first = await signIn(one.url, email, password);
    const second = await signIn(two.url, email, password);
    // Each instance has verified (and keeps) both tokens.
    for (const base of [one.url, two.url]) for (const t of [first.body.token, second.body.token]) expect((await me(base, t)).status).toBe(200);
    expect((await signOutEverywhere(one.url, first.body.token)).status).toBe(204);
    await expectRevoked(two.url, second.body.token);
    await expectRevoked(two.url, first.body.token);
    // And a new password set through the other instance ends the session begun on the first.
    const third = await signIn(one.url, email, password);
    expect((await me(one.url, third.body.token)).status).toBe(200);
    const fourth = await signIn(two.url, email, password);
    const changed = await changePassword(two.url, fourth.body.token, { current_password: password, new_password: 'shared new password' });
    expect(changed.status).toBe(200);
    await expectRevoked(one.url, third.body.token);
    expect((await me(one.url, changed.body.token)).status).toBe(200);
  });
});
