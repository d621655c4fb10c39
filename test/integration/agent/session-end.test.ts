// How a session ends and how an --api-key session starts, against the real service:
// a refusal of the session's token or key (renewal or use) removes the session; a
// service that cannot be reached at start is retried in the background.
import fs from 'node:fs/promises';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { Writable } from 'node:stream';
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, test, vi } from 'vitest';
import { call, startTestService, type TestService } from '../../helpers/hosted.js';
import { openEventStream, startTestAgent, type TestAgent } from '../../helpers/agent.js';
import { newActor, ownerActor } from '../../helpers/auth.js';
import { resolveAgentConfig } from '../../../src/agent/config.js';
import { startAgent } from '../../../src/agent/index.js';
import { openAgentDb } from '../../../src/agent/store/db.js';
import { loadSession } from '../../../src/agent/store/sessionStore.js';

const SESSION_NIL = { code: 262146, message: 'session is nil' };
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const expOf = (token: string): number => (JSON.parse(Buffer.from(token.split('.')[1]!, 'base64url').toString()) as { exp: number }).exp;
/** The stored session row, read through the agent's own connection (it holds its database locked). */
const storedRow = (t: TestAgent) => t.agent.ctx.db.prepare('SELECT kind, secret FROM session').get() as { kind: string; secret: string } | undefined;

async function until(cond: () => boolean | Promise<boolean>, ms: number, what: string): Promise<void> {
  const end = Date.now() + ms;
  while (!(await cond())) {
    if (Date.now() > end) throw new Error(`not within ${ms} ms: ${what}`);
    await sleep(50);
  }
}

