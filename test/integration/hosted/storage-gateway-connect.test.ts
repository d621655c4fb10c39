// The service's side of storage gateways, with a raw WebSocket client as the
// gateway: a storage_gateway connection answers its secret once (kept hashed),
// other providers have none; GET /v1/storage_gateway/connect refuses a wrong
// id or secret (401) before any upgrade, answers 426 to a plain GET with good
// ones, and takes the socket: welcome first, then the connection is ok and
// connected; a second gateway with the same id replaces the first (closed with
// 4001); a new secret or a deleted connection drops the gateway (4003); a
// gateway that answers no ping, or sends what is not a frame, is dropped; a
// restarted service shows every gateway disconnected until it connects again.
import { createHash } from 'node:crypto';
import WebSocket from 'ws';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, openServiceDatabase, startTestService, type TestService } from '../../helpers/hosted.js';
import { teamActors, type Actor } from '../../helpers/auth.js';
import { waitFor } from '../../helpers/downloads.js';
import { connectionAttached, gatewayConnection, getConnection } from '../../helpers/gateway.js';
import { GATEWAY_PROTOCOL, GatewayClose } from '../../../src/api/hosted/storageGateway.js';

let svc: TestService;
let owner: Actor;
let member: Actor;
const sockets = new Set<WebSocket>();

beforeAll(async () => {
  // An S3 connection is written at 127.0.0.1 on purpose (never used): the outbound guard allows that address here.
  svc = await startTestService({ 'gateway-heartbeat-ms': '200', 'allow-private-targets': '127.0.0.1/32' });
  ({ owner, member } = await teamActors(svc, 'gw'));
});
afterAll(async () => {
  for (const s of sockets) s.terminate();
  await svc?.close();
});

const headersFor = (id: string, secret: string, extra: Record<string, string> = {}) => ({
  'x-gateway-id': id,
  'x-gateway-secret': secret,
  'x-gateway-permissions': 'w',
  'x-gateway-protocol': String(GATEWAY_PROTOCOL),
  'x-gateway-version': '9.9.9-test',
  ...extra,
});

interface Gateway {
  ws: WebSocket;
  frames: any[];
  closed: Promise<{ code: number; reason: string }>;
}

/** Opens a gateway socket; resolves once the welcome came, or rejects with the refusal's status. */
function openGateway(id: string, secret: string, opts: { autoPong?: boolean } = {}): Promise<Gateway> {
  const ws = new WebSocket(`${svc.url.replace(/^http/, 'ws')}/v1/storage_gateway/connect`, { headers: headersFor(id, secret), autoPong: opts.autoPong ?? true });
  sockets.add(ws);
  const frames: any[] = [];
  const closed = new Promise<{ code: number; reason: string }>((resolve) => ws.on('close', (code, reason) => resolve({ code, reason: String(reason) })));
  return new Promise((resolve, reject) => {
    ws.on('unexpected-response', (_req, res) => reject(Object.assign(new Error(`refused: ${res.statusCode}`), { status: res.statusCode })));
    ws.on('error', reject);
    ws.on('message', (m) => {
      const f = JSON.parse(String(m));
      frames.push(f);
      if (f.type === 'welcome') resolve({ ws, frames, closed });
    });
  });
}

describe('a storage_gateway connection', () => {
  it('answers its secret once, keeps only its hash, and shows the gateway; other providers have neither', async () => {
    const conn = await gatewayConnection(svc, owner, { name: 'Secret NAS' });
    expect(conn.secret.length).toBeGreaterThanOrEqual(32);
    expect(conn.body).toMatchObject({ state: 'disconnected', gateway: { connected: false, connected_at: null, permissions: null, version: null }, authorization: {} });
    const row = await svc.ctx.db.selectFrom('cloud_connections').selectAll().where('id', '=', conn.id).executeTakeFirstOrThrow();
    expect(JSON.stringify(row)).not.toContain(conn.secret);
    expect(row.gateway_secret_hash).toBe(createHash('sha256').update(conn.secret).digest('hex'));
    const list = await call(svc.url, 'GET', `/v1/teams/${owner.teamId}/cloud_connections`, { headers: owner.h });
    expect(JSON.stringify(list.body)).not.toContain(conn.secret);
    const s3 = await call(svc.url, 'POST', `/v1/teams/${owner.teamId}/cloud_connections`, {
      headers: owner.h,
      body: { provider: 'generic_s3', authorization: { client_id: 'AKIA', client_secret: 's', destination: 'bucket', endpoint: 'http://127.0.0.1:9', region: 'us-east-1' } },
    });
    expect(s3.status).toBe(201);
    expect(s3.body.secret).toBeUndefined();
    expect(s3.body.gateway).toBeNull();
    const rot = await call(svc.url, 'POST', `/v1/cloud_connections/${s3.body.id}/secret`, { headers: owner.h });
    expect(rot.status).toBe(400);
  });
});

