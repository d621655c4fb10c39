// Sign-in (POST /v1/auth), its renewal (POST /v1/auth/refresh) and GET /v1/me
// with both kinds of credential.
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { call, startTestService, type TestService } from '../../helpers/hosted.js';
import { newActor, ownerActor, type Actor } from '../../helpers/auth.js';

let svc: TestService;
let owner: Actor;

beforeAll(async () => {
  svc = await startTestService();
  owner = await ownerActor(svc);
});
afterAll(() => svc?.close());

describe('POST /v1/auth', () => {
  test('the right e-mail and password answer a token and the user', async () => {
    const r = await call(svc.url, 'POST', '/v1/auth', { body: { email: svc.owner.email, password: svc.owner.password } });
    expect(r.status).toBe(200);
    expect(r.body.user).toEqual({ id: owner.userId, email: svc.owner.email, name: expect.any(String) });
    expect(typeof r.body.token).toBe('string');
    const me = await call(svc.url, 'GET', '/v1/me', { headers: { 'x-user-token': r.body.token } });
    expect(me.status).toBe(200);
    expect(me.body.id).toBe(owner.userId);
  });

  test('the e-mail is matched without regard to case', async () => {
    const r = await call(svc.url, 'POST', '/v1/auth', { body: { email: svc.owner.email.toUpperCase(), password: svc.owner.password } });
    expect(r.status).toBe(200);
    expect(r.body.user.id).toBe(owner.userId);
  });

  test('a wrong password and an unknown e-mail answer the same 401', async () => {
    const wrong = await call(svc.url, 'POST', '/v1/auth', { body: { email: svc.owner.email, password: 'not the password' } });
    const unknown = await call(svc.url, 'POST', '/v1/auth', { body: { email: 'nobody@example.com', password: 'not the password' } });
    expect(wrong.status).toBe(401);
    expect(unknown.status).toBe(401);
    expect(wrong.body).toEqual(unknown.body);
    expect(wrong.body.code).toBe('unauthorized');
    expect(JSON.stringify(wrong.body)).not.toMatch(/token/);
  });

  test('a body without a valid e-mail or without a password answers 400', async () => {
    for (const body of [{ email: 'not-an-email', password: 'x' }, { email: svc.owner.email }, { password: 'x' }, { email: svc.owner.email, password: '' }]) {
      const r = await call(svc.url, 'POST', '/v1/auth', { body });
      expect(r.status, JSON.stringify(body)).toBe(400);
      expect(r.body.code).toBe('validation_failed');
    }
  });

  test('a password given as a number is refused, not coerced', async () => {
    const r = await call(svc.url, 'POST', '/v1/auth', { body: { email: svc.owner.email, password: 12345678 } });
    expect(r.status).toBe(400);
  });

  test('malformed JSON answers 400', async () => {
    const r = await call(svc.url, 'POST', '/v1/auth', { raw: '{"email":' });
    expect(r.status).toBe(400);
    expect(r.body.code).toBe('malformed_json');
  });
});

const expOf = (token: string): number => (JSON.parse(Buffer.from(token.split('.')[1]!, 'base64url').toString()) as { exp: number }).exp;

describe('POST /v1/auth/refresh', () => {
  test('a valid user token buys a fresh one for the same user, which works', async () => {
    const first = await call(svc.url, 'POST', '/v1/auth', { body: { email: svc.owner.email, password: svc.owner.password } });
    await new Promise((r) => setTimeout(r, 1100)); // a later second: a later exp
    const r = await call(svc.url, 'POST', '/v1/auth/refresh', { headers: { 'x-user-token': first.body.token } });
    expect(r.status).toBe(200);
    expect(r.body.user).toEqual(first.body.user);
    expect(expOf(r.body.token)).toBeGreaterThan(expOf(first.body.token));
    const me = await call(svc.url, 'GET', '/v1/me', { headers: { 'x-user-token': r.body.token } });
    expect(me.body.id).toBe(owner.userId);
  });

  test('an API key, a forged token or none answers 401: only a user token renews', async () => {
    const tries: Record<string, string>[] = [{ 'x-api-key': owner.apiKey }, { 'x-user-token': 'not.a.token' }, {}];
    for (const headers of tries) {
      const r = await call(svc.url, 'POST', '/v1/auth/refresh', { headers });
      expect(r.status, JSON.stringify(headers)).toBe(401);
      expect(r.body.code).toBe('unauthorized');
    }
  });

  test('a token that expired (within the week of grace) opens nothing, but still renews: a client cut off by an outage stays signed in', async () => {
    const short = await startTestService({ 'user-token-ttl': '2' });
    try {
      const t = await call(short.url, 'POST', '/v1/auth', { body: { email: short.owner.email, password: short.owner.password } });
      while (Date.now() / 1000 < expOf(t.body.token) + 1) await new Promise((r) => setTimeout(r, 200));
      const expired = { 'x-user-token': t.body.token };
      expect((await call(short.url, 'GET', '/v1/me', { headers: expired })).status).toBe(401);
      const r = await call(short.url, 'POST', '/v1/auth/refresh', { headers: expired });
      expect(r.status).toBe(200);
      expect(expOf(r.body.token)).toBeGreaterThan(Date.now() / 1000);
      expect((await call(short.url, 'GET', '/v1/me', { headers: { 'x-user-token': r.body.token } })).status).toBe(200);
    } finally {
      await short.close();
    }
  });
});

describe('GET /v1/me', () => {
  test('an API key answers its owner', async () => {
    const r = await call(svc.url, 'GET', '/v1/me', { headers: owner.h });
    expect(r.status).toBe(200);
    expect(r.body).toEqual({ id: owner.userId, email: svc.owner.email, name: expect.any(String) });
  });

  test('a user token answers its user, also for a plain member', async () => {
    const member = await newActor(svc, 'me-member@example.com', { teamId: owner.teamId, role: 'member' });
    const r = await call(svc.url, 'GET', '/v1/me', { headers: { 'x-user-token': member.userToken } });
    expect(r.status).toBe(200);
    expect(r.body).toEqual({ id: member.userId, email: 'me-member@example.com', name: 'me-member' });
  });

  test('no credential, an unknown key or a forged token answer 401', async () => {
    expect((await call(svc.url, 'GET', '/v1/me')).status).toBe(401);
    expect((await call(svc.url, 'GET', '/v1/me', { headers: { 'x-api-key': 'fk_nope' } })).status).toBe(401);
    const forged = owner.userToken.slice(0, -4) + (owner.userToken.endsWith('AAAA') ? 'BBBB' : 'AAAA');
    expect((await call(svc.url, 'GET', '/v1/me', { headers: { 'x-user-token': forged } })).status).toBe(401);
  });

  test('the token of a deleted user answers 401', async () => {
    const gone = await newActor(svc, 'deleted@example.com');
    await svc.ctx.db.deleteFrom('users').where('id', '=', gone.userId).execute();
    expect((await call(svc.url, 'GET', '/v1/me', { headers: { 'x-user-token': gone.userToken } })).status).toBe(401);
  });
});

test('passwords are stored as salted scrypt hashes, never in clear', async () => {
  const row = await svc.ctx.db.selectFrom('users').select('password_hash').where('id', '=', owner.userId).executeTakeFirstOrThrow();
  expect(row.password_hash).toMatch(/^scrypt\$/);
  expect(row.password_hash).not.toContain(svc.owner.password);
});