describe('a refusal by the service ends the session', () => {
  let svc: TestService;
  beforeAll(async () => {
    svc = await startTestService({ 'user-token-ttl': '4' });
  });
  afterAll(async () => {
    await svc?.close();
  });

  test('renewal refused (the user was removed on the service): session event {user: null}, the row is gone, GET /login answers 401 "session is nil"', async () => {
    const who = await newActor(svc, 'renew-refused@example.com');
    const a = await startTestAgent(svc);
    const events = await openEventStream(a.url, { query: 'types=session' });
    try {
      expect((await call(a.url, 'POST', '/login', { body: { email: who.email, password: `password-${who.email}` } })).status).toBe(200);
      await events.next((m) => m.json?.user?.id === who.userId);
      // Revoked on the service side; the agent finds out at its renewal (half-way through the 4 s life), not from a route.
      // However late that comes on a busy machine, the service refuses it: the user is gone (and by then maybe the token).
      await svc.ctx.db.deleteFrom('users').where('id', '=', who.userId).execute();
      const ended = await events.next((m) => m.event === 'session' && m.json?.user === null, 30_000);
      expect(ended.json).toEqual({ user: null });
      expect(storedRow(a)).toBeUndefined();
      const r = await call(a.url, 'GET', '/login');
      expect(r.status).toBe(401);
      expect(r.body).toEqual(SESSION_NIL);
      expect((await call(a.url, 'GET', '/teams')).body).toEqual(SESSION_NIL);
    } finally {
      events.close();
      await a.close();
    }
  });

  test('a token that expired while the agent was stopped: restarted, the agent renews it (the service allows a week of grace) and stays signed in', async () => {
    let a = await startTestAgent(svc);
    try {
      expect((await call(a.url, 'POST', '/login', { body: svc.owner })).status).toBe(200);
      const configDir = a.configDir;
      await a.agent.close();
      // The token the agent kept (renewed or not before it stopped), read once it has stopped; then
      // the test waits for the service to refuse it.
      const db = openAgentDb(path.join(configDir, 'agent.db'));
      const old = loadSession(db)!.secret;
      await db.shut();
      await vi.waitFor(async () => expect((await call(svc.url, 'GET', '/v1/me', { headers: { 'x-user-token': old } })).status).toBe(401), { timeout: 30_000, interval: 250 });
      a = await startTestAgent(svc, { 'config-dir': configDir });
      // Whichever comes first, the renewal at start or GET /login meeting the expired token, renews it.
      const r = await call(a.url, 'GET', '/login');
      expect(r.status, JSON.stringify(r.body)).toBe(200);
      expect(r.body.user.email).toBe(svc.owner.email);
      const renewed = storedRow(a)!.secret;
      expect(renewed).not.toBe(old);
      expect(expOf(renewed)).toBeGreaterThan(Date.now() / 1000);
    } finally {
      await a.close();
    }
  });

  test('refused on use (the API key was deactivated): the route that met it and those after answer 401 "session is nil"; the row is gone', async () => {
    const who = await newActor(svc, 'key-revoked@example.com');
    const a = await startTestAgent(svc, { 'api-key': who.apiKey });
    const h = { 'x-api-key': who.apiKey };
    const events = await openEventStream(a.url, { headers: h, query: 'types=session' });
    try {
      expect((await call(a.url, 'GET', '/teams', { headers: h })).status).toBe(200);
      expect(storedRow(a)?.kind).toBe('api_key');
      await svc.ctx.db.updateTable('api_keys').set({ state: 'inactive' }).where('user_id', '=', who.userId).execute();
      const first = await call(a.url, 'GET', '/teams', { headers: h });
      expect(first.status).toBe(401);
      expect(first.body).toEqual(SESSION_NIL);
      expect((await events.next((m) => m.json?.user === null)).json).toEqual({ user: null });
      expect(storedRow(a)).toBeUndefined();
      expect((await call(a.url, 'GET', '/login', { headers: h })).body).toEqual(SESSION_NIL);
    } finally {
      events.close();
      await a.close();
    }
  });

  test('signed out everywhere on the service (or a new password): the next route answers "session is nil", the row is gone, no retry', async () => {
    const who = await newActor(svc, 'signed-out-everywhere@example.com');
    const a = await startTestAgent(svc);
    const events = await openEventStream(a.url, { query: 'types=session' });
    try {
      expect((await call(a.url, 'POST', '/login', { body: { email: who.email, password: `password-${who.email}` } })).status).toBe(200);
      await events.next((m) => m.json?.user?.id === who.userId);
      // The user ends every session from elsewhere (a browser, another machine): the agent's token is revoked, not expired.
      const elsewhere = await call(svc.url, 'POST', '/v1/auth', { body: { email: who.email, password: `password-${who.email}` } });
      expect((await call(svc.url, 'POST', '/v1/auth/sign_out_everywhere', { headers: { 'x-user-token': elsewhere.body.token } })).status).toBe(204);
      // Whichever meets it first, a route or the renewal half-way through the 4 s life, ends the session.
      await until(async () => (await call(a.url, 'GET', '/teams')).status === 401, 30_000, 'the session ended');
      expect((await call(a.url, 'GET', '/teams')).body).toEqual(SESSION_NIL);
      expect((await events.next((m) => m.event === 'session' && m.json?.user === null)).json).toEqual({ user: null });
      expect(storedRow(a)).toBeUndefined();
      // Signing in again works (a new session of the new generation).
      expect((await call(a.url, 'POST', '/login', { body: { email: who.email, password: `password-${who.email}` } })).status).toBe(200);
      expect((await call(a.url, 'GET', '/teams')).status).toBe(200);
    } finally {
      events.close();
      await a.close();
    }
  });

  test('a network failure does not end the session: with the service stopped GET /login answers 502 and the row stays', async () => {
    const own = await startTestService();
    const a = await startTestAgent(own);
    try {
      expect((await call(a.url, 'POST', '/login', { body: own.owner })).status).toBe(200);
      await own.close();
      const r = await call(a.url, 'GET', '/login');
      expect(r.status).toBe(502);
      expect(storedRow(a)?.kind).toBe('credentials');
    } finally {
      await a.close();
    }
  });
});

