// Watch folders against the real service, store and SQLite: subfolders written
// slowly are each sent once, after the timeout, complete (byte-identical through
// their Link); blacklisted files stay home, loose files go only with
// upload_loose_files; an agent restart sends nothing again; a file added to a
// sent folder goes as a Package of its own. A Portal watch folder deletes what
// it sent when told to.
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import fsp from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, test, vi } from 'vitest';
import { call, startTestService, type TestService } from '../../helpers/hosted.js';
import { ownerActor, type Actor } from '../../helpers/auth.js';
import { openEventStream, signInAgent, startTestAgent, type TestAgent } from '../../helpers/agent.js';
import { downloadAll, sha256 } from '../../helpers/flow.js';
import { openAgentDb } from '../../../src/agent/store/db.js';

/** Minutes: 3 s of quiet before a subfolder goes (the slow writes below pause 0.2 s). */
const TIMEOUT = 0.05;
const WAIT = { timeout: 60_000, interval: 100 };

let svc: TestService;
let owner: Actor;
let agent: TestAgent;
let tmp: string;
let watched: string;

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** The service's Packages of the owner's Team, by name. */
async function servicePackages(): Promise<{ id: string; name: string; description: string; state: string }[]> {
  return svc.ctx.db.selectFrom('packages').select(['id', 'name', 'description', 'state']).where('team_id', '=', owner.teamId).orderBy('created_at').execute();
}

async function packagesOf(id: string) {
  const r = await call(agent.url, 'GET', `/automations/${id}/packages`);
  expect(r.status, JSON.stringify(r.body)).toBe(200);
  return r.body as any[];
}

async function waitComplete(id: string, n: number) {
  return vi.waitFor(async () => {
    const list = await packagesOf(id);
    expect(list.filter((p) => p.state === 'failed' || p.state === 'cancelled')).toEqual([]);
    expect(list.filter((p) => p.state === 'complete')).toHaveLength(n);
    return list;
  }, WAIT);
}

beforeAll(async () => {
  process.env.FERRY_AGENT_AUTOMATION_RETRY_MS = '300';
  svc = await startTestService();
  owner = await ownerActor(svc);
  agent = await startTestAgent(svc);
  await signInAgent(agent.url, svc);
  tmp = await fsp.mkdtemp(path.join(os.tmpdir(), 'ferry-watch-'));
  watched = path.join(tmp, 'outbox');
  await fsp.mkdir(watched);
});

afterAll(async () => {
  await agent?.close();
  await svc?.close();
  if (tmp) await fsp.rm(tmp, { recursive: true, force: true });
  delete process.env.FERRY_AGENT_AUTOMATION_RETRY_MS;
});

