// The outbound-request guard against the real service: a tenant's cloud
// connection or webhook aimed at the service's own host (a "secret" HTTP server
// on 127.0.0.1, as a cloud metadata service would be) is refused when it is
// configured with a literal private address and when it is used with a name
// that resolves to one; what the tenant reads back says "refused: private
// address", never the socket error. With --allow-private-targets the same
// targets work, and a redirect is still not followed.
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { call, startTestService, type TestService } from '../../helpers/hosted.js';
import { ownerActor, type Actor } from '../../helpers/auth.js';
import { createPackage, finalizePackage, MiB, uploadFile } from '../../helpers/flow.js';
import { waitFor } from '../../helpers/downloads.js';
import { startReceiver, type Receiver } from '../../helpers/receiver.js';

const FAST = { 'webhook-retry-base-ms': '50', 'webhook-timeout-ms': '2000', 'jobs-poll-ms': '50', 'cloud-retry-base-ms': '50', 'cloud-attempts': '2' };
const SECRET = 'AKIA-THE-HOSTS-OWN-CREDENTIALS-do-not-hand-out';

/** What a metadata service looks like to an S3 client: every GET answers the secret, every HEAD its size. */
interface SecretServer {
  port: number;
  requests: string[];
  close(): Promise<void>;
}

