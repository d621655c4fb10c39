// The agent's /storage_gateway routes against a real service: register checks
// its body, its root and its ownership overrides, and tries the id and secret
// with the service before keeping anything (a wrong secret is 400, nothing
// kept); a second registration of an id is 409; unknown ids are 404; update
// changes root_path and the overrides (-1 removes one), applied to the next
// deliveries, which the files' owner shows; every change is on /events; the
// secret is never answered. A gateway that cannot reach its service says why in
// words (last_error). POST /storage_gateway/connections makes the connection on
// the service for an Owner or Admin, and tells a member why not. Bad bodies are
// in bad-input.test.ts.
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, startTestService, type TestService } from '../../helpers/hosted.js';
import { newActor, ownerActor, type Actor } from '../../helpers/auth.js';
import { openEventStream, signInAgent, startTestAgent, type TestAgent } from '../../helpers/agent.js';
import { AgentErrorCode } from '../../../src/api/agent/errors.js';
import { connectionAttached, gatewayConnection, gatewayRecord, portalWith, registerGateway, sendToPortal, settledTransfers } from '../../helpers/gateway.js';
import { skipBecause } from '../../helpers/skip.js';

let svc: TestService;
let owner: Actor;
let agent: TestAgent;
let tmp: string;

beforeAll(async () => {
  svc = await startTestService({ 'jobs-poll-ms': '50', 'gateway-recheck-ms': '200' });
  owner = await ownerActor(svc);
  agent = await startTestAgent(svc);
  tmp = await fs.mkdtemp(path.join(os.tmpdir(), 'ferry-gateway-routes-'));
});
afterAll(async () => {
  await agent?.close();
  await svc?.close();
  if (tmp) await fs.rm(tmp, { recursive: true, force: true });
});

const post = (p: string, body: unknown) => call(agent.url, 'POST', p, { body });

async function dir(name: string): Promise<string> {
  const d = path.join(tmp, name);
  await fs.mkdir(d, { recursive: true });
  return d;
}