describe('a Team watch folder', () => {
  let automationId: string;
  const a1 = randomBytes(3 * 1024 * 1024 + 17);
  const b1 = Buffer.from('b one\n'.repeat(1000));
  const b2 = randomBytes(700_000);

  test('two subfolders written slowly: each sent once, after the timeout, complete; blacklisted and loose files stay', async () => {
    const events = await openEventStream(agent.url, { query: 'types=automation' });
    const created = await call(agent.url, 'POST', '/automations/team_upload', {
      body: {
        name: 'Outbox', path: watched, team_id: owner.teamId, recipient_emails: [], timeout: TIMEOUT,
        blacklist: ['*.tmp', 'skip'], package_name_suffix: ' (watched)', message: 'from the outbox',
      },
    });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    automationId = created.body.automation_id;
    expect(created.body).toMatchObject({
      type: 'team_upload', name: 'Outbox', enabled: true, path: watched, timeout: TIMEOUT, recipient_emails: [],
      upload_loose_files: false, delete_files_after_upload: false, last_run_at: null, last_error: null,
    });
    expect((await events.next((m) => m.json?.automation_id === automationId)).json.name).toBe('Outbox');

    // A loose file, and two subfolders written a piece at a time for longer than the timeout.
    await fsp.writeFile(path.join(watched, 'loose.txt'), 'loose\n');
    for (const d of ['A', 'B/sub', 'B/skip']) await fsp.mkdir(path.join(watched, d), { recursive: true });
    const pieces = 20;
    for (let i = 0; i < pieces; i++) {
      const cut = (b: Buffer) => b.subarray(Math.floor((b.length * i) / pieces), Math.floor((b.length * (i + 1)) / pieces));
      fs.appendFileSync(path.join(watched, 'A', 'a1.bin'), cut(a1));
      fs.appendFileSync(path.join(watched, 'B', 'b1.txt'), cut(b1));
      fs.appendFileSync(path.join(watched, 'B', 'sub', 'b2.bin'), cut(b2));
      if (i === 3) fs.writeFileSync(path.join(watched, 'B', 'partial.tmp'), 'being copied');
      if (i === 5) fs.writeFileSync(path.join(watched, 'B', 'skip', 'inner.txt'), 'not for sending');
      // Still being written: nothing has gone.
      expect(await packagesOf(automationId)).toEqual([]);
      expect(await servicePackages()).toEqual([]);
      await sleep(200);
    }

    const list = await waitComplete(automationId, 2);
    expect(list.map((p) => p.name).sort()).toEqual(['A', 'B']);
    for (const p of list) {
      expect(p).toMatchObject({ direction: 'send', state: 'complete', link_url: expect.stringContaining('secret=') });
      expect(p.fingerprint).toMatch(/^[0-9a-f]{64}$/);
    }
    expect(list.find((p) => p.name === 'A').files).toBe(1);
    expect(list.find((p) => p.name === 'B').files).toBe(2);

    const pkgs = await servicePackages();
    expect(pkgs.map((p) => p.name).sort()).toEqual(['A (watched)', 'B (watched)']);
    expect(pkgs.every((p) => p.state === 'finalized' && p.description === 'from the outbox')).toBe(true);

    // Byte-identical through each Package's Link; nothing blacklisted, no loose file.
    const got = new Map<string, Buffer>();
    for (const p of list) {
      const u = new URL(p.link_url);
      for (const [k, v] of await downloadAll(svc, { id: u.pathname.split('/').pop()!, secret: u.searchParams.get('secret')! })) got.set(k, v);
    }
    expect([...got.keys()].sort()).toEqual(['A/a1.bin', 'B/b1.txt', 'B/sub/b2.bin']);
    expect(sha256(got.get('A/a1.bin')!)).toBe(sha256(a1));
    expect(got.get('B/b1.txt')!.equals(b1)).toBe(true);
    expect(sha256(got.get('B/sub/b2.bin')!)).toBe(sha256(b2));

    const record = (await call(agent.url, 'GET', `/automations/${automationId}`)).body;
    expect(record.last_run_at).toEqual(expect.any(String));
    expect(record.last_error).toBeNull();
    events.close();
  });

  test('after an agent restart nothing is sent again; a new subfolder is', async () => {
    const configDir = agent.configDir;
    await agent.agent.close();
    agent = await startTestAgent(svc, { 'config-dir': configDir });
    // C appears after the restart: once it is sent, A and B (due earlier) have been looked at too.
    await fsp.mkdir(path.join(watched, 'C'));
    await fsp.writeFile(path.join(watched, 'C', 'c.txt'), 'c\n');
    const list = await waitComplete(automationId, 3);
    expect(list.map((p) => p.name)).toEqual(['A', 'B', 'C']);
    await sleep(TIMEOUT * 60_000 + 500);
    expect((await servicePackages()).map((p) => p.name).sort()).toEqual(['A (watched)', 'B (watched)', 'C (watched)']);
  });

  test('a file added to a sent subfolder goes as a new Package holding it alone', async () => {
    await fsp.writeFile(path.join(watched, 'A', 'late.txt'), 'added later\n');
    const list = await waitComplete(automationId, 4);
    const late = list[3];
    expect(late).toMatchObject({ name: 'A', files: 1 });
    const u = new URL(late.link_url);
    const got = await downloadAll(svc, { id: u.pathname.split('/').pop()!, secret: u.searchParams.get('secret')! });
    expect([...got.keys()]).toEqual(['A/late.txt']);
  });

  test('loose files go only with upload_loose_files, each as a Package of its own', async () => {
    expect((await servicePackages()).some((p) => p.name.startsWith('loose'))).toBe(false);
    const r = await call(agent.url, 'PUT', `/automations/team_upload/${automationId}`, { body: { upload_loose_files: true } });
    expect(r.status, JSON.stringify(r.body)).toBe(200);
    expect(r.body.upload_loose_files).toBe(true);
    const list = await waitComplete(automationId, 5);
    expect(list[4]).toMatchObject({ name: 'loose.txt', files: 1 });
    const names = (await servicePackages()).map((p) => p.name);
    expect(names.filter((n) => n === 'loose.txt (watched)')).toHaveLength(1);
    expect(names).toHaveLength(5);
  });
});

