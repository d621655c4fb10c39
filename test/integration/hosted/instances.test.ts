// Several instances of the service on one database and one (external) store:
// roles (an api instance runs only storage gateway transfers, in which a worker
// has no part; a worker serves no API route), /healthz
// and /readyz (each thing that is not ready named), graceful shutdown (a
// request in flight finishes, a new connection is refused, a running job is
// handed back and another worker takes it at once), one sweeper at a time,
// which data dirs may be shared, and the keys given in the settings.
import fs from 'node:fs/promises';
import http from 'node:http';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, expect, test, vi } from 'vitest';
import { sql } from 'kysely';
import { startObjectStore, type RunningObjectStore } from '../../../src/objectstore/index.js';
import { call, startTestService, type TestService } from '../../helpers/hosted.js';
import { ownerActor, type Actor } from '../../helpers/auth.js';
import { startReceiver, type Receiver } from '../../helpers/receiver.js';
import { waitFor } from '../../helpers/downloads.js';
import { jsonLine, startFerry, type Running } from '../../helpers/cli.js';
import type { Flags } from '../../../src/hosted/config.js';
import { startS3Proxy } from '../../helpers/s3Proxy.js';
import { createPackage, finalizePackage, uploadFile } from '../../helpers/flow.js';
import { WEBHOOK_JOB } from '../../../src/hosted/services/webhookEvents.js';
import { GATEWAY_TRANSFER_JOB } from '../../../src/hosted/services/cloudTransfers.js';
import { startTestAgent } from '../../helpers/agent.js';
import { gatewayConnection, portalWith, registerGateway, sendToPortal, settledTransfers } from '../../helpers/gateway.js';

vi.setConfig({ testTimeout: 60_000, hookTimeout: 60_000 });

const creds = { accessKey: 'SHAREDSTOREKEY01', secretKey: 'shared-store-secret-of-the-instances' };
const BUCKET = 'instances-bucket';
let storeDir: string;
let store: RunningObjectStore;
const tmpDirs: string[] = [];
const services: TestService[] = [];
const receivers: Receiver[] = [];
const processes: Running[] = [];

async function newStore(dir: string): Promise<RunningObjectStore> {
  return startObjectStore({ host: '127.0.0.1', port: 0, dataDir: dir, ...creds, buckets: [BUCKET] });
}

const external = (s: RunningObjectStore): Flags => ({
  's3-endpoint': s.url,
  's3-bucket': BUCKET,
  's3-access-key': creds.accessKey,
  's3-secret-key': creds.secretKey,
  's3-path-style': true,
});

async function tmpDir(prefix: string): Promise<string> {
  const d = await fs.mkdtemp(path.join(os.tmpdir(), prefix));
  tmpDirs.push(d);
  return d;
}

/** An instance on `dataDir` (shared with others) and the shared external store; stopped in afterAll unless the test stops it. */
async function instance(dataDir: string, flags: Flags, s: RunningObjectStore = store): Promise<TestService> {
  // Webhook receivers are on 127.0.0.1 on purpose: the outbound guard allows that address here.
  const svc = await startTestService({ ...external(s), 'jobs-poll-ms': '50', 'allow-private-targets': '127.0.0.1/32', ...flags }, dataDir);
  services.push(svc);
  return svc;
}

async function receiver(answer: Parameters<typeof startReceiver>[0]) {
  const r = await startReceiver(answer);
  receivers.push(r);
  return r;
}

beforeAll(async () => {
  storeDir = await tmpDir('ferry-instances-store-');
  store = await newStore(storeDir);
});

afterAll(async () => {
  await Promise.all(processes.map((p) => p.stop('SIGKILL')));
  for (const s of services) await s.stop().catch(() => undefined);
  for (const r of receivers) await r.close();
  await store?.close();
  for (const d of tmpDirs) await fs.rm(d, { recursive: true, force: true });
});

