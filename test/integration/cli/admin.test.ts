// `ferry admin` run as a real child process against a temporary data dir; its
// effects are then checked through the running service and its database.
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, test, vi } from 'vitest';
import { ferry } from '../../helpers/cli.js';
import { call, startTestService, type TestService } from '../../helpers/hosted.js';
import { loadOrCreateStoreCredentials } from '../../../src/objectstore/index.js';

// Each run starts a Node process with tsx: slow on a busy machine.
vi.setConfig({ testTimeout: 180_000, hookTimeout: 120_000 });

let dataDir: string;
let svc: TestService | undefined;
const admin = (args: string[], env: Record<string, string> = {}) => ferry(['admin', ...args, '--data-dir', dataDir], env);
const json = async (args: string[], env: Record<string, string> = {}) => {
  const r = await admin([...args, '--json'], env);
  expect(r.code, r.stderr).toBe(0);
  return JSON.parse(r.stdout);
};
const signIn = (email: string, password: string) => call(svc!.url, 'POST', '/v1/auth', { body: { email, password } });

let teamId: string;
let apiKey: string;

beforeAll(async () => {
  dataDir = await fs.mkdtemp(path.join(os.tmpdir(), 'ferry-admin-cli-'));
});
afterAll(async () => {
  await svc?.close();
  await fs.rm(dataDir, { recursive: true, force: true });
});

