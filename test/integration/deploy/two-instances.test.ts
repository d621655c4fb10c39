// docs/deploy.md on one machine: two `ferry serve` processes on one PostgreSQL
// database and one stand-alone store (`ferry objectstore`), with the same keys,
// behind Debian's nginx running docs/deploy/nginx.conf itself (only its ports and
// log directory changed). Through nginx: the agent sends a folder and gets it back
// from its Link byte-identical, its requests answered by both instances (nginx's
// access log names the instance of each); a Link limited to 5 accesses, resolved
// 20 times at once, opens exactly 5 times; and after one instance is killed
// (SIGKILL) the agent's next transfer still completes, through the survivor.
// Runs on the PostgreSQL pass of `npm test` only (several instances need it); nginx
// missing there fails the test rather than skipping it.
import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, test, vi } from 'vitest';
import { call, GENEROUS_LIMITS } from '../../helpers/hosted.js';
import { signInAgent, startTestAgent, type TestAgent } from '../../helpers/agent.js';
import { jsonLine, repoRoot, startFerry, type Running } from '../../helpers/cli.js';
import { startDownload, treeOf, waitForState } from '../../helpers/downloads.js';
import { MiB } from '../../helpers/flow.js';
import { freePort } from '../../helpers/ports.js';
import { createTestDatabase, dropTestDatabase, onPostgres } from '../../helpers/postgres.js';

vi.setConfig({ testTimeout: 180_000, hookTimeout: 180_000 });

const owner = { email: 'owner@example.com', password: 'correct horse battery' };
const store = { accessKey: 'DEPLOYTESTKEY0001', secretKey: 'deploy-test-secret-key', bucket: 'ferry' };
const NGINX = ['/usr/sbin/nginx', '/usr/local/sbin/nginx', '/usr/bin/nginx'].find((p) => existsSync(p));

let tmp: string;
let db: { name: string; url: string } | undefined;
let ports: { a: number; b: number; store: number; nginx: number };
let objectstore: Running | undefined;
const instances: Running[] = [];
let nginx: ChildProcess | undefined;
let nginxExited: Promise<void> | undefined;
let agent: TestAgent | undefined;
let teamId: string;
const savedRetry = process.env.FERRY_AGENT_RETRY_MAX_MS;
const front = () => `http://127.0.0.1:${ports.nginx}`;

/** docs/deploy/nginx.conf with this test's ports and log directory; each replaced value must be there. */
async function guideConfig(): Promise<string> {
  let conf = await fs.readFile(path.join(repoRoot, 'docs/deploy/nginx.conf'), 'utf8');
  const swaps: [RegExp, string][] = [
    [/127\.0\.0\.1:7410\b/g, `127.0.0.1:${ports.a}`],
    [/127\.0\.0\.1:7420\b/g, `127.0.0.1:${ports.b}`],
    [/listen 8000;/g, `listen 127.0.0.1:${ports.nginx};`],
    [/\/var\/log\/nginx\//g, `${tmp}/nginx/`],
  ];
  for (const [re, to] of swaps) {
    expect(conf, `docs/deploy/nginx.conf holds ${re}`).toMatch(re);
    conf = conf.replace(re, to);
  }
  return conf;
}

/** nginx in the foreground with the guide's file inside a minimal main config, everything of its own in tmp/nginx. */
async function startNginx(): Promise<void> {
  if (!NGINX) throw new Error('nginx is not installed (Debian package nginx; .ci/run installs it)');
  const dir = path.join(tmp, 'nginx');
  await fs.mkdir(dir, { recursive: true });
  await fs.writeFile(path.join(dir, 'ferry.conf'), await guideConfig());
  const main = [
    // As root, nginx would hand its workers to `nobody`, who cannot enter the temp dir.
    ...(process.getuid?.() === 0 ? ['user root;'] : []),
    'daemon off;',
    'worker_processes 1;',
    `pid ${dir}/nginx.pid;`,
    `error_log ${dir}/error.log warn;`,
    'events { worker_connections 512; }',
    'http {',
    ...['client_body', 'proxy', 'fastcgi', 'uwsgi', 'scgi'].map((t) => `  ${t}_temp_path ${dir}/${t}_temp;`),
    `  include ${dir}/ferry.conf;`,
    '}',
  ].join('\n');
  await fs.writeFile(path.join(dir, 'nginx.conf'), main);
  let stderr = '';
  nginx = spawn(NGINX, ['-p', dir, '-c', path.join(dir, 'nginx.conf'), '-e', path.join(dir, 'error.log')], { stdio: ['ignore', 'ignore', 'pipe'] });
  nginx.stderr!.setEncoding('utf8').on('data', (d: string) => (stderr += d));
  nginxExited = new Promise((resolve) => nginx!.on('close', () => resolve()));
  await vi.waitFor(
    async () => {
      if (nginx!.exitCode !== null) throw new Error(`nginx exited ${nginx!.exitCode}: ${stderr}`);
      const r = await fetch(`${front()}/healthz`);
      expect(r.status).toBe(200);
    },
    { timeout: 30_000, interval: 100 },
  );
}

/** One `ferry serve` as the guide runs it: the shared database, store and keys, the public URL of nginx, trusting nginx's X-Forwarded-For. */
async function startInstance(port: number, keys: Record<string, string>, first: boolean): Promise<Running> {
  const limits = Object.entries(GENEROUS_LIMITS).flatMap(([k, v]) => [`--${k}`, String(v)]);
  const serve = startFerry(
    [
      'serve',
      '--listen', `127.0.0.1:${port}`,
      '--data-dir', path.join(tmp, `instance-${port}`),
      '--database', db!.url,
      '--public-url', front(),
      '--trust-proxy', '127.0.0.1',
      '--s3-endpoint', `http://127.0.0.1:${ports.store}`, '--s3-bucket', store.bucket, '--s3-region', 'us-east-1',
      '--s3-access-key', store.accessKey, '--s3-secret-key', store.secretKey, '--s3-path-style',
      ...(first ? ['--init-owner', `${owner.email}:${owner.password}`] : []),
      ...limits,
    ],
    keys,
  );
  instances.push(serve);
  await serve.waitFor((l) => jsonLine(l)?.msg === 'ferry hosted service ready', `instance ${port} ready`);
  return serve;
}

/** The access log's lines since `from` (a line count), as [path, instance port, final status]. */
async function answeredBy(from = 0): Promise<{ lines: number; requests: { path: string; port: number; status: number }[] }> {
  const text = await fs.readFile(path.join(tmp, 'nginx', 'ferry-access.log'), 'utf8').catch(() => '');
  const lines = text.split('\n').filter(Boolean);
  const requests = lines.slice(from).flatMap((l) => {
    const m = /"[A-Z]+ (\S+) [^"]*" (\d+) .* upstream=(\S+(?:, \S+)*) upstream_status=/.exec(l);
    if (!m) return [];
    // After a retry the last address is the one that answered.
    const last = m[3]!.split(', ').pop()!;
    return [{ path: m[1]!, status: Number(m[2]), port: Number(last.split(':').pop()) }];
  });
  return { lines: lines.length, requests };
}