/** A Team webhook on package.created at `url` (every other webhook of the Team turned off), and a Package that raises one event. */
async function raiseWebhookEvent(api: TestService, url: string): Promise<{ actor: Actor; hookId: string }> {
  const actor = await ownerActor(api);
  const others = await call(api.url, 'GET', `/v1/teams/${actor.teamId}/custom_webhooks`, { headers: actor.h });
  for (const h of others.body) {
    await call(api.url, 'PUT', `/v1/custom_webhooks/${h.id}`, { headers: actor.h, body: { active: false, events: h.events, method: h.method, url: h.url } });
  }
  const hook = await call(api.url, 'POST', `/v1/teams/${actor.teamId}/custom_webhooks`, {
    headers: actor.h,
    body: { active: true, events: ['package.created'], method: 'POST', url, name: 'instances test' },
  });
  expect(hook.status, JSON.stringify(hook.body)).toBe(201);
  const pkg = await call(api.url, 'POST', `/v1/teams/${actor.teamId}/packages`, { headers: actor.h, body: { name: 'Rushes', description: '', recipients: [] } });
  expect(pkg.status, JSON.stringify(pkg.body)).toBe(201);
  return { actor, hookId: hook.body.id };
}

const webhookEvents = async (api: TestService, actor: Actor, hookId: string) => {
  const r = await call(api.url, 'GET', `/v1/custom_webhooks/${hookId}/events`, { headers: actor.h });
  expect(r.status, JSON.stringify(r.body)).toBe(200);
  return r.body.records as any[];
};

const webhookJob = (svc: TestService) => svc.ctx.db.selectFrom('jobs').selectAll().where('kind', '=', WEBHOOK_JOB).executeTakeFirst();

test('an api instance runs no webhook job: the event it raised stays queued until a worker starts, which delivers it', async () => {
  const dir = await tmpDir('ferry-instances-roles-');
  const api = await instance(dir, { role: 'api' });
  const rx = await receiver(() => 200);
  const { actor, hookId } = await raiseWebhookEvent(api, rx.url);

  // An `all` instance polling every 50 ms would have sent it many times over by now.
  await new Promise((r) => setTimeout(r, 500));
  expect(rx.requests).toHaveLength(0);
  expect(await webhookJob(api)).toMatchObject({ state: 'queued', attempts: 0, lease_owner: null });
  expect((await webhookEvents(api, actor, hookId))[0]).toMatchObject({ state: 'pending', attempts: [] });

  const worker = await instance(dir, { role: 'worker' });
  const delivered = await waitFor('the worker to deliver the event', async () => {
    const [e] = await webhookEvents(api, actor, hookId);
    return e?.state === 'delivered' ? e : undefined;
  });
  expect(rx.requests).toHaveLength(1);
  expect(delivered.attempts).toHaveLength(1);
  await worker.stop();
  await api.stop();
});

test('a storage gateway\'s transfers run in an api instance, which holds its socket; a worker leaves them alone', async () => {
  const dir = await tmpDir('ferry-instances-gateway-');
  const fast = { 'gateway-recheck-ms': '200', 'cloud-retry-base-ms': '50' };
  const first = await instance(dir, { role: 'api', ...fast });
  const worker = await instance(dir, { role: 'worker', ...fast });
  const owner = await ownerActor(first);
  const root = await tmpDir('ferry-instances-nas-');
  const conn = await gatewayConnection(first, owner, { name: 'Studio NAS' });
  const portal = await portalWith(first, owner, [{ id: conn.id, target_action: 'transfer' }]);
  const early = await sendToPortal(first, portal.id, 'Before the gateway', [{ path: 'a', name: 'one.bin', data: randomBytes(1000) }]);
  await first.stop();

  // With no api instance, the worker (polling every 50 ms) never touches the transfer's job.
  const job = () => worker.ctx.db.selectFrom('jobs').selectAll().where('kind', '=', GATEWAY_TRANSFER_JOB).executeTakeFirstOrThrow();
  const before = await job();
  await new Promise((r) => setTimeout(r, 600));
  expect(await job()).toEqual(before);
  expect(before).toMatchObject({ state: 'queued', lease_owner: null });

  const api = await instance(dir, { role: 'api', ...fast });
  const agent = await startTestAgent(api);
  try {
    await registerGateway(agent.url, { id: conn.id, name: 'Studio NAS', permissions: 'w', root_path: root, secret: conn.secret });
    const files = [{ path: 'day 2', name: 'take.mov', data: randomBytes(300_000) }];
    const late = await sendToPortal(api, portal.id, 'After the gateway', files);
    for (const pkg of [early, late]) expect((await settledTransfers(api, owner, pkg.id))[0], pkg.id).toMatchObject({ state: 'complete' });
    const delivered = await fs.readFile(path.join(root, `After the gateway (${late.id})`, 'day 2', 'take.mov'));
    expect(delivered.equals(files[0]!.data)).toBe(true);
  } finally {
    await agent.close();
  }
  await worker.stop();
  await api.stop();
});

