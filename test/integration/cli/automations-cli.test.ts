// `ferry automations ...` as child processes against a real agent and service:
// add a watch folder and a Portal download, see them work through ls, get and
// packages, change them with set, switch them off and on, remove them; usage
// errors exit 2, failures 1 with the agent's message.
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, test, vi } from 'vitest';
import { ferry } from '../../helpers/cli.js';
import { call, startTestService, type TestService } from '../../helpers/hosted.js';
import { signInAgent, startTestAgent, type TestAgent } from '../../helpers/agent.js';
import { ownerActor, type Actor } from '../../helpers/auth.js';
import { finalizePackage, uploadFile } from '../../helpers/flow.js';

vi.setConfig({ testTimeout: 120_000, hookTimeout: 120_000 });
const WAIT = { timeout: 60_000, interval: 100 };

let svc: TestService;
let owner: Actor;
let agent: TestAgent;
let unsigned: TestAgent;
let tmp: string;

const clean = { FERRY_AGENT_URL: undefined, FERRY_AGENT_API_KEY: undefined };
const run = (args: string[], t: TestAgent = agent) => ferry([...args, '--agent', t.url], clean);

beforeAll(async () => {
  process.env.FERRY_AGENT_AUTOMATION_POLL_MS = '200';
  svc = await startTestService();
  owner = await ownerActor(svc);
  agent = await startTestAgent(svc);
  unsigned = await startTestAgent(svc);
  await signInAgent(agent.url, svc);
  tmp = await fs.mkdtemp(path.join(os.tmpdir(), 'ferry-cli-automations-'));
  await fs.mkdir(path.join(tmp, 'outbox'));
  const portal = await call(svc.url, 'POST', `/v1/teams/${owner.teamId}/portals`, {
    headers: owner.h,
    body: { name: 'Desk', subdomain: 'desk', active: true, recipients: ['desk@example.com'] },
  });
  expect(portal.status).toBe(201);
});

afterAll(async () => {
  await agent?.close();
  await unsigned?.close();
  await svc?.close();
  if (tmp) await fs.rm(tmp, { recursive: true, force: true });
  delete process.env.FERRY_AGENT_AUTOMATION_POLL_MS;
});