describe('--api-key at start', () => {
  test('the service down at start: a stored session of someone else is dropped, and the key signs the agent in once the service is up', async () => {
    const dataDir = await fs.mkdtemp(path.join(os.tmpdir(), 'ferry-hosted-keep-'));
    let svc = await startTestService({ 'data-dir': dataDir });
    const port = new URL(svc.url).port;
    const keyOwner = await ownerActor(svc);
    const other = await newActor(svc, 'other@example.com');
    // An agent signed in by e-mail and password as another user, then stopped.
    let a = await startTestAgent(svc);
    expect((await call(a.url, 'POST', '/login', { body: { email: other.email, password: `password-${other.email}` } })).status).toBe(200);
    const configDir = a.configDir;
    await a.agent.close();
    await svc.close(); // the data dir stays: the same users and keys come back with the service
    const h = { 'x-api-key': keyOwner.apiKey };
    try {
      a = await startTestAgent(svc, { 'config-dir': configDir, 'api-key': keyOwner.apiKey });
      expect(storedRow(a)).toBeUndefined();
      expect((await call(a.url, 'GET', '/login', { headers: h })).body).toEqual(SESSION_NIL);
      await sleep(1_500); // a retry or so against nothing
      svc = await startTestService({ 'data-dir': dataDir, listen: `127.0.0.1:${port}` });
      await until(async () => (await call(a.url, 'GET', '/login', { headers: h })).status === 200, 10_000, 'signed in by the API key');
      const r = await call(a.url, 'GET', '/login', { headers: h });
      expect(r.body.user.id).toBe(keyOwner.userId);
      expect(storedRow(a)).toEqual({ kind: 'api_key', secret: keyOwner.apiKey });
    } finally {
      await a.close();
      await svc.close();
      await fs.rm(dataDir, { recursive: true, force: true });
    }
  });

  test('closing the agent while it retries stops the retries (no timer left behind)', async () => {
    // Something on the port that drops every connection: the service cannot be reached.
    let connections = 0;
    const dropper = net.createServer((s) => {
      connections++;
      s.destroy();
    });
    await new Promise<void>((r) => dropper.listen(0, '127.0.0.1', r));
    const url = `http://127.0.0.1:${(dropper.address() as net.AddressInfo).port}`;
    try {
      const a = await startTestAgent({ url }, { 'api-key': 'an-api-key-while-down' });
      const atStart = connections;
      expect(atStart).toBeGreaterThan(0);
      await until(() => connections > atStart, 3_000, 'a retry after about 1 s');
      await a.close();
      const atClose = connections;
      await sleep(4_000); // past the next retry (2 s after the last)
      expect(connections).toBe(atClose);
    } finally {
      await new Promise((r) => dropper.close(r));
    }
  });

  test('a key the service refuses is not retried: logged, and the session stays nil', async () => {
    const svc = await startTestService();
    const lines: string[] = [];
    const sink = new Writable({ write: (chunk, _enc, cb) => (lines.push(...String(chunk).split('\n').filter(Boolean)), cb()) });
    const configDir = await fs.mkdtemp(path.join(os.tmpdir(), 'ferry-agent-'));
    const config = resolveAgentConfig({ listen: '127.0.0.1:0', 'hosted-url': svc.url, 'config-dir': configDir, 'api-key': 'not-a-key-of-the-service' }, {});
    const agent = await startAgent(config, pino({ level: 'info' }, sink));
    try {
      const r = await call(agent.url!, 'GET', '/login', { headers: { 'x-api-key': 'not-a-key-of-the-service' } });
      expect(r.body).toEqual(SESSION_NIL);
      await sleep(2_500); // a retry would have come after 1 s
      const msgs = lines.map((l) => (JSON.parse(l) as { msg: string }).msg);
      expect(msgs.filter((m) => /refused the API key/.test(m))).toHaveLength(1);
      expect(msgs.filter((m) => /trying again/.test(m))).toHaveLength(0);
    } finally {
      await agent.close();
      await svc.close();
      await fs.rm(configDir, { recursive: true, force: true });
    }
  });
});