test('a worker serves /healthz and /readyz and no API route', async () => {
  const dir = await tmpDir('ferry-instances-worker-');
  const worker = await instance(dir, { role: 'worker' });
  expect(await call(worker.url, 'GET', '/healthz')).toMatchObject({ status: 200, body: { status: 'ok' } });
  expect(await call(worker.url, 'GET', '/readyz')).toMatchObject({ status: 200, body: { status: 'ready', role: 'worker' } });
  for (const [method, route, body] of [
    ['GET', '/v1/system/packages/spec', undefined],
    ['POST', '/v1/auth', { email: worker.owner.email, password: worker.owner.password }],
    ['GET', '/l/anything', undefined],
  ] as const) {
    const r = await call(worker.url, method, route, { body });
    expect(r.status, `${method} ${route}`).toBe(404);
    expect(r.body.code).toBe('not_found');
  }
  await worker.stop();
});

test('/healthz answers while the process runs, never rate-limited; /readyz answers 503 naming the store, pending migrations, or the database when they are not there', async () => {
  const ownStoreDir = await tmpDir('ferry-instances-own-store-');
  const ownStore = await newStore(ownStoreDir);
  // One request without a credential per window: the health routes are not counted.
  const svc = await instance(await tmpDir('ferry-instances-ready-'), { 'rate-limit-public': '1' }, ownStore);

  for (let i = 0; i < 3; i++) {
    expect(await call(svc.url, 'GET', '/healthz')).toMatchObject({ status: 200, body: { status: 'ok' } });
    expect(await call(svc.url, 'GET', '/readyz')).toMatchObject({ status: 200, body: { status: 'ready', role: 'all' } });
  }
  expect((await call(svc.url, 'GET', '/v1/system/packages/spec')).status).toBe(200);
  expect((await call(svc.url, 'GET', '/v1/system/packages/spec')).status).toBe(429);

  await ownStore.close();
  const noStore = await call(svc.url, 'GET', '/readyz');
  expect(noStore.status).toBe(503);
  expect(noStore.body).toMatchObject({ code: 'store_unavailable', message: expect.stringContaining(BUCKET) });
  expect(await call(svc.url, 'GET', '/healthz')).toMatchObject({ status: 200, body: { status: 'ok' } });

  // The store comes back on the same port: ready again.
  const back = await startObjectStore({ host: '127.0.0.1', port: Number(new URL(ownStore.url).port), dataDir: ownStoreDir, ...creds, buckets: [BUCKET] });
  try {
    expect((await call(svc.url, 'GET', '/readyz')).status).toBe(200);

    // A newer version's migration not applied yet (here: the latest one's record removed).
    const latest = await sql<{ version: number; name: string; applied_at: string }>`SELECT * FROM schema_migrations ORDER BY version DESC LIMIT 1`.execute(svc.ctx.db);
    const row = latest.rows[0]!;
    await sql`DELETE FROM schema_migrations WHERE version = ${row.version}`.execute(svc.ctx.db);
    const pending = await call(svc.url, 'GET', '/readyz');
    expect(pending.status).toBe(503);
    expect(pending.body).toMatchObject({ code: 'migrations_pending', message: expect.stringContaining(String(row.version)) });
    await sql`INSERT INTO schema_migrations (version, name, applied_at) VALUES (${row.version}, ${row.name}, ${row.applied_at})`.execute(svc.ctx.db);
    expect((await call(svc.url, 'GET', '/readyz')).status).toBe(200);

    await svc.ctx.db.destroy();
    const noDb = await call(svc.url, 'GET', '/readyz');
    expect(noDb.status).toBe(503);
    expect(noDb.body).toMatchObject({ code: 'database_unavailable', message: expect.stringMatching(/^the database does not answer/) });
    expect(await call(svc.url, 'GET', '/healthz')).toMatchObject({ status: 200, body: { status: 'ok' } });
  } finally {
    await svc.stop().catch(() => undefined);
    await back.close();
  }
});