async function startSecretServer(): Promise<SecretServer> {
  const requests: string[] = [];
  const server = http.createServer((req, res) => {
    requests.push(`${req.method} ${req.url}`);
    res.writeHead(200, { 'content-type': 'text/plain', 'content-length': String(SECRET.length), 'last-modified': new Date().toUTCString(), etag: '"abc"' });
    res.end(req.method === 'HEAD' ? undefined : SECRET);
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return {
    port: (server.address() as AddressInfo).port,
    requests,
    close: async () => {
      server.closeAllConnections();
      await new Promise<void>((r) => server.close(() => r()));
    },
  };
}

/** A port on 127.0.0.1 that refuses connections (a receiver started and closed). */
async function closedPort(): Promise<number> {
  const r = await startReceiver();
  await r.close();
  return Number(new URL(r.url).port);
}

const S3_AUTH = { client_id: 'AKIAEXAMPLE', client_secret: 'not-a-real-secret', destination: 'latest', region: 'default' };
const ODD_LOOPBACK = ['http://127.0.0.1:9/', 'http://2130706433/', 'http://0x7f.1/', 'http://[::ffff:7f00:1]/', 'http://[::1]:9/', 'http://169.254.169.254/latest/meta-data/', 'http://10.1.2.3/', 'http://[fd00:ec2::254]/'];

let svc: TestService;
let owner: Actor;
let secret: SecretServer;
const receivers: Receiver[] = [];

beforeAll(async () => {
  secret = await startSecretServer();
  svc = await startTestService(FAST);
  owner = await ownerActor(svc);
});
afterAll(async () => {
  await svc?.close();
  await secret?.close();
  for (const r of receivers) await r.close();
});

async function inboundConnection(s: TestService, actor: Actor, endpoint: string) {
  return call(s.url, 'POST', `/v1/teams/${actor.teamId}/cloud_connections`, {
    headers: actor.h,
    body: { provider: 'generic_s3', direction: 'cloud_to_svc', authorization: { ...S3_AUTH, endpoint } },
  });
}

/** Brings `key` in through the connection into a new Package; answers the transfer once it ended, and the Package. */
async function importKey(s: TestService, actor: Actor, connectionId: string, key: string) {
  const pkg = await createPackage(s, actor, { name: 'brought in' });
  const r = await call(s.url, 'POST', `/v1/packages/${pkg.id}/transfer`, { headers: pkg.h, body: { cloud_connection_id: connectionId, files: [{ path: key }] } });
  expect(r.status, JSON.stringify(r.body)).toBe(201);
  const t = await waitFor('the transfer to end', async () => {
    const g = await call(s.url, 'GET', `/v1/packages/${pkg.id}/transfers/${r.body.id}`, { headers: pkg.h });
    return g.body.state === 'complete' || g.body.state === 'error' ? g.body : undefined;
  });
  return { t, pkg };
}

async function webhook(s: TestService, actor: Actor, url: string) {
  return call(s.url, 'POST', `/v1/teams/${actor.teamId}/custom_webhooks`, { headers: actor.h, body: { active: true, events: ['package.created'], method: 'POST', url } });
}

/** The attempts of the only event of `hookId`, once it settled (delivered or failed). */
async function settledAttempts(s: TestService, actor: Actor, hookId: string): Promise<any[]> {
  const e = await waitFor('the event to settle', async () => {
    const r = await call(s.url, 'GET', `/v1/custom_webhooks/${hookId}/events`, { headers: actor.h });
    const [ev] = r.body.records;
    return ev && ev.state !== 'pending' ? ev : undefined;
  });
  return e.attempts;
}

/** A Team of its own whose only webhook is at `url` (stored as given, past the checks on write: as a row from before the guard). */
async function teamHookedAt(s: TestService, url: string): Promise<{ actor: Actor; hookId: string }> {
  const actor = await ownerActor(s);
  const others = await call(s.url, 'GET', `/v1/teams/${actor.teamId}/custom_webhooks`, { headers: actor.h });
  for (const h of others.body) await s.ctx.db.updateTable('custom_webhooks').set({ active: 0 }).where('id', '=', h.id).execute();
  const r = await webhook(s, actor, 'https://hooks.example.com/placeholder');
  expect(r.status, JSON.stringify(r.body)).toBe(201);
  await s.ctx.db.updateTable('custom_webhooks').set({ url }).where('id', '=', r.body.id).execute();
  return { actor, hookId: r.body.id };
}

const raisePackage = async (s: TestService, actor: Actor) => {
  const r = await call(s.url, 'POST', `/v1/teams/${actor.teamId}/packages`, { headers: actor.h, body: { name: 'Rushes', description: '', recipients: [] } });
  expect(r.status, JSON.stringify(r.body)).toBe(201);
};

describe('with the guard on (the default)', () => {
  test('a cloud_to_svc transfer from a name that resolves to 127.0.0.1 is refused: the secret never becomes a Package file', async () => {
    const conn = await inboundConnection(svc, owner, `http://localhost:${secret.port}`);
    // Names are checked when used, not when written: they can change.
    expect(conn.status, JSON.stringify(conn.body)).toBe(201);
    const { t, pkg } = await importKey(svc, owner, conn.body.id, 'meta-data/iam/security-credentials/role');
    expect(t.state, JSON.stringify(t)).toBe('error');
    expect(t.error).toMatch(/refused: private address/);
    expect(t.error).not.toMatch(/ECONNREFUSED|127\.0\.0\.1|localhost|:\d{2,5}\b/);
    expect(secret.requests).toEqual([]);
    expect(await svc.ctx.db.selectFrom('files').select('id').where('package_id', '=', pkg.id).execute()).toEqual([]);
    expect((await call(svc.url, 'GET', `/v1/packages/${pkg.id}`, { headers: pkg.h })).body).toMatchObject({ state: 'new', total_files: 0 });
    const after = await call(svc.url, 'GET', `/v1/cloud_connections/${conn.body.id}`, { headers: owner.h });
    expect(after.body).toMatchObject({ state: 'error' });
    expect(after.body.last_error).toMatch(/refused: private address/);
  });

  test('a connection stored with a literal private endpoint (from before the guard) is refused when used', async () => {
    const conn = await inboundConnection(svc, owner, 'https://s3.example.com');
    expect(conn.status, JSON.stringify(conn.body)).toBe(201);
    const row = await svc.ctx.db.selectFrom('cloud_connections').selectAll().where('id', '=', conn.body.id).executeTakeFirstOrThrow();
    const auth = { ...JSON.parse(svc.ctx.sealer.open(row.credentials)), endpoint: `http://127.0.0.1:${secret.port}` };
    await svc.ctx.db.updateTable('cloud_connections').set({ credentials: svc.ctx.sealer.seal(JSON.stringify(auth)) }).where('id', '=', row.id).execute();
    const { t, pkg } = await importKey(svc, owner, conn.body.id, 'meta-data/iam/security-credentials/role');
    expect(t.state, JSON.stringify(t)).toBe('error');
    expect(t.error).toMatch(/refused: private address/);
    expect(secret.requests).toEqual([]);
    expect(await svc.ctx.db.selectFrom('files').select('id').where('package_id', '=', pkg.id).execute()).toEqual([]);
  });

  test('a svc_to_cloud delivery to a name that resolves to 127.0.0.1 is refused: nothing is written there', async () => {
    const conn = await call(svc.url, 'POST', `/v1/teams/${owner.teamId}/cloud_connections`, {
      headers: owner.h,
      body: { provider: 'generic_s3', authorization: { ...S3_AUTH, endpoint: `http://localhost:${secret.port}` } },
    });
    expect(conn.status, JSON.stringify(conn.body)).toBe(201);
    const pkg = await createPackage(svc, owner, { name: 'to deliver' });
    // 3 MiB: one PutObject with Expect: 100-continue, which the SDK would send on a fresh agent of its own were the guard's not external.
    await uploadFile(svc, pkg, 'big.bin', '', Buffer.alloc(3 * MiB, 7));
    await finalizePackage(svc, pkg);
    const r = await call(svc.url, 'POST', `/v1/packages/${pkg.id}/transfer`, { headers: pkg.h, body: { cloud_connection_id: conn.body.id } });
    expect(r.status, JSON.stringify(r.body)).toBe(201);
    const t = await waitFor('the delivery to end', async () => {
      const g = await call(svc.url, 'GET', `/v1/packages/${pkg.id}/transfers/${r.body.id}`, { headers: pkg.h });
      return g.body.state === 'complete' || g.body.state === 'error' ? g.body : undefined;
    });
    expect(t).toMatchObject({ state: 'error', error: 'refused: private address', files_total: 1, files_done: 0 });
    expect(secret.requests).toEqual([]);
  });

  test('a connection endpoint at a literal private address, in any spelling, is refused when written: 400 private_target', async () => {
    for (const endpoint of ODD_LOOPBACK) {
      const r = await inboundConnection(svc, owner, endpoint);
      expect(r.status, `${endpoint}: ${JSON.stringify(r.body)}`).toBe(400);
      expect(r.body.code, endpoint).toBe('private_target');
    }
    const ok = await inboundConnection(svc, owner, 'https://s3.example.com');
    const put = await call(svc.url, 'PUT', `/v1/cloud_connections/${ok.body.id}`, { headers: owner.h, body: { authorization: { endpoint: 'http://[::ffff:169.254.169.254]/' } } });
    expect(put.status, JSON.stringify(put.body)).toBe(400);
    expect(put.body.code).toBe('private_target');
    // Unchanged.
    expect((await call(svc.url, 'GET', `/v1/cloud_connections/${ok.body.id}`, { headers: owner.h })).body.authorization.endpoint).toBe('https://s3.example.com');
  });

  test('a webhook URL at a literal private address, in any spelling, is refused when written: 400 private_target', async () => {
    for (const url of ODD_LOOPBACK) {
      const r = await webhook(svc, owner, url);
      expect(r.status, `${url}: ${JSON.stringify(r.body)}`).toBe(400);
      expect(r.body.code, url).toBe('private_target');
    }
    const ok = await webhook(svc, owner, 'https://hooks.example.com/ferry');
    expect(ok.status).toBe(201);
    const put = await call(svc.url, 'PUT', `/v1/custom_webhooks/${ok.body.id}`, { headers: owner.h, body: { active: false, events: ['package.created'], method: 'POST', url: 'http://0177.0.0.1:8080/' } });
    expect(put.status, JSON.stringify(put.body)).toBe(400);
    expect(put.body.code).toBe('private_target');
    await call(svc.url, 'DELETE', `/v1/custom_webhooks/${ok.body.id}`, { headers: owner.h });
  });

  test('a webhook to a name that resolves to 127.0.0.1 is refused at each attempt, without the socket error or the port', async () => {
    const port = await closedPort();
    const { actor, hookId } = await teamHookedAt(svc, `http://localhost:${port}/hook`);
    await raisePackage(svc, actor);
    const attempts = await settledAttempts(svc, actor, hookId);
    expect(attempts).toHaveLength(5);
    for (const a of attempts) {
      expect(a.status).toBeNull();
      expect(a.error).toBe('refused: private address');
    }
  });

  test('a webhook stored with a literal loopback address is refused when sent: no port scan through the events', async () => {
    const port = await closedPort();
    const { actor, hookId } = await teamHookedAt(svc, `http://127.0.0.1:${port}/hook`);
    await raisePackage(svc, actor);
    const attempts = await settledAttempts(svc, actor, hookId);
    for (const a of attempts) expect(a.error).toBe('refused: private address');
    const listed = JSON.stringify((await call(svc.url, 'GET', `/v1/custom_webhooks/${hookId}/events`, { headers: actor.h })).body);
    expect(listed).not.toMatch(/ECONNREFUSED/);
    expect(listed).not.toContain(`:${port}`);
  });
});

describe('with --allow-private-targets 127.0.0.1/32', () => {
  let open: TestService;
  let actor: Actor;
  beforeAll(async () => {
    // The operator allows the loopback address on purpose (an on-premises store or receiver there).
    open = await startTestService({ ...FAST, 'allow-private-targets': '127.0.0.1/32' });
    actor = await ownerActor(open);
  });
  afterAll(async () => {
    await open?.close();
  });

  test('a receiver on 127.0.0.1 gets the event; ::1, not listed, is still refused when written', async () => {
    const rx = await startReceiver();
    receivers.push(rx);
    const hook = await webhook(open, actor, rx.url);
    expect(hook.status, JSON.stringify(hook.body)).toBe(201);
    await raisePackage(open, actor);
    const attempts = await settledAttempts(open, actor, hook.body.id);
    expect(attempts.map((a) => [a.status, a.error])).toEqual([[200, null]]);
    await call(open.url, 'DELETE', `/v1/custom_webhooks/${hook.body.id}`, { headers: actor.h });

    const v6 = await webhook(open, actor, 'http://[::1]:9/hook');
    expect(v6.status, JSON.stringify(v6.body)).toBe(400);
    expect(v6.body.code).toBe('private_target');
    const meta = await inboundConnection(open, actor, 'http://169.254.169.254/');
    expect(meta.body.code).toBe('private_target');
  });

  test('a redirect to another address is not followed: the attempt fails with the status', async () => {
    const target = await startReceiver();
    receivers.push(target);
    const redirects: string[] = [];
    const server = http.createServer((req, res) => {
      redirects.push(`${req.method} ${req.url}`);
      req.resume();
      res.writeHead(302, { location: target.url }).end();
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    try {
      const { actor: a, hookId } = await teamHookedAt(open, `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`);
      await raisePackage(open, a);
      const attempts = await settledAttempts(open, a, hookId);
      expect(attempts).toHaveLength(5);
      for (const at of attempts) expect([at.status, at.error]).toEqual([302, null]);
      expect(redirects).toHaveLength(5);
      expect(target.requests).toEqual([]);
    } finally {
      server.closeAllConnections();
      await new Promise<void>((r) => server.close(() => r()));
    }
  });
});
