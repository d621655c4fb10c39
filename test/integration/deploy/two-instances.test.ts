// docs/deploy.md on one machine (test/helpers/deployment.ts): two `ferry serve`
// processes on one PostgreSQL database and a stand-alone store, with the same
// keys, behind Debian's nginx running docs/deploy/nginx.conf itself. Through
// nginx: the agent sends a folder and gets it back from its Link byte-identical,
// its requests answered by both instances (nginx's access log names the instance
// of each); a Link limited to 5 accesses, resolved 20 times at once, opens exactly
// 5 times; and after one instance is killed (SIGKILL) the agent's next transfer
// still completes, through the survivor.
// Runs in the PostgreSQL pass of `npm test` only (several instances need it);
// nginx missing there fails the test rather than skipping it.
import { randomBytes } from 'node:crypto';
import fs from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, test, vi } from 'vitest';
import { call } from '../../helpers/hosted.js';
import { signInAgent, startTestAgent, type TestAgent } from '../../helpers/agent.js';
import { repoRoot } from '../../helpers/cli.js';
import { deployOwner as owner, startDeployment, type Deployment } from '../../helpers/deployment.js';
import { startDownload, treeOf, waitForState } from '../../helpers/downloads.js';
import { MiB } from '../../helpers/flow.js';
import { onPostgres } from '../../helpers/postgres.js';
import { onlyIf, POSTGRES_ONLY } from '../../helpers/skip.js';

vi.setConfig({ testTimeout: 180_000, hookTimeout: 180_000 });

let dep: Deployment | undefined;
let agent: TestAgent | undefined;
let teamId: string;
let tmp: string;
const savedRetry = process.env.FERRY_AGENT_RETRY_MAX_MS;
const front = () => dep!.url;

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
  const got = await treeOf(dst);
  const want = await treeOf(path.dirname(src));
  // The folder was sent as one item, `name/...`; a Package that is one folder of its name lands once, unwrapped.
  expect(got).toEqual(want);
  expect(got.get(`${name}/empty-folder`)).toBe('dir');
  expect([...got.values()].filter((v) => v !== 'dir')).toHaveLength(5);
}

describe('two instances behind nginx, as docs/deploy.md sets them up', onlyIf(onPostgres(), POSTGRES_ONLY), () => {
  beforeAll(async () => {
    process.env.FERRY_AGENT_RETRY_MAX_MS = '2000';
    dep = await startDeployment();
    tmp = dep.tmp;
    agent = await startTestAgent({ url: front() }, { 'chunk-size': String(5 * MiB) });
    await signInAgent(agent.url, { owner });
    teamId = (await call(agent.url, 'GET', '/teams')).body[0].id;
  });

  afterAll(async () => {
    await agent?.close();
    await dep?.close();
    if (savedRetry === undefined) delete process.env.FERRY_AGENT_RETRY_MAX_MS;
    else process.env.FERRY_AGENT_RETRY_MAX_MS = savedRetry;
  });

  test('docs/deploy.md shows the nginx configuration this test runs, whole', async () => {
    const conf = await fs.readFile(path.join(repoRoot, 'docs/deploy/nginx.conf'), 'utf8');
    const guide = await fs.readFile(path.join(repoRoot, 'docs/deploy.md'), 'utf8');
    expect(guide).toContain('```nginx\n' + conf + '```');
  });

  test('a folder sent and received through nginx arrives byte-identical, with requests answered by both instances', async () => {
    const from = (await dep!.answered()).lines;
    await roundTrip('first-folder', 12);
    const { requests } = await dep!.answered(from);
    const api = requests.filter((r) => r.path.startsWith('/v1/'));
    const byA = api.filter((r) => r.port === dep!.ports[0]).length;
    const byB = api.filter((r) => r.port === dep!.ports[1]).length;
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
    const from = (await dep!.answered()).lines;
    const opens = await Promise.all(
      Array.from({ length: 20 }, () => call(front(), 'GET', `/v1/links/${link.body.id}?secret=${encodeURIComponent(link.body.secret)}`)),
    );
    expect(opens.filter((o) => o.status === 200)).toHaveLength(5);
    expect(opens.filter((o) => o.status === 403 && o.body.code === 'access_limit_reached')).toHaveLength(15);
    // Both instances took part.
    const resolved = (await dep!.answered(from)).requests.filter((r) => r.path.startsWith(`/v1/links/${link.body.id}`));
    expect(resolved).toHaveLength(20);
    expect(new Set(resolved.map((r) => r.port))).toEqual(new Set([dep!.ports[0], dep!.ports[1]]));
    const listed = await call(front(), 'GET', `/v1/packages/${pkgId}/links`, { headers: h });
    expect(listed.body.find((l: any) => l.id === link.body.id).access_count).toBe(5);
  });

  test('one instance killed with SIGKILL: the agent\'s next folder still goes up and comes back, through the survivor', async () => {
    await dep!.instances[0].stop('SIGKILL');
    const from = (await dep!.answered()).lines;
    await roundTrip('after-the-kill', 6);
    const api = (await dep!.answered(from)).requests.filter((r) => r.path.startsWith('/v1/'));
    expect(api.length).toBeGreaterThan(0);
    // Every answer came from the survivor (a request nginx first sent to the dead one was passed on).
    expect(api.filter((r) => r.port !== dep!.ports[1])).toEqual([]);
  });
});