test('a job running at shutdown is handed back when the grace runs out, uncounted, and another worker delivers it at once (long before its lease would run out)', async () => {
  const dir = await tmpDir('ferry-instances-handback-');
  const api = await instance(dir, { role: 'api' });
  // The first request is never answered: the attempt is in flight until the shutdown cuts it.
  const rx = await receiver((n) => (n === 1 ? 0 : 200));
  const longly = { 'jobs-lease-ms': '600000', 'webhook-timeout-ms': '600000' };
  const first = await instance(dir, { role: 'worker', ...longly });
  const { actor, hookId } = await raiseWebhookEvent(api, rx.url);
  await waitFor('the first worker to send the event', () => (rx.requests.length === 1 ? true : undefined));
  expect(await webhookJob(api)).toMatchObject({ state: 'running', attempts: 1, lease_owner: expect.any(String) });

  await first.stop({ graceMs: 200 });
  expect(await webhookJob(api)).toMatchObject({ state: 'queued', attempts: 0, lease_owner: null, lease_until: null, last_error: expect.stringMatching(/shutdown/) });
  expect((await webhookEvents(api, actor, hookId))[0]).toMatchObject({ state: 'pending' });

  await instance(dir, { role: 'worker', ...longly });
  const delivered = await waitFor('the second worker to deliver the event', async () => {
    const [e] = await webhookEvents(api, actor, hookId);
    return e?.state === 'delivered' ? e : undefined;
  });
  // The receiver had the same event twice (the first attempt was in flight); the handed-back attempt is not counted.
  expect(rx.requests).toHaveLength(2);
  expect(rx.requests[1]!.body).toEqual(rx.requests[0]!.body);
  expect(delivered.attempts.map((a: any) => [a.attempt, a.status])).toEqual([[1, 200]]);
  expect(await webhookJob(api)).toBeUndefined();
});

test('two workers sweep one database one at a time: each expired object is deleted once; a stopping sweeper gives its lease back and the other takes over at once', async () => {
  const proxy = await startS3Proxy(store.url);
  const via = { ...store, url: proxy.url } as RunningObjectStore;
  try {
    const dir = await tmpDir('ferry-instances-sweep-');
    // Leases far longer than the test: only a lease given back lets the second worker sweep in time.
    const flags = { 'sweep-interval-ms': '50', 'jobs-lease-ms': '600000' };
    const api = await instance(dir, { role: 'api' }, via);
    const first = await instance(dir, { role: 'worker', ...flags }, via);
    await waitFor('the first worker to hold the sweeper lease', async () => ((await api.ctx.db.selectFrom('leases').selectAll().executeTakeFirst()) ? true : undefined));
    const second = await instance(dir, { role: 'worker', ...flags }, via);
    const actor = await ownerActor(api);

    /** Packages with two files each, finalized, then past their expiry; resolves their object keys once every one is expired with its objects deleted. */
    const expireBatch = async (n: number) => {
      const ids: string[] = [];
      for (let i = 0; i < n; i++) {
        const pkg = await createPackage(api, actor, { name: `sweep ${i}` });
        await uploadFile(api, pkg, 'a.bin', '', Buffer.alloc(100, i));
        await uploadFile(api, pkg, 'b.bin', 'd', Buffer.alloc(50, i));
        await finalizePackage(api, pkg);
        ids.push(pkg.id);
      }
      await api.ctx.db.updateTable('packages').set({ expiry: new Date(Date.now() - 1000).toISOString() }).where('id', 'in', ids).execute();
      await waitFor('the batch to be swept', async () => {
        const rows = await api.ctx.db.selectFrom('packages').select(['state', 'objects_deleted']).where('id', 'in', ids).execute();
        return rows.every((r) => r.state === 'expired' && r.objects_deleted === 1) ? true : undefined;
      });
      const files = await api.ctx.db.selectFrom('files').select('object_key').where('package_id', 'in', ids).execute();
      return files.map((f) => `/${BUCKET}/${f.object_key}`);
    };
    /** How many times each object was asked to go: alone (DELETE) or with others (DeleteObjects). */
    const deletesOf = (keys: string[]) => keys.map((k) => proxy.seen.filter((r) => r.method === 'DELETE' && r.path === k).length + proxy.deletedMany.filter((d) => d === k).length);

    const swept = await expireBatch(4);
    expect(swept).toHaveLength(8);
    expect(deletesOf(swept)).toEqual(swept.map(() => 1));

    await first.stop();
    const later = await expireBatch(2);
    expect(deletesOf(later)).toEqual(later.map(() => 1));
    expect(deletesOf(swept)).toEqual(swept.map(() => 1));
    await second.stop();
    await api.stop();
  } finally {
    await proxy.close();
  }
});