async function makeTree(root: string, bigMiB: number): Promise<void> {
  const files: Record<string, Buffer> = {
    'empty.txt': Buffer.alloc(0),
    'top.txt': Buffer.from('at the top\n'),
    'docs/readme.md': Buffer.from('# read me\n'.repeat(100)),
    'docs/deep/notes.bin': randomBytes(70_000),
    'media/big.bin': randomBytes(bigMiB * MiB),
  };
  for (const [rel, data] of Object.entries(files)) {
    await fs.mkdir(path.dirname(path.join(root, rel)), { recursive: true });
    await fs.writeFile(path.join(root, rel), data);
  }
  await fs.mkdir(path.join(root, 'empty-folder'));
}

/** The agent sends the folder `name` (through nginx), makes its Link, downloads it back; the received tree equals the sent one. */
async function roundTrip(name: string, bigMiB: number): Promise<void> {
  const src = path.join(tmp, 'src', name, name);
  await makeTree(src, bigMiB);
  const up = await call(agent!.url, 'POST', '/uploads', { body: { team_id: teamId, paths: [src], package_name: name, chunk_size: 5 * MiB } });
  expect(up.status, JSON.stringify(up.body)).toBe(201);
  await vi.waitFor(
    async () => {
      const r = await call(agent!.url, 'GET', `/uploads/${up.body.upload_id}`);
      if (r.body.state === 'error') throw new Error(`upload failed: ${r.body.error}`);
      expect(r.body.state, JSON.stringify({ ...r.body, items: undefined })).toBe('complete');
    },
    { timeout: 120_000, interval: 100 },
  );
  const link = await call(agent!.url, 'POST', `/uploads/${up.body.upload_id}/link`, { body: {} });
  expect(link.status, JSON.stringify(link.body)).toBe(201);
  // The Link names nginx's address: the --public-url every instance was given.
  expect(link.body.url.startsWith(`${front()}/`), link.body.url).toBe(true);
  const dst = path.join(tmp, 'dst', name);
  const id = await startDownload(agent!.url, { url: link.body.url, dst_folder: dst });
  await waitForState(agent!.url, id);
  const got = await treeOf(path.join(dst, name));
  const want = await treeOf(path.dirname(src));
  // The folder was sent as one item, `name/...`; the Package folder holds it.
  expect(got).toEqual(want);
  expect(got.get(`${name}/empty-folder`)).toBe('dir');
  expect([...got.values()].filter((v) => v !== 'dir')).toHaveLength(5);
}

