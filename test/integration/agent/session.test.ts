// The agent's Session routes: POST/GET/DELETE /login and GET /teams, against the real service.
import fs from 'node:fs/promises';
import path from 'node:path';
import { SignJWT } from 'jose';
import { afterAll, beforeAll, describe, expect, test, vi } from 'vitest';
import { call, startTestService, type TestService } from '../../helpers/hosted.js';
import { startTestAgent, type TestAgent } from '../../helpers/agent.js';
import { ownerActor, type Actor } from '../../helpers/auth.js';
import { AgentErrorCode } from '../../../src/api/agent/errors.js';

const SESSION_NIL = { code: 262146, message: 'session is nil' };
const expOf = (token: string): number => (JSON.parse(Buffer.from(token.split('.')[1]!, 'base64url').toString()) as { exp: number }).exp;
/** A user token of `svc`'s, signed with its own key (kept in its data dir), with the iat and exp given (seconds). */
const userToken = async (userId: string, iat: number, exp: number): Promise<string> =>
  new SignJWT({ typ: 'user' }).setProtectedHeader({ alg: 'HS256' }).setSubject(userId).setIssuedAt(iat).setExpirationTime(exp)
    .sign(Buffer.from((await fs.readFile(path.join(svc.dataDir, 'signing.key'), 'utf8')).trim(), 'base64'));

let svc: TestService;
let owner: Actor;
let a: TestAgent;

beforeAll(async () => {
  svc = await startTestService();
  owner = await ownerActor(svc);
  a = await startTestAgent(svc);
});
afterAll(async () => {
  await a?.close();
  await svc?.close();
});

const teamShape = {
  id: expect.any(String), name: expect.any(String), subdomain: expect.any(String),
  max_email_recipients: expect.any(Number), custom_expiry_enabled: expect.any(Boolean), custom_expiry_default: expect.any(Number),
  download_limit_enabled: expect.any(Boolean), download_limit_default: expect.any(Number),
};

describe('without a session', () => {
  test('GET /login answers 401 {code: 262146, message: "session is nil"}', async () => {
    const r = await call(a.url, 'GET', '/login');
    expect(r.status).toBe(401);
    expect(r.body).toEqual(SESSION_NIL);
  });

  test('GET /teams answers 401 262146', async () => {
    const r = await call(a.url, 'GET', '/teams');
    expect(r.status).toBe(401);
    expect(r.body).toEqual(SESSION_NIL);
  });
});

describe('POST /login refusals', () => {
  test.each([
    ['no body', undefined],
    ['no password', { email: 'owner@example.com' }],
    ['an empty password', { email: 'owner@example.com', password: '' }],
    ['an e-mail that is not one', { email: 'not-an-email', password: 'x' }],
    ['a password that is a number', { email: 'owner@example.com', password: 12345678 }],
  ])('%s: 400 {code, message}', async (_what, body) => {
    const r = await call(a.url, 'POST', '/login', body === undefined ? {} : { body });
    expect(r.status).toBe(400);
    expect(r.body).toMatchObject({ code: AgentErrorCode.badRequest, message: expect.any(String) });
    expect(r.body.message).not.toMatch(/must /);
  });

  test('a body that is not JSON: 400', async () => {
    const r = await call(a.url, 'POST', '/login', { raw: '{email' });
    expect(r.status).toBe(400);
    expect(r.body.code).toBe(AgentErrorCode.badRequest);
  });

  test('a wrong password: 401 with the integer code, and still no session', async () => {
    const r = await call(a.url, 'POST', '/login', { body: { email: svc.owner.email, password: 'wrong password' } });
    expect(r.status).toBe(401);
    expect(r.body).toEqual({ code: AgentErrorCode.sessionNil, message: expect.any(String) });
    expect((await call(a.url, 'GET', '/login')).status).toBe(401);
  });

  test('an unknown user: 401', async () => {
    const r = await call(a.url, 'POST', '/login', { body: { email: 'nobody@example.com', password: 'whatever1' } });
    expect(r.status).toBe(401);
    expect(r.body.code).toBe(AgentErrorCode.sessionNil);
  });
});