test('an event stream open at shutdown ends at once and does not hold the drain up (a ten-minute grace, a test far shorter)', async () => {
  const svc = await instance(await tmpDir('ferry-instances-sse-'), {});
  const actor = await ownerActor(svc);
  const agent = new http.Agent({ keepAlive: true });
  const stream = await new Promise<{ closed: Promise<void> }>((resolve, reject) => {
    http
      .get(`${svc.url}/v1/teams/${actor.teamId}/events`, { agent, headers: actor.h }, (res) => {
        expect(res.statusCode).toBe(200);
        res.resume();
        // 'close' whether the stream ended cleanly or its connection went with it.
        resolve({ closed: new Promise<void>((done) => res.on('close', done)) });
      })
      .on('error', reject);
  });
  await svc.stop({ graceMs: 600_000 });
  await stream.closed;
  agent.destroy();
});

test('two instances on one data dir: refused with the embedded store, allowed with an external one', async () => {
  const embeddedDir = await tmpDir('ferry-instances-embedded-');
  const one = await startTestService({}, embeddedDir);
  services.push(one);
  await expect(startTestService({}, embeddedDir)).rejects.toThrow(`another ferry service is using ${embeddedDir}`);
  await one.stop();

  const dir = await tmpDir('ferry-instances-shared-');
  const a = await instance(dir, {});
  const b = await instance(dir, {});
  // One database: a sign-in on one instance is a session on the other (the signing key is the data dir's).
  const signIn = await call(a.url, 'POST', '/v1/auth', { body: { email: a.owner.email, password: a.owner.password } });
  expect(signIn.status).toBe(200);
  const me = await call(b.url, 'GET', '/v1/me', { headers: { 'X-User-Token': signIn.body.token } });
  expect(me.status, JSON.stringify(me.body)).toBe(200);
  await a.stop();
  await b.stop();
});

test('two instances started together on one new database make one first owner with one Team', async () => {
  const dir = await tmpDir('ferry-instances-together-');
  const [a, b] = await Promise.all([instance(dir, {}), instance(dir, {})]);
  const users = await a.ctx.db.selectFrom('users').select('email').execute();
  expect(users).toEqual([{ email: a.owner.email }]);
  expect(await a.ctx.db.selectFrom('teams').select('id').execute()).toHaveLength(1);
  expect((await call(b.url, 'POST', '/v1/auth', { body: { email: b.owner.email, password: b.owner.password } })).status).toBe(200);
  await a.stop();
  await b.stop();
});

test('keys given in the settings are used (no key file is made in the data dir; a missing key file stops the start); another signing key refuses the tokens', async () => {
  const key = randomBytes(32).toString('base64');
  const dir = await tmpDir('ferry-instances-key-');
  const signIn = async (svc: TestService) => {
    const r = await call(svc.url, 'POST', '/v1/auth', { body: { email: svc.owner.email, password: svc.owner.password } });
    expect(r.status).toBe(200);
    return r.body.token as string;
  };
  const check = async (svc: TestService, token: string) => (await call(svc.url, 'GET', '/v1/me', { headers: { 'X-User-Token': token } })).status;

  const sealingFile = path.join(await tmpDir('ferry-instances-keys-'), 'sealing.key');
  await fs.writeFile(sealingFile, `${randomBytes(32).toString('base64')}\n`);
  await expect(instance(dir, { 'signing-key': key, 'sealing-key-file': `${sealingFile}.missing` })).rejects.toThrow(/cannot read the sealing key file/);

  const first = await instance(dir, { 'signing-key': key, 'sealing-key-file': sealingFile });
  const token = await signIn(first);
  await first.stop();
  await expect(fs.stat(path.join(dir, 'signing.key'))).rejects.toThrow();
  await expect(fs.stat(path.join(dir, 'sealing.key'))).rejects.toThrow();

  const other = await instance(dir, { 'signing-key': randomBytes(32).toString('base64') });
  expect(await check(other, token)).toBe(401);
  await other.stop();

  const same = await instance(dir, { 'signing-key': key });
  expect(await check(same, token)).toBe(200);
  await same.stop();
});