describe('ferry automations', () => {
  let watchId: string;

  test('help, an empty list, usage errors (exit 2) and a missing session (exit 1)', async () => {
    const help = await run(['automations', '--help']);
    expect(help.code).toBe(0);
    for (const action of ['ls', 'get ID', 'packages ID', 'add TYPE', 'set ID', 'rm ID', 'enable ID, disable ID']) expect(help.stdout).toContain(action);
    expect(help.stdout).toContain('--delete-files-after-upload');

    const empty = await run(['automations', 'ls']);
    expect(empty.code, empty.stderr).toBe(0);
    expect(empty.stdout.trim()).toBe('no automations');

    const wrongFlag = await run(['automations', 'add', 'portal_download', '--name', 'x', '--timeout', '5']);
    expect(wrongFlag.code).toBe(2);
    expect(wrongFlag.stderr).toContain('--timeout does not apply to a portal_download automation');
    const noType = await run(['automations', 'add', 'stream_upload', '--name', 'x']);
    expect(noType.code).toBe(2);
    expect(noType.stderr).toContain('portal_download, all_portals_download, team_upload, portal_upload');
    const badTimeout = await run(['automations', 'add', 'team_upload', '--timeout', 'soon']);
    expect(badTimeout.code).toBe(2);

    const nobody = await run(['automations', 'ls'], unsigned);
    expect(nobody.code).toBe(1);
    expect(nobody.stderr).toContain('not signed in: run "ferry login" first');
  });

  test('add a watch folder, see it send, get it, set it, switch it off and on', async () => {
    const added = await run([
      'automations', 'add', 'team-upload', '--name', 'Outbox', '--path', path.join(tmp, 'outbox'), '--team-id', owner.teamId,
      '--timeout', '0.02', '--blacklist', '*.tmp', '--blacklist', '{a,b}.log', '--package-name-suffix', ' (cli)', '--json',
    ]);
    expect(added.code, added.stderr).toBe(0);
    const rec = JSON.parse(added.stdout);
    expect(rec).toMatchObject({ type: 'team_upload', name: 'Outbox', timeout: 0.02, blacklist: ['*.tmp', '{a,b}.log'], recipient_emails: [], enabled: true });
    watchId = rec.automation_id;

    await fs.mkdir(path.join(tmp, 'outbox', 'Shoot'));
    await fs.writeFile(path.join(tmp, 'outbox', 'Shoot', 'take1.txt'), 'take one\n');
    await fs.writeFile(path.join(tmp, 'outbox', 'Shoot', 'a.log'), 'left out\n');
    await vi.waitFor(async () => {
      const r = await run(['automations', 'packages', watchId, '--json']);
      expect(r.code, r.stderr).toBe(0);
      expect(JSON.parse(r.stdout)).toMatchObject([{ name: 'Shoot', state: 'complete', files: 1 }]);
    }, WAIT);

    const got = await run(['automations', 'get', watchId]);
    expect(got.code, got.stderr).toBe(0);
    expect(got.stdout).toMatch(/^automation aut_\w+: team_upload, enabled$/m);
    expect(got.stdout).toContain(`path: ${path.join(tmp, 'outbox')}`);
    expect(got.stdout).toContain('blacklist: *.tmp, {a,b}.log');
    expect(got.stdout).toMatch(/^complete\s+send\s+upl_\w+\s+pkg_\w+\s+Shoot\s+http:\/\/127\.0\.0\.1:\d+\/\S+\?secret=/m);
    expect((await svc.ctx.db.selectFrom('packages').select('name').execute()).map((p) => p.name)).toEqual(['Shoot (cli)']);

    const set = await run(['automations', 'set', watchId, '--name', 'Outbox 2', '--upload-loose-files', '--growing-files', '--message', 'hello']);
    expect(set.code, set.stderr).toBe(0);
    expect(set.stdout.trim()).toBe(`updated team_upload automation ${watchId} (Outbox 2)`);
    const nothing = await run(['automations', 'set', watchId]);
    expect(nothing.code).toBe(2);

    const off = await run(['automations', 'disable', watchId]);
    expect(off.stdout.trim()).toBe(`disabled automation ${watchId} (Outbox 2)`);
    const ls = await run(['automations', 'ls']);
    expect(ls.stdout).toMatch(new RegExp(`^${watchId}\\s+team_upload\\s+no\\s+\\S+\\s+Outbox 2$`, 'm'));
    const on = await run(['automations', 'enable', watchId, '--json']);
    expect(JSON.parse(on.stdout)).toMatchObject({ automation_id: watchId, enabled: true, upload_loose_files: true, growing_files: true, message: 'hello' });
    const plain = await run(['automations', 'set', watchId, '--no-growing-files', '--json']);
    expect(JSON.parse(plain.stdout)).toMatchObject({ growing_files: false });
  });

  test('add a Portal download, see it fetch, remove both; a removed one answers 404 (exit 1)', async () => {
    const dst = path.join(tmp, 'arrivals');
    const added = await run([
      'automations', 'add', 'portal_download', '--name', 'Arrivals', '--portal-subdomain', 'desk', '--dst-folder', dst,
      '--effective-time', '2000-01-01T00:00:00Z', '--no-package-folder',
    ]);
    expect(added.code, added.stderr).toBe(0);
    const id = /automation (aut_\w+)/.exec(added.stdout)![1]!;
    expect(added.stdout.trim()).toBe(`added portal_download automation ${id} (Arrivals)`);

    const portalId = (await svc.ctx.db.selectFrom('portals').select('id').executeTakeFirstOrThrow()).id;
    const made = await call(svc.url, 'POST', `/v1/portals/${portalId}/packages`, { body: { name: 'Drop', description: '', sender: 's@example.com' } });
    const pkg = { id: made.body.id, token: made.body.access_token, h: { 'x-package-token': made.body.access_token }, body: made.body };
    await uploadFile(svc, pkg, 'drop.txt', '', Buffer.from('dropped\n'));
    await finalizePackage(svc, pkg);
    await vi.waitFor(async () => expect(await fs.readFile(path.join(dst, 'drop.txt'), 'utf8').catch(() => '')).toBe('dropped\n'), WAIT);
    await vi.waitFor(async () => {
      const r = await run(['automations', 'packages', id, '--json']);
      expect(JSON.parse(r.stdout)).toMatchObject([{ direction: 'fetch', name: 'Drop', state: 'complete', package_id: pkg.id }]);
    }, WAIT);

    for (const x of [id, watchId]) {
      const rm = await run(['automations', 'rm', x]);
      expect(rm.code, rm.stderr).toBe(0);
      expect(rm.stdout).toMatch(/^removed (portal_download|team_upload) automation aut_\w+ \(.+\)$/m);
    }
    const gone = await run(['automations', 'get', id]);
    expect(gone.code).toBe(1);
    expect(gone.stderr).toContain(`automation ${id} not found (404, code 262149)`);
    expect((await run(['automations', 'ls'])).stdout.trim()).toBe('no automations');
  });
});
