// Transfers ride out an outage by themselves. `ferry serve` and its store run as
// their own processes and are killed with SIGKILL in the middle of an upload and
// a download, stay away for 5 s (and for 90 s), and are started again on the same
// ports and data. Nobody touches the transfers: they wait (their records say so,
// and `ferry upload` says "waiting for the ..."), go on once the service answers,
// and complete byte-identical, sending again only the parts that were in flight.
//
// The store is `ferry objectstore` behind a counting proxy (the service signs its
// blueprints for the proxy), so every part PUT and range GET is seen; the proxy is
// closed with the processes, so the agent meets refused connections everywhere.
import { createHash, randomBytes } from 'node:crypto';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, expect, test, vi } from 'vitest';
import { call, type TestService } from '../../helpers/hosted.js';
import { signInAgent, startTestAgent, type TestAgent } from '../../helpers/agent.js';
import { ferry, startFerry, jsonLine, type Running } from '../../helpers/cli.js';
import { downloadAll, MiB } from '../../helpers/flow.js';
import { stablePort } from '../../helpers/ports.js';
import { startUploadProxy, type ProxyLog, type UploadProxy } from './uploads-proxy.js';

vi.setConfig({ testTimeout: 300_000, hookTimeout: 120_000 });

const CONCURRENCY = 4;
const owner = { email: 'owner@example.com', password: 'correct horse battery' };
const creds = { accessKey: 'OUTAGETESTKEY001', secretKey: 'outage-test-secret-key' };
const BUCKET = 'ferry-test';
const sha = (b: Buffer) => createHash('sha256').update(b).digest('hex');

let tmp: string;
let ports: { api: number; store: number; proxy: number };
let serve: Running | undefined;
let store: Running | undefined;
let proxy: (UploadProxy & { log: ProxyLog }) | undefined;
let agent: TestAgent | undefined;
let teamId: string;
let shared: { data: Buffer; link: string };
const serviceUrl = () => `http://127.0.0.1:${ports.api}`;
const savedEnv = process.env.FERRY_AGENT_RETRY_MAX_MS;

async function startStore(): Promise<void> {
  store = startFerry(['objectstore', '--listen', `127.0.0.1:${ports.store}`, '--data-dir', path.join(tmp, 'store'), '--access-key', creds.accessKey, '--secret-key', creds.secretKey, '--bucket', BUCKET]);
  await store.waitFor((l) => jsonLine(l)?.msg === 'ferry object store ready', 'the store ready line');
  proxy = await startUploadProxy(`http://127.0.0.1:${ports.store}`, { port: ports.proxy, ...(proxy ? { log: proxy.log } : {}) });
  // Slow enough that the transfers are still under way when the service dies.
  proxy.rule = () => ({ delayMs: 300 });
  proxy.getDelayMs = 300;
}

async function startService(): Promise<void> {
  serve = startFerry(['serve', '--listen', `127.0.0.1:${ports.api}`, '--data-dir', path.join(tmp, 'hosted'), '--init-owner', `${owner.email}:${owner.password}`,
    '--s3-endpoint', proxy!.url, '--s3-bucket', BUCKET, '--s3-region', 'us-east-1', '--s3-access-key', creds.accessKey, '--s3-secret-key', creds.secretKey, '--s3-path-style']);
  await serve.waitFor((l) => jsonLine(l)?.msg === 'ferry hosted service ready', 'the service ready line');
}

/** kill -9 of the service and the store; the proxy in front of the store goes too, so every connection is refused. */
async function killAll(): Promise<void> {
  await serve!.stop('SIGKILL');
  await store!.stop('SIGKILL');
  await proxy!.close();
}

beforeAll(async () => {
  // Probes at most 2 s apart (60 s by default), so that the test does not wait out a long back-off after the outage.
  process.env.FERRY_AGENT_RETRY_MAX_MS = '2000';
  tmp = await fs.mkdtemp(path.join(os.tmpdir(), 'ferry-outage-'));
  // Outside the ephemeral range: while these are down, no other test's server can be given them.
  ports = { api: await stablePort(), store: await stablePort(), proxy: await stablePort() };
  await startStore();
  await startService();
  agent = await startTestAgent({ url: serviceUrl() }, { 'chunk-size': String(5 * MiB), concurrency: String(CONCURRENCY) });
  await signInAgent(agent.url, { owner });
  teamId = (await call(agent.url, 'GET', '/teams')).body[0].id;
  // A Package to download during the outages, sent before them.
  const data = randomBytes(48 * MiB);
  await fs.writeFile(path.join(tmp, 'shared.bin'), data);
  proxy!.rule = () => 'pass';
  const up = await call(agent.url, 'POST', '/uploads', { body: { team_id: teamId, paths: [path.join(tmp, 'shared.bin')] } });
  await until(() => record('uploads', up.body.upload_id), (r) => r.state === 'complete', 'the shared Package');
  const link = await call(agent.url, 'POST', `/uploads/${up.body.upload_id}/link`, { body: {} });
  shared = { data, link: link.body.url };
  proxy!.rule = () => ({ delayMs: 300 });
});

afterAll(async () => {
  await agent?.close();
  await serve?.stop('SIGKILL');
  await store?.stop('SIGKILL');
  await proxy?.close();
  if (tmp) await fs.rm(tmp, { recursive: true, force: true });
  if (savedEnv === undefined) delete process.env.FERRY_AGENT_RETRY_MAX_MS;
  else process.env.FERRY_AGENT_RETRY_MAX_MS = savedEnv;
});