/** Resolves once connecting to `port` is refused. */
const refused = (port: number) =>
  new Promise<boolean>((resolve) => {
    const s = net.connect(port, '127.0.0.1');
    s.once('connect', () => {
      s.destroy();
      resolve(false);
    });
    s.once('error', (err: NodeJS.ErrnoException) => resolve(err.code === 'ECONNREFUSED'));
  });

/** One raw HTTP/1.1 exchange whose bytes the test sends when it likes; resolves the answer's status line and body. */
function rawExchange(port: number) {
  const socket = net.connect(port, '127.0.0.1');
  let got = '';
  socket.on('data', (d) => (got += d.toString('utf8')));
  const ended = new Promise<string>((resolve) => socket.on('close', () => resolve(got)));
  socket.on('error', () => undefined);
  return {
    connected: new Promise<void>((resolve) => socket.once('connect', () => resolve())),
    send: (text: string) => new Promise<void>((resolve) => socket.write(text, () => resolve())),
    ended,
  };
}

test('ferry serve on SIGTERM: stops accepting at once, answers the request in flight (readyz then says shutting_down), and exits 0', async () => {
  const dir = await tmpDir('ferry-instances-sigterm-');
  const serve = startFerry(
    ['serve', '--listen', '127.0.0.1:0', '--data-dir', dir, '--init-owner', 'o@example.com:pw-pw-pw-pw', '--shutdown-grace-ms', '20000'],
    { FERRY_S3_ENDPOINT: store.url, FERRY_S3_BUCKET: BUCKET, FERRY_S3_ACCESS_KEY: creds.accessKey, FERRY_S3_SECRET_KEY: creds.secretKey },
  );
  processes.push(serve);
  const url = jsonLine(await serve.waitFor((l) => jsonLine(l)?.msg === 'ferry hosted service ready', 'ready line'))!.url as string;
  const port = Number(new URL(url).port);

  // A sign-in whose body is half sent, and a readiness check whose headers are: both in flight at the signal.
  const body = JSON.stringify({ email: 'o@example.com', password: 'pw-pw-pw-pw' });
  const slow = rawExchange(port);
  await slow.connected;
  await slow.send(`POST /v1/auth HTTP/1.1\r\nhost: 127.0.0.1\r\ncontent-type: application/json\r\ncontent-length: ${body.length}\r\n\r\n${body.slice(0, 10)}`);
  const ready = rawExchange(port);
  await ready.connected;
  await ready.send('GET /readyz HTTP/1.1\r\nhost: 127.0.0.1\r\n');
  // Both requests have reached the service before the signal.
  await new Promise((r) => setTimeout(r, 200));

  serve.child.kill('SIGTERM');
  await serve.waitFor((l) => jsonLine(l)?.msg === 'shutting down', 'shutting down line');
  await waitFor('new connections to be refused', async () => ((await refused(port)) ? true : undefined));
  expect(serve.child.exitCode).toBeNull();

  await ready.send('\r\n');
  const readyAnswer = await ready.ended;
  expect(readyAnswer).toMatch(/^HTTP\/1\.1 503 /);
  expect(readyAnswer.toLowerCase()).toContain('connection: close');
  expect(JSON.parse(readyAnswer.slice(readyAnswer.indexOf('\r\n\r\n') + 4))).toMatchObject({ code: 'shutting_down' });

  await slow.send(body.slice(10));
  const answer = await slow.ended;
  expect(answer).toMatch(/^HTTP\/1\.1 200 /);
  expect(JSON.parse(answer.slice(answer.indexOf('\r\n\r\n') + 4))).toMatchObject({ token: expect.any(String) });

  expect(await serve.done()).toBe(0);
  expect(serve.lines.some((l) => jsonLine(l)?.msg === 'stopped')).toBe(true);
});