describe('ferry admin on a fresh data dir', () => {
  test('add-team creates the database and a Team', async () => {
    const t = await json(['add-team', '--name', 'Acme Studio', '--subdomain', 'acme']);
    expect(t).toEqual({ id: expect.stringMatching(/^team_/), name: 'Acme Studio', subdomain: 'acme' });
    teamId = t.id;
    await fs.access(path.join(dataDir, 'ferry.db'));
  });

  test('add-user creates users with their role; the password may come from FERRY_ADMIN_PASSWORD', async () => {
    const alice = await json(['add-user', '--email', 'alice@example.com', '--password', 'alice-secret-1', '--name', 'Alice', '--team', 'acme', '--role', 'owner']);
    expect(alice).toMatchObject({ user: { email: 'alice@example.com', name: 'Alice' }, team_id: teamId, role: 'owner', created: true });
    const bob = await json(['add-user', '--email', 'bob@example.com', '--team', teamId, '--role', 'admin'], { FERRY_ADMIN_PASSWORD: 'bob-secret-12' });
    expect(bob).toMatchObject({ user: { email: 'bob@example.com' }, role: 'admin', created: true });
  });

  test('add-user of a known user adds a membership, or changes the role, without touching the password', async () => {
    await json(['add-team', '--name', 'Side Project']);
    const r = await json(['add-user', '--email', 'bob@example.com', '--team', 'side-project', '--role', 'member']);
    expect(r).toMatchObject({ created: false, role: 'member' });
    const demoted = await json(['add-user', '--email', 'alice@example.com', '--team', 'side-project', '--role', 'admin']);
    expect(demoted).toMatchObject({ created: false, role: 'admin' });
  });

  test('list shows Teams, members and roles', async () => {
    const all = await json(['list']);
    const acme = all.teams.find((t: { subdomain: string }) => t.subdomain === 'acme');
    expect(acme.members.map((m: { email: string; role: string }) => [m.email, m.role]).sort()).toEqual([
      ['alice@example.com', 'owner'],
      ['bob@example.com', 'admin'],
    ]);
    const side = all.teams.find((t: { subdomain: string }) => t.subdomain === 'side-project');
    expect(side.members).toHaveLength(2);
    const text = await admin(['list']);
    expect(text.code).toBe(0);
    expect(text.stdout).toContain('team Acme Studio');
    expect(text.stdout).toMatch(/owner\s+alice@example\.com/);
  });

  test('create-api-key prints a secret once', async () => {
    const k = await json(['create-api-key', '--email', 'bob@example.com', '--team', 'acme', '--name', 'deploy']);
    expect(k).toMatchObject({ id: expect.stringMatching(/^key_/), key: expect.stringMatching(/^fk_/), team_id: teamId, name: 'deploy' });
    apiKey = k.key;
  });

  test("store-credentials prints the embedded store's keys", async () => {
    const c = await json(['store-credentials']);
    const stored = await loadOrCreateStoreCredentials(dataDir);
    expect(c).toMatchObject({ access_key: stored.accessKey, secret_key: stored.secretKey, bucket: 'ferry', endpoint: expect.stringMatching(/^http:\/\//) });
  });
});

describe('the service sees what ferry admin wrote', () => {
  beforeAll(async () => {
    svc = await startTestService({ 'data-dir': dataDir });
  });

  test('users sign in with their passwords and see their Teams and roles', async () => {
    const a = await signIn('alice@example.com', 'alice-secret-1');
    expect(a.status).toBe(200);
    expect(a.body.user).toMatchObject({ email: 'alice@example.com', name: 'Alice' });
    const teams = await call(svc!.url, 'GET', '/v1/teams', { headers: { 'x-user-token': a.body.token } });
    expect(teams.body.map((t: { subdomain: string }) => t.subdomain).sort()).toEqual(['acme', 'side-project']);
    const members = await call(svc!.url, 'GET', `/v1/teams/${teamId}/members`, { headers: { 'x-user-token': a.body.token } });
    expect(members.body.map((m: { email: string; policy_key: string }) => `${m.email}:${m.policy_key}`).sort()).toEqual([
      'alice@example.com:owner',
      'bob@example.com:admin',
    ]);
    expect((await signIn('bob@example.com', 'bob-secret-12')).status).toBe(200);
  });

  test('the printed API key works and belongs to its user and Team', async () => {
    const me = await call(svc!.url, 'GET', '/v1/me', { headers: { 'x-api-key': apiKey } });
    expect(me.status).toBe(200);
    expect(me.body.email).toBe('bob@example.com');
    const teams = await call(svc!.url, 'GET', '/v1/teams', { headers: { 'x-api-key': apiKey } });
    expect(teams.body.map((t: { id: string }) => t.id)).toEqual([teamId]);
    const row = await svc!.ctx.db.selectFrom('api_keys').selectAll().where('name', '=', 'deploy').executeTakeFirstOrThrow();
    expect(JSON.stringify(row)).not.toContain(apiKey);
  });

  test('reset-password takes effect while the service runs, and ends the sessions signed in before', async () => {
    const before = await signIn('alice@example.com', 'alice-secret-1');
    expect(before.status).toBe(200);
    const r = await admin(['reset-password', '--email', 'ALICE@example.com'], { FERRY_ADMIN_PASSWORD: 'a-brand-new-one' });
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toMatch(/every session of the user has ended/);
    expect((await signIn('alice@example.com', 'alice-secret-1')).status).toBe(401);
    const after = await signIn('alice@example.com', 'a-brand-new-one');
    expect(after.status).toBe(200);
    const old = { 'x-user-token': before.body.token };
    expect((await call(svc!.url, 'GET', '/v1/me', { headers: old })).status).toBe(401);
    expect((await call(svc!.url, 'POST', '/v1/auth/refresh', { headers: old })).status).toBe(401);
    expect((await call(svc!.url, 'GET', '/v1/me', { headers: { 'x-user-token': after.body.token } })).status).toBe(200);
  });
});

describe('errors', () => {
  test('bad usage exits 2 with a clear message, and writes nothing', async () => {
    const before = await admin(['list', '--json']);
    const cases: [string[], RegExp][] = [
      [['frobnicate'], /unknown action "frobnicate"/],
      [['add-user', '--email', 'x@example.com', '--password', 'long-enough'], /--team is required/],
      [['add-user', '--email', 'x@example.com', '--password', 'long-enough', '--team', 'acme', '--role', 'boss'], /--role must be one of/],
      [['add-user', '--email', 'not-an-email', '--password', 'long-enough', '--team', 'acme'], /not an e-mail address/],
      [['add-user', '--email', 'x@example.com', '--password', 'short', '--team', 'acme'], /at least 8 characters/],
      [['add-user', '--email', 'new@example.com', '--team', 'acme'], /needs --password/],
      [['add-team', '--name', 'Bad', '--subdomain', 'no spaces!'], /--subdomain/],
      [['add-team'], /--name is required/],
      [['list', '--bogus'], /bogus/],
      [['reset-password', '--email', 'alice@example.com'], /--password/],
    ];
    const results = await Promise.all(cases.map(([args]) => admin(args, { FERRY_ADMIN_PASSWORD: '' })));
    results.forEach((r, i) => {
      expect(r.code, cases[i]![0].join(' ')).toBe(2);
      expect(r.stderr).toMatch(cases[i]![1]);
    });
    expect((await admin(['list', '--json'])).stdout).toBe(before.stdout);
  });

  test('failures exit 1', async () => {
    const [unknownTeam, unknownUser, takenSubdomain, notMember, noDb] = await Promise.all([
      admin(['add-user', '--email', 'y@example.com', '--password', 'long-enough', '--team', 'nope']),
      admin(['reset-password', '--email', 'ghost@example.com', '--password', 'long-enough']),
      admin(['add-team', '--name', 'Again', '--subdomain', 'acme']),
      admin(['create-api-key', '--email', 'owner@example.com', '--team', 'acme']),
      ferry(['admin', 'list', '--data-dir', path.join(dataDir, 'missing')]),
    ]);
    expect(unknownTeam).toMatchObject({ code: 1, stderr: expect.stringMatching(/no team with id or subdomain "nope"/) });
    expect(unknownUser).toMatchObject({ code: 1, stderr: expect.stringMatching(/no user with e-mail ghost@example.com/) });
    expect(takenSubdomain).toMatchObject({ code: 1, stderr: expect.stringMatching(/subdomain "acme" is taken/) });
    expect(notMember).toMatchObject({ code: 1, stderr: expect.stringMatching(/not a member/) });
    expect(noDb).toMatchObject({ code: 1, stderr: expect.stringMatching(/no Ferry database/) });
    await expect(fs.access(path.join(dataDir, 'missing'))).rejects.toThrow();
  });
});