const record = async (kind: 'uploads' | 'downloads', id: string) => (await call(agent!.url, 'GET', `/${kind}/${id}`)).body;

async function until<T>(get: () => Promise<T>, ok: (v: T) => boolean, what: string, timeout = 60_000): Promise<T> {
  return vi.waitFor(async () => {
    const v = await get();
    if (!ok(v)) throw new Error(`not yet: ${what}: ${JSON.stringify(v).slice(0, 500)}`);
    return v;
  }, { timeout, interval: 50 });
}

/** Part PUTs (and range GETs) since `from` sent more than once: those in flight when the service died. */
function sentAgain(from: { puts: number; gets: number }, key: (k: string) => boolean): number {
  const puts = proxy!.log.puts.slice(from.puts).filter((p) => key(p.key));
  const gets = proxy!.log.gets.slice(from.gets).filter((g) => key(g.key));
  return puts.length - new Set(puts.map((p) => `${p.key} ${p.partNumber}`)).size + gets.length - new Set(gets.map((g) => `${g.key} ${g.range}`)).size;
}

/**
 * One outage of `outMs` in the middle of an upload (started by `ferry upload`,
 * which follows it) and a download: both wait, say so, and complete by themselves.
 */
async function rideOut(name: string, outMs: number): Promise<void> {
  const data = randomBytes(64 * MiB);
  const file = path.join(tmp, `${name}.bin`);
  await fs.writeFile(file, data);
  const dst = path.join(tmp, `${name}-received`);
  // The shared Package is downloaded once per round: its ranges count from here.
  const from = { puts: proxy!.log.puts.length, gets: proxy!.log.gets.length };
  const cli = startFerry(['upload', file, '--team-id', teamId, '--agent', agent!.url], { FERRY_AGENT_API_KEY: undefined });
  try {
    const upload = await until(async () => (await call(agent!.url, 'GET', '/uploads')).body.find((u: any) => u.name === `${name}.bin`), (u) => u?.progress > 0, 'the CLI upload under way');
    const uploadId = upload.upload_id as string;
    const dl = await call(agent!.url, 'POST', '/downloads', { body: { url: shared.link, dst_folder: dst, chunk_size: 2 * MiB } });
    expect(dl.status, JSON.stringify(dl.body)).toBe(201);
    const downloadId = dl.body.download_id as string;
    await until(() => record('downloads', downloadId), (d) => d.progress > 0, 'the download under way');

    await killAll();
    const killedAt = Date.now();
    const down = (r: any) => r.state === 'transferring' && /^(service|store)_unreachable$/.test(r.waiting?.reason ?? '');
    const waitingUp = await until(() => record('uploads', uploadId), down, 'the upload waiting');
    const waitingDown = await until(() => record('downloads', downloadId), down, 'the download waiting');
    for (const w of [waitingUp.waiting, waitingDown.waiting]) {
      expect(Date.parse(w.next_attempt_at)).toBeGreaterThanOrEqual(Date.parse(w.since));
      expect(w.last_error).toEqual(expect.any(String));
    }
    await vi.waitFor(() => expect(cli.stderr()).toMatch(/waiting for the (service|storage) \((retry in \d+ s|retrying)\)/), { timeout: 30_000 });
    // The listing and the details say it too.
    const ls = await ferry(['uploads', 'ls', '--agent', agent!.url]);
    expect(ls.stdout).toMatch(new RegExp(`${uploadId}\\s+transferring \\(waiting\\)`));
    const details = await ferry(['downloads', 'get', downloadId, '--agent', agent!.url]);
    expect(details.stdout).toMatch(/^waiting for the (service|storage) \((retry in \d+ s|retrying)\) since \S+; last error: .+$/m);

    await new Promise((r) => setTimeout(r, Math.max(0, outMs - (Date.now() - killedAt))));
    // Still waiting, not failed, however long the outage.
    expect((await record('uploads', uploadId)).state).toBe('transferring');
    expect((await record('downloads', downloadId)).state).toBe('transferring');
    await startStore();
    await startService();

    expect(await cli.done()).toBe(0);
    const done = await until(() => record('downloads', downloadId), (d) => d.state !== 'transferring', 'the download to end');
    expect(done.state, JSON.stringify(done)).toBe('complete');
    expect(done.waiting).toBeUndefined();
    expect(cli.stderr().trimEnd().split('\n').pop()).toMatch(/100%.*complete$/);

    // Byte-identical both ways.
    expect(sha(await fs.readFile(done.items[0].local_path))).toBe(sha(shared.data));
    const linkLine = /^link: \S+\/l\/([^?\s]+)\?secret=(\S+)$/m.exec(cli.lines.join('\n'));
    expect(linkLine, cli.lines.join('\n')).not.toBeNull();
    const got = await downloadAll({ url: serviceUrl() } as TestService, { id: linkLine![1]!, secret: decodeURIComponent(linkLine![2]!) });
    expect(sha(got.get(`${name}.bin`)!)).toBe(sha(data));

    // Sent again: only what was in flight when the service died (one limit for both transfers).
    const pkg = (await record('uploads', uploadId)).package_id as string;
    const again = sentAgain(from, (k) => k.includes(pkg) || k.includes(done.package_id));
    expect(again).toBeLessThanOrEqual(CONCURRENCY);
  } finally {
    await cli.stop('SIGKILL');
  }
}

test('the service and its store killed for 5 s mid-upload and mid-download: both wait, go on by themselves, byte-identical', async () => {
  await rideOut('five-seconds', 5_000);
});

test('the same for an outage of 90 s', async () => {
  await rideOut('ninety-seconds', 90_000);
});