describe('a crash between recording a send and making its upload', () => {
  test('the send recorded but never made is made, once, after a restart', async () => {
    const auto = (await call(agent.url, 'GET', '/automations')).body.find((a: any) => a.name === 'Outbox');
    const configDir = agent.configDir;
    await agent.agent.close();
    // What the agent leaves when it dies right after recording a send: the record (its files counted as sent), no upload.
    await fsp.mkdir(path.join(watched, 'E'));
    await fsp.writeFile(path.join(watched, 'E', 'e.txt'), 'e\n');
    const st = await fsp.stat(path.join(watched, 'E', 'e.txt'));
    const db = openAgentDb(path.join(configDir, 'agent.db'));
    const t = new Date().toISOString();
    db.prepare(`INSERT INTO automation_packages (id, automation_id, direction, unit, fingerprint, name, state, created_at, updated_at)
      VALUES ('upl_crashed', ?, 'send', 'E', 'x', 'E', 'pending', ?, ?)`).run(auto.automation_id, t, t);
    db.prepare("INSERT INTO automation_sent_files (entry_id, rel_path, size, mtime_ms) VALUES ('upl_crashed', 'E/e.txt', ?, ?)").run(st.size, st.mtimeMs);
    await db.shut();

    agent = await startTestAgent(svc, { 'config-dir': configDir });
    // At start the record meets no upload: it is dropped, so E counts as not sent.
    const before = await packagesOf(auto.automation_id);
    expect(before.map((p) => p.transfer_id)).not.toContain('upl_crashed');
    const list = await waitComplete(auto.automation_id, before.length + 1);
    const e = list.filter((p) => p.name === 'E');
    expect(e).toHaveLength(1);
    expect((await servicePackages()).filter((p) => p.name === 'E (watched)')).toHaveLength(1);
  });
});

describe('a Portal watch folder', () => {
  test('sends each subfolder to the Portal and deletes what it sent (delete_files_after_upload)', async () => {
    const portal = await call(svc.url, 'POST', `/v1/teams/${owner.teamId}/portals`, {
      headers: owner.h,
      body: { name: 'Inbox', subdomain: 'inbox', active: true, recipients: ['desk@example.com'] },
    });
    expect(portal.status).toBe(201);
    const dir = path.join(tmp, 'to-portal');
    await fsp.mkdir(path.join(dir, 'Day1', 'cam'), { recursive: true });
    const clip = randomBytes(200_000);
    await fsp.writeFile(path.join(dir, 'Day1', 'cam', 'clip.mov'), clip);
    await fsp.writeFile(path.join(dir, 'Day1', 'notes.tmp'), 'kept');
    const r = await call(agent.url, 'POST', '/automations/portal_upload', {
      body: { name: 'To the inbox', path: dir, subdomain: 'inbox', sender_email: 'cam@example.com', timeout: TIMEOUT, delete_files_after_upload: true, blacklist: ['*.tmp'] },
    });
    expect(r.status, JSON.stringify(r.body)).toBe(201);
    const [sent] = await waitComplete(r.body.automation_id, 1);
    const row = await svc.ctx.db.selectFrom('packages').selectAll().where('id', '=', sent.package_id).executeTakeFirstOrThrow();
    expect(row).toMatchObject({ portal_id: portal.body.id, sender: 'cam@example.com', state: 'finalized', name: 'Day1' });
    const link = await call(svc.url, 'POST', `/v1/packages/${sent.package_id}/links`, { headers: owner.h, body: {} });
    const got = await downloadAll(svc, link.body);
    expect([...got.keys()]).toEqual(['Day1/cam/clip.mov']);
    expect(got.get('Day1/cam/clip.mov')!.equals(clip)).toBe(true);
    // Sent files are gone, the blacklisted one stays (and so does its folder).
    await vi.waitFor(() => expect(fs.existsSync(path.join(dir, 'Day1', 'cam'))).toBe(false), WAIT);
    expect(fs.readFileSync(path.join(dir, 'Day1', 'notes.tmp'), 'utf8')).toBe('kept');
  });
});