describe('a session by e-mail and password', () => {
  test('POST /login answers the user and their Teams', async () => {
    const r = await call(a.url, 'POST', '/login', { body: svc.owner });
    expect(r.status).toBe(200);
    expect(r.body.user).toEqual({ id: owner.userId, email: svc.owner.email, name: expect.any(String) });
    expect(r.body.teams).toEqual([{ ...teamShape, id: owner.teamId }]);
  });

  test('GET /login answers the same session', async () => {
    const r = await call(a.url, 'GET', '/login');
    expect(r.status).toBe(200);
    expect(r.body.user.id).toBe(owner.userId);
    expect(r.body.teams.map((t: { id: string }) => t.id)).toEqual([owner.teamId]);
  });

  test('GET /teams answers the Teams array', async () => {
    const r = await call(a.url, 'GET', '/teams');
    expect(r.status).toBe(200);
    expect(r.body).toEqual([{ ...teamShape, id: owner.teamId }]);
  });

  test('the session survives a restart of the agent (it is kept in SQLite)', async () => {
    await a.agent.close();
    const again = await startTestAgent(svc, { 'config-dir': a.configDir });
    try {
      const r = await call(again.url, 'GET', '/login');
      expect(r.status).toBe(200);
      expect(r.body.user.id).toBe(owner.userId);
    } finally {
      await again.agent.close();
    }
    a = await startTestAgent(svc, { 'config-dir': a.configDir });
  });

  test('DELETE /login signs out: {code: 0}, then 401 262146', async () => {
    const r = await call(a.url, 'DELETE', '/login');
    expect(r.status).toBe(200);
    expect(r.body).toEqual({ code: 0 });
    expect((await call(a.url, 'GET', '/login')).body).toEqual(SESSION_NIL);
    expect((await call(a.url, 'GET', '/teams')).status).toBe(401);
  });

  test('DELETE /login without a session is fine too', async () => {
    const r = await call(a.url, 'DELETE', '/login');
    expect(r.status).toBe(200);
    expect(r.body).toEqual({ code: 0 });
  });
});

test('a session by the --api-key start flag needs no POST /login', async () => {
  const keyed = await startTestAgent(svc, { 'api-key': owner.apiKey });
  try {
    const h = { 'x-api-key': owner.apiKey };
    const r = await call(keyed.url, 'GET', '/login', { headers: h });
    expect(r.status).toBe(200);
    expect(r.body.user.id).toBe(owner.userId);
    const t = await call(keyed.url, 'GET', '/teams', { headers: h });
    expect(t.body.map((x: { id: string }) => x.id)).toEqual([owner.teamId]);
  } finally {
    await keyed.close();
  }
});

test('a signed-in agent, restarted, renews its stored user token at half-life from its own timer and stays signed in past that token\'s lifetime', async () => {
  // The test decides when the token is due: it signs one with the service's own key, half-way
  // through its life in a second and expiring 10 s on, and leaves it for the agent to find at a
  // restart. The service's renewals last 12 h, so nothing else comes due meanwhile.
  let agent = await startTestAgent(svc);
  try {
    expect((await call(agent.url, 'POST', '/login', { body: svc.owner })).status).toBe(200);
    // Through the agent's own connection: it holds its database locked (one agent per config dir).
    const storedToken = () => (agent.agent.ctx.db.prepare('SELECT secret FROM session').get() as { secret: string } | undefined)?.secret;
    const now = Math.floor(Date.now() / 1000);
    const first = await userToken(owner.userId, now - 8, now + 10);
    agent.agent.ctx.db.prepare('UPDATE session SET secret = ?').run(first);
    await agent.agent.close();
    agent = await startTestAgent(svc, { 'config-dir': agent.configDir });

    const renewed = await vi.waitFor(() => {
      const t = storedToken();
      expect(t, 'the session has ended').toBeDefined();
      expect(t).not.toBe(first);
      return t!;
    }, { timeout: 30_000, interval: 50 });
    expect(expOf(renewed)).toBeGreaterThan(expOf(first));
    // Once the service refuses the first token, the agent is still signed in, by the renewed one.
    await vi.waitFor(async () => expect((await call(svc.url, 'GET', '/v1/me', { headers: { 'x-user-token': first } })).status).toBe(401), { timeout: 30_000, interval: 250 });
    const r = await call(agent.url, 'GET', '/login');
    expect(r.status, JSON.stringify(r.body)).toBe(200);
    expect(r.body.user.email).toBe(svc.owner.email);
    expect((await call(agent.url, 'GET', '/teams')).status).toBe(200);
    expect(storedToken()).toBe(renewed);
  } finally {
    await agent.close();
  }
});

test('POST /login while the service is unreachable: 502 with an integer code', async () => {
  await svc.close();
  try {
    const r = await call(a.url, 'POST', '/login', { body: svc.owner });
    expect(r.status).toBe(502);
    expect(r.body).toEqual({ code: AgentErrorCode.upstream, message: expect.any(String) });
  } finally {
    svc = await startTestService();
  }
});