describe('register', () => {
  it('refuses what cannot work, before anything is kept', async () => {
    const conn = await gatewayConnection(svc, owner);
    const root = await dir('refusals');
    const base = { id: conn.id, name: 'NAS', permissions: 'w', root_path: root, secret: conn.secret };
    const cases: [Record<string, unknown>, number, RegExp][] = [
      [{ ...base, secret: 'not-the-secret' }, 400, /refused this gateway's id and secret/],
      [{ ...base, id: 'ccn_unknown' }, 400, /refused this gateway's id and secret/],
      [{ ...base, root_path: 'relative/root' }, 400, /absolute/],
      [{ ...base, root_path: path.join(tmp, 'missing') }, 400, /root_path: the folder .* does not exist/],
      [{ ...base, root_path: path.join(root, '..', 'refusals', 'file.txt') }, 400, /cannot be used|not a folder/],
      [{ ...base, permissions: 'r', user_id: 1000 }, 400, /permissions w/],
    ];
    await fs.writeFile(path.join(root, 'file.txt'), 'x');
    for (const [body, status, message] of cases) {
      const r = await post('/storage_gateway/register', body);
      expect(r.status, JSON.stringify(body)).toBe(status);
      expect(r.body).toEqual({ code: AgentErrorCode.badRequest, message: expect.stringMatching(message) });
    }
    expect((await call(agent.url, 'GET', '/storage_gateway/list')).body).toEqual([]);
    expect((await connectionAttached(svc, owner, conn.id, false)).state).toBe('disconnected');
  });

  it('keeps a gateway whose service cannot be reached now, and connects it when it can', async () => {
    const other = await startTestAgent({ url: 'http://127.0.0.1:9' });
    try {
      const r = await call(other.url, 'POST', '/storage_gateway/register', { body: { id: 'ccn_later', name: 'Later', permissions: 'w', root_path: tmp, secret: 's' } });
      expect(r.status, JSON.stringify(r.body)).toBe(201);
      // In words, not the socket's "connect ECONNREFUSED 127.0.0.1:9".
      expect(r.body.last_error).toBe('the service cannot be reached: connection refused by 127.0.0.1:9');
      expect(r.body.service_url).toBe('http://127.0.0.1:9');
    } finally {
      await other.close();
    }
  });

  it('answers the record (secret masked), 409 for an id registered already, and is on /events', async () => {
    const conn = await gatewayConnection(svc, owner);
    const root = await dir('one');
    const events = await openEventStream(agent.url, { query: 'types=gateway' });
    const g = await registerGateway(agent.url, { id: conn.id, name: 'One', permissions: 'w', root_path: root, secret: conn.secret });
    expect(g).toEqual({
      id: conn.id,
      name: 'One',
      root_path: root,
      permissions: 'w',
      secret: '********',
      user_id: null,
      group_id: null,
      service_url: svc.url,
      state: expect.stringMatching(/^(connecting|connected)$/),
      last_error: null,
      connected_at: g.state === 'connected' ? expect.any(String) : null,
      next_attempt_at: null,
      transfers: [],
      created_at: expect.any(String),
      updated_at: expect.any(String),
    });
    expect(JSON.stringify(g)).not.toContain(conn.secret);
    const connected = await events.next((m) => m.event === 'gateway' && m.json.id === conn.id && m.json.state === 'connected');
    // The window keeps the newer of an answer and an event: the connection's change is newer than the answer when it came after.
    if (g.state === 'connecting') expect(connected.json.updated_at > g.updated_at).toBe(true);
    const again = await post('/storage_gateway/register', { id: conn.id, name: 'Two', permissions: 'w', root_path: root, secret: conn.secret });
    expect(again.status).toBe(409);
    expect(again.body.code).toBe(AgentErrorCode.conflict);
    const list = await call(agent.url, 'GET', '/storage_gateway/list');
    expect(list.body.map((x: any) => x.id)).toEqual([conn.id]);
    expect(JSON.stringify(list.body)).not.toContain(conn.secret);
    events.close();
    expect((await post('/storage_gateway/unregister', { id: conn.id })).status).toBe(200);
  });
});

describe('a new connection on the service', () => {
  it('is made for an Owner, its id and secret register a gateway that connects', async () => {
    const out = await post('/storage_gateway/connections', { name: 'From the app', permissions: 'w' });
    expect(out.status).toBe(401);
    await signInAgent(agent.url, svc);
    const made = await post('/storage_gateway/connections', { name: 'From the app', permissions: 'r' });
    expect(made.status, JSON.stringify(made.body)).toBe(201);
    expect(made.body).toEqual({ id: expect.any(String), secret: expect.any(String), name: 'From the app', permissions: 'r', team_id: owner.teamId });
    const conn = await call(svc.url, 'GET', `/v1/cloud_connections/${made.body.id}`, { headers: owner.h });
    expect(conn.body).toMatchObject({ name: 'From the app', provider: 'storage_gateway', direction: 'cloud_to_svc', state: 'disconnected' });
    const root = await dir('from-the-app');
    await registerGateway(agent.url, { id: made.body.id, name: 'From the app', permissions: 'r', root_path: root, secret: made.body.secret });
    expect((await connectionAttached(svc, owner, made.body.id, true)).gateway.connected).toBe(true);
    await post('/storage_gateway/unregister', { id: made.body.id });
    await call(agent.url, 'DELETE', '/login');
  });

  it('tells a member, in words, that only an Owner or an Admin can make one', async () => {
    const member = await newActor(svc, 'gateway-member@example.com', { teamId: owner.teamId, role: 'member' });
    const other = await startTestAgent(svc);
    try {
      const login = await call(other.url, 'POST', '/login', { body: { email: member.email, password: `password-${member.email}` } });
      expect(login.status, JSON.stringify(login.body)).toBe(200);
      const r = await call(other.url, 'POST', '/storage_gateway/connections', { body: { name: 'Not mine', permissions: 'w' } });
      expect(r.status).toBe(403);
      expect(r.body).toEqual({
        code: AgentErrorCode.forbidden,
        message: 'Only an Owner or an Admin of the Team can make a storage gateway connection. Ask one of them for a connection ID and secret.',
      });
      const list = await call(svc.url, 'GET', `/v1/teams/${owner.teamId}/cloud_connections`, { headers: owner.h });
      expect(list.body.map((c: any) => c.name)).not.toContain('Not mine');
    } finally {
      await other.close();
    }
  });
});

describe('unknown ids', () => {
  it('unregister and update answer 404', async () => {
    for (const [p, body] of [
      ['/storage_gateway/unregister', { id: 'ccn_nobody' }],
      ['/storage_gateway/update', { id: 'ccn_nobody', root_path: tmp }],
    ] as const) {
      const r = await post(p, body);
      expect(r.status, p).toBe(404);
      expect(r.body).toEqual({ code: AgentErrorCode.notFound, message: 'storage gateway not found' });
    }
  });
});

describe('update', () => {
  it('moves the root and sets or removes the owner of what is written next', async (ctx) => {
    if (process.getuid?.() !== 0) skipBecause(ctx, 'needs root: only root writes files owned by another user');
    const conn = await gatewayConnection(svc, owner, { name: 'Owned' });
    const first = await dir('owned-1');
    const second = await dir('owned-2');
    await registerGateway(agent.url, { id: conn.id, name: 'Owned', permissions: 'w', root_path: first, secret: conn.secret, user_id: 4321, group_id: 4322 });
    await connectionAttached(svc, owner, conn.id, true);
    const portal = await portalWith(svc, owner, [{ id: conn.id, target_action: 'transfer' }]);

    const p1 = await sendToPortal(svc, portal.id, 'Owned', [{ path: 'sub', name: 'a.txt', data: Buffer.from('a\n') }]);
    expect((await settledTransfers(svc, owner, p1.id))[0].state).toBe('complete');
    // As root the agent gives the files and the folders it made to the override (not root's own).
    for (const p of [path.join(first, `Owned (${p1.id})`), path.join(first, `Owned (${p1.id})`, 'sub'), path.join(first, `Owned (${p1.id})`, 'sub', 'a.txt')]) {
      const st = await fs.stat(p);
      expect([st.uid, st.gid], p).toEqual([4321, 4322]);
    }

    const nothing = await post('/storage_gateway/update', { id: conn.id });
    expect(nothing.status).toBe(400);
    const bad = await post('/storage_gateway/update', { id: conn.id, root_path: path.join(tmp, 'nope') });
    expect(bad.status).toBe(400);
    const u = await post('/storage_gateway/update', { id: conn.id, root_path: second, user_id: -1 });
    expect(u.status, JSON.stringify(u.body)).toBe(200);
    expect(u.body).toMatchObject({ id: conn.id, root_path: second, user_id: null, group_id: 4322 });

    const p2 = await sendToPortal(svc, portal.id, 'Moved', [{ path: '', name: 'b.txt', data: Buffer.from('b\n') }]);
    expect((await settledTransfers(svc, owner, p2.id))[0].state).toBe('complete');
    const st = await fs.stat(path.join(second, `Moved (${p2.id})`, 'b.txt'));
    expect([st.uid, st.gid]).toEqual([0, 4322]);
    expect(await fs.readdir(first)).toEqual([`Owned (${p1.id})`]);
    expect((await gatewayRecord(agent.url, conn.id)).transfers.map((t: any) => t.package_id)).toEqual([p2.id, p1.id]);
    await post('/storage_gateway/unregister', { id: conn.id });
  });
});