describe('GET /v1/storage_gateway/connect', () => {
  it('refuses a missing or wrong id or secret with 401 before any upgrade, a bad header with 400, and answers a plain GET 426', async () => {
    const conn = await gatewayConnection(svc, owner);
    const url = `${svc.url}/v1/storage_gateway/connect`;
    const plain = async (h: Record<string, string>) => {
      const r = await fetch(url, { headers: h });
      return { status: r.status, body: await r.json() };
    };
    expect(await plain({})).toMatchObject({ status: 401, body: { code: 'unauthorized' } });
    expect(await plain(headersFor(conn.id, 'wrong'))).toMatchObject({ status: 401, body: { code: 'unauthorized', message: 'unknown storage gateway id, or a wrong secret' } });
    expect(await plain(headersFor('ccn_nobody', conn.secret))).toMatchObject({ status: 401, body: { message: 'unknown storage gateway id, or a wrong secret' } });
    expect(await plain(headersFor(conn.id, conn.secret, { 'x-gateway-permissions': 'rw' }))).toMatchObject({ status: 400, body: { code: 'invalid_permissions' } });
    expect(await plain(headersFor(conn.id, conn.secret, { 'x-gateway-protocol': '99' }))).toMatchObject({ status: 400, body: { code: 'protocol_mismatch' } });
    expect(await plain(headersFor(conn.id, conn.secret))).toMatchObject({ status: 426, body: { code: 'upgrade_required' } });
    await expect(openGateway(conn.id, 'wrong')).rejects.toMatchObject({ status: 401 });
    expect((await getConnection(svc, owner, conn.id)).state).toBe('disconnected');
  });

  it('takes the socket: welcome first, the connection ok and connected until it closes', async () => {
    const conn = await gatewayConnection(svc, owner, { name: 'Live' });
    const g = await openGateway(conn.id, conn.secret);
    expect(g.frames[0]).toEqual({ type: 'welcome', protocol: GATEWAY_PROTOCOL, connection_id: conn.id, name: 'Live', direction: 'svc_to_cloud', heartbeat_ms: 200 });
    const c = await connectionAttached(svc, owner, conn.id, true);
    expect(c).toMatchObject({ state: 'ok', gateway: { connected: true, permissions: 'w', version: '9.9.9-test' } });
    // Members read it too.
    expect((await call(svc.url, 'GET', `/v1/cloud_connections/${conn.id}`, { headers: member.h })).body.gateway.connected).toBe(true);
    await waitFor('a tick', () => (g.frames.some((f) => f.type === 'tick') ? true : undefined));
    g.ws.close();
    expect((await connectionAttached(svc, owner, conn.id, false)).state).toBe('disconnected');
  });

  it('a second gateway with the same id replaces the first', async () => {
    const conn = await gatewayConnection(svc, owner);
    const first = await openGateway(conn.id, conn.secret);
    const second = await openGateway(conn.id, conn.secret);
    expect((await first.closed).code).toBe(GatewayClose.replaced);
    const c = await getConnection(svc, owner, conn.id);
    expect(c).toMatchObject({ state: 'ok', gateway: { connected: true } });
    second.ws.close();
    await connectionAttached(svc, owner, conn.id, false);
  });

  it('a new secret drops the gateway (4003), the old secret no longer works, the new one does', async () => {
    const conn = await gatewayConnection(svc, owner);
    const g = await openGateway(conn.id, conn.secret);
    expect((await call(svc.url, 'POST', `/v1/cloud_connections/${conn.id}/secret`, { headers: member.h })).status).toBe(403);
    const rot = await call(svc.url, 'POST', `/v1/cloud_connections/${conn.id}/secret`, { headers: owner.h });
    expect(rot.status).toBe(200);
    expect(rot.body).toEqual({ id: conn.id, secret: expect.any(String) });
    expect((await g.closed).code).toBe(GatewayClose.revoked);
    await expect(openGateway(conn.id, conn.secret)).rejects.toMatchObject({ status: 401 });
    const again = await openGateway(conn.id, rot.body.secret);
    again.ws.close();
  });

  it('deleting the connection drops its gateway and its credentials stop working', async () => {
    const conn = await gatewayConnection(svc, owner);
    const g = await openGateway(conn.id, conn.secret);
    expect((await call(svc.url, 'DELETE', `/v1/cloud_connections/${conn.id}`, { headers: owner.h })).status).toBe(204);
    expect((await g.closed).code).toBe(GatewayClose.revoked);
    await expect(openGateway(conn.id, conn.secret)).rejects.toMatchObject({ status: 401 });
  });

  it('drops a gateway that answers no ping, and one that sends what is not a frame of the protocol', async () => {
    const conn = await gatewayConnection(svc, owner);
    const silent = await openGateway(conn.id, conn.secret, { autoPong: false });
    expect((await silent.closed).code).toBe(1006);
    await connectionAttached(svc, owner, conn.id, false);
    const rude = await openGateway(conn.id, conn.secret);
    rude.ws.send('hello');
    expect((await rude.closed).code).toBe(GatewayClose.protocol);
    await connectionAttached(svc, owner, conn.id, false);
  });
});

describe('a restarted service', () => {
  it('shows every gateway disconnected: no socket outlives the process', async () => {
    const conn = await gatewayConnection(svc, owner);
    const g = await openGateway(conn.id, conn.secret);
    await connectionAttached(svc, owner, conn.id, true);
    const dataDir = svc.dataDir;
    await svc.stop();
    expect((await g.closed).code).toBe(GatewayClose.shutdown);
    // A process that died with a gateway attached leaves its row saying so; the next start clears it.
    const { db, close } = await openServiceDatabase(dataDir);
    await db.updateTable('cloud_connections').set({ state: 'ok', gateway_session: 'gws_of_a_dead_process' }).where('id', '=', conn.id).execute();
    await close();
    svc = await startTestService({ 'gateway-heartbeat-ms': '200' }, dataDir);
    const c = await getConnection(svc, owner, conn.id);
    expect(c).toMatchObject({ state: 'disconnected', gateway: { connected: false } });
  });
});