describe.runIf(onPostgres())('two instances behind nginx, as docs/deploy.md sets them up', () => {
  beforeAll(async () => {
    process.env.FERRY_AGENT_RETRY_MAX_MS = '2000';
    tmp = await fs.mkdtemp(path.join(os.tmpdir(), 'ferry-deploy-'));
    ports = { a: await freePort(), b: await freePort(), store: await freePort(), nginx: await freePort() };
    db = await createTestDatabase();
    objectstore = startFerry(['objectstore', '--listen', `127.0.0.1:${ports.store}`, '--data-dir', path.join(tmp, 'store'),
      '--access-key', store.accessKey, '--secret-key', store.secretKey, '--bucket', store.bucket]);
    await objectstore.waitFor((l) => jsonLine(l)?.msg === 'ferry object store ready', 'the store ready line');
    // The same keys for both, from the environment, as the guide's EnvironmentFile gives them.
    const keys = { FERRY_SIGNING_KEY: randomBytes(32).toString('base64'), FERRY_SEALING_KEY: randomBytes(32).toString('base64') };
    // One first (it migrates and makes the owner), then the other.
    await startInstance(ports.a, keys, true);
    await startInstance(ports.b, keys, false);
    await startNginx();
    agent = await startTestAgent({ url: front() }, { 'chunk-size': String(5 * MiB) });
    await signInAgent(agent.url, { owner });
    teamId = (await call(agent.url, 'GET', '/teams')).body[0].id;
  });

  afterAll(async () => {
    await agent?.close();
    if (nginx && nginx.exitCode === null) {
      nginx.kill('SIGTERM');
      await nginxExited;
    }
    for (const i of instances) await i.stop('SIGKILL');
    await objectstore?.stop('SIGKILL');
    if (db) await dropTestDatabase(db.name);
    if (tmp) await fs.rm(tmp, { recursive: true, force: true });
    if (savedRetry === undefined) delete process.env.FERRY_AGENT_RETRY_MAX_MS;
    else process.env.FERRY_AGENT_RETRY_MAX_MS = savedRetry;
  });

  test('a folder sent and received through nginx arrives byte-identical, with requests answered by both instances', async () => {
    const from = (await answeredBy()).lines;
    await roundTrip('first-folder', 12);
    const { requests } = await answeredBy(from);
    const api = requests.filter((r) => r.path.startsWith('/v1/'));
    const byA = api.filter((r) => r.port === ports.a).length;
    const byB = api.filter((r) => r.port === ports.b).length;
    expect(byA + byB).toBe(api.length);
    expect(byA, JSON.stringify(api)).toBeGreaterThan(0);
    expect(byB, JSON.stringify(api)).toBeGreaterThan(0);
  });

  test('a Link with an access limit of 5, resolved 20 times at once through both instances, opens exactly 5 times', async () => {
    const auth = await call(front(), 'POST', '/v1/auth', { body: owner });
    expect(auth.status).toBe(200);
    const h = { 'x-user-token': auth.body.token };
    const pkgId = (await call(agent!.url, 'GET', '/uploads')).body.find((u: any) => u.package_name === 'first-folder').package_id as string;
    const link = await call(front(), 'POST', `/v1/packages/${pkgId}/links`, { headers: h, body: { access_limit: 5 } });
    expect(link.status, JSON.stringify(link.body)).toBe(201);
    const from = (await answeredBy()).lines;
    const opens = await Promise.all(
      Array.from({ length: 20 }, () => call(front(), 'GET', `/v1/links/${link.body.id}?secret=${encodeURIComponent(link.body.secret)}`)),
    );
    expect(opens.filter((o) => o.status === 200)).toHaveLength(5);
    expect(opens.filter((o) => o.status === 403 && o.body.code === 'access_limit_reached')).toHaveLength(15);
    // Both instances took part.
    const resolved = (await answeredBy(from)).requests.filter((r) => r.path.startsWith(`/v1/links/${link.body.id}`));
    expect(resolved).toHaveLength(20);
    expect(new Set(resolved.map((r) => r.port))).toEqual(new Set([ports.a, ports.b]));
    const listed = await call(front(), 'GET', `/v1/packages/${pkgId}/links`, { headers: h });
    expect(listed.body.find((l: any) => l.id === link.body.id).access_count).toBe(5);
  });

  test('one instance killed with SIGKILL: the agent\'s next folder still goes up and comes back, through the survivor', async () => {
    await instances[0]!.stop('SIGKILL');
    const from = (await answeredBy()).lines;
    await roundTrip('after-the-kill', 6);
    const api = (await answeredBy(from)).requests.filter((r) => r.path.startsWith('/v1/'));
    expect(api.length).toBeGreaterThan(0);
    // Every answer came from the survivor (a request nginx first sent to the dead one was passed on).
    expect(api.filter((r) => r.port !== ports.b)).toEqual([]);
  });
});
