// Portal download automations against the real service, store and SQLite: the
// Packages a Portal received that were finalized after effective_time, and only
// those, are fetched once each into dst_folder (a Portal's subfolder for the
// all-Portals kind, never outside the folder whatever the Portal's name); their
// private Links are deleted once fetched; after an agent restart nothing is
// fetched twice and what arrives next is fetched.
import { randomBytes } from 'node:crypto';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, test, vi } from 'vitest';
import { call, startTestService, type TestService } from '../../helpers/hosted.js';
import { ownerActor, type Actor } from '../../helpers/auth.js';
import { signInAgent, startTestAgent, type TestAgent } from '../../helpers/agent.js';
import { finalizePackage, sha256, uploadFile, type Pkg } from '../../helpers/flow.js';
import { treeOf } from '../../helpers/downloads.js';
import { openAgentDb } from '../../../src/agent/store/db.js';

const WAIT = { timeout: 25_000, interval: 100 };

let svc: TestService;
let owner: Actor;
let agent: TestAgent;
let tmp: string;
const portals: Record<string, { id: string; name: string }> = {};

async function portal(subdomain: string, name: string) {
  const r = await call(svc.url, 'POST', `/v1/teams/${owner.teamId}/portals`, {
    headers: owner.h,
    body: { name, subdomain, active: true, recipients: ['desk@example.com'] },
  });
  expect(r.status, JSON.stringify(r.body)).toBe(201);
  portals[subdomain] = r.body;
}

/** A Package sent to a Portal and finalized: `files` maps `folder/name` to content. */
async function arrive(subdomain: string, name: string, files: Record<string, Buffer>): Promise<string> {
  const r = await call(svc.url, 'POST', `/v1/portals/${portals[subdomain]!.id}/packages`, {
    body: { name, description: '', sender: 'sender@example.com' },
  });
  expect(r.status, JSON.stringify(r.body)).toBe(201);
  const pkg: Pkg = { id: r.body.id, token: r.body.access_token, h: { 'x-package-token': r.body.access_token }, body: r.body };
  for (const [rel, data] of Object.entries(files)) {
    const cut = rel.lastIndexOf('/');
    await uploadFile(svc, pkg, rel.slice(cut + 1), cut < 0 ? '' : rel.slice(0, cut), data);
  }
  await finalizePackage(svc, pkg);
  return pkg.id;
}

async function fetched(id: string, n: number) {
  return vi.waitFor(async () => {
    const r = await call(agent.url, 'GET', `/automations/${id}/packages`);
    expect(r.status).toBe(200);
    expect(r.body.filter((p: any) => p.state === 'failed' || p.state === 'cancelled')).toEqual([]);
    expect(r.body.filter((p: any) => p.state === 'complete')).toHaveLength(n);
    return r.body as any[];
  }, WAIT);
}

const shaOf = (files: Record<string, Buffer>, prefix: string) => new Map(Object.entries(files).map(([k, v]) => [`${prefix}/${k}`, sha256(v)]));

/** Files only (folders left out) of what a folder holds: path -> SHA-256. */
async function filesIn(dir: string): Promise<Map<string, string>> {
  return new Map([...(await treeOf(dir))].filter(([, v]) => v !== 'dir'));
}

const OLD = { 'old.txt': Buffer.from('before the automation\n') };
const NEW1 = { 'cam/a.mov': randomBytes(2 * 1024 * 1024 + 5), 'notes.txt': Buffer.from('one\n') };
const NEW2 = { 'b.bin': randomBytes(300_000) };
const OTHER = { 'other.txt': Buffer.from('to beta\n') };
const NEW3 = { 'c.txt': Buffer.from('after the restart\n') };

let single: string;
let all: string;

beforeAll(async () => {
  process.env.FERRY_AGENT_AUTOMATION_POLL_MS = '200';
  svc = await startTestService();
  owner = await ownerActor(svc);
  agent = await startTestAgent(svc);
  await signInAgent(agent.url, svc);
  tmp = await fs.mkdtemp(path.join(os.tmpdir(), 'ferry-portal-dl-'));
  await portal('alpha', 'Alpha desk');
  await portal('beta', '../../beta');
});

afterAll(async () => {
  await agent?.close();
  await svc?.close();
  if (tmp) await fs.rm(tmp, { recursive: true, force: true });
  delete process.env.FERRY_AGENT_AUTOMATION_POLL_MS;
});

describe('Portal download automations', () => {
  test('portal_download fetches the Packages finalized after effective_time, and only those, once each', async () => {
    const before = new Date(Date.now() - 1000).toISOString();
    await arrive('alpha', 'old', OLD);
    await new Promise((r) => setTimeout(r, 20));
    const effective = new Date().toISOString();
    await new Promise((r) => setTimeout(r, 20));

    const dst = path.join(tmp, 'alpha-in');
    const r = await call(agent.url, 'POST', '/automations/portal_download', {
      body: { name: 'Alpha arrivals', portal_subdomain: 'ALPHA', dst_folder: dst, effective_time: effective, download_priority: 5 },
    });
    expect(r.status, JSON.stringify(r.body)).toBe(201);
    expect(r.body).toMatchObject({ type: 'portal_download', portal_subdomain: 'alpha', dst_folder: dst, create_package_folder: true, enabled: true, effective_time: effective });
    single = r.body.automation_id;

    await arrive('alpha', 'new1', NEW1);
    await arrive('alpha', 'new2', NEW2);
    await arrive('beta', 'other', OTHER);
    const list = await fetched(single, 2);
    expect(list.map((p) => p.name).sort()).toEqual(['new1', 'new2']);
    expect(list.every((p) => p.direction === 'fetch' && p.portal_id === portals.alpha!.id)).toBe(true);
    expect(await filesIn(dst)).toEqual(new Map([...shaOf(NEW1, 'new1'), ...shaOf(NEW2, 'new2')]));

    // Each through the agent's downloads, once; their private Links (no e-mail: those of the Portal's recipients stay) are gone once fetched.
    const downloads = (await call(agent.url, 'GET', '/downloads')).body as any[];
    expect(downloads.map((d) => d.download_id).sort()).toEqual(list.map((p) => p.transfer_id).sort());
    expect(downloads.every((d) => d.priority === 5 && d.state === 'complete')).toBe(true);
    await vi.waitFor(async () => {
      const links = await svc.ctx.db.selectFrom('links').select(['id', 'email']).where('package_id', 'in', list.map((p) => p.package_id)).execute();
      expect(links.map((l) => l.email)).toEqual(['desk@example.com', 'desk@example.com']);
    }, WAIT);

    // `before` reaches the old Package too when the automation is told so; what it fetched stays fetched.
    const put = await call(agent.url, 'PUT', `/automations/portal_download/${single}`, { body: { effective_time: before } });
    expect(put.status, JSON.stringify(put.body)).toBe(200);
    const after = await fetched(single, 3);
    expect(after.map((p) => p.name).sort()).toEqual(['new1', 'new2', 'old']);
    expect([...(await filesIn(dst)).keys()].sort()).toEqual(['new1/cam/a.mov', 'new1/notes.txt', 'new2/b.bin', 'old/old.txt']);
  });

  test('all_portals_download puts each Portal\'s Packages in a folder of its name, inside dst_folder', async () => {
    const dst = path.join(tmp, 'all-in');
    const r = await call(agent.url, 'POST', '/automations/all_portals_download', {
      body: { name: 'Everything', team_id: owner.teamId, dst_folder: dst, create_portal_subfolder: true, effective_time: '2000-01-01T00:00:00Z' },
    });
    expect(r.status, JSON.stringify(r.body)).toBe(201);
    all = r.body.automation_id;
    await fetched(all, 4);
    // The Portal named "../../beta" is a folder of that name inside dst_folder, not two levels up.
    expect(await filesIn(dst)).toEqual(
      new Map([
        ...shaOf(OLD, 'Alpha desk/old'),
        ...shaOf(NEW1, 'Alpha desk/new1'),
        ...shaOf(NEW2, 'Alpha desk/new2'),
        ...shaOf(OTHER, '.._.._beta/other'),
      ]),
    );
    expect((await fs.readdir(tmp)).sort()).toEqual(['all-in', 'alpha-in']);
  });

  test('after an agent restart nothing is fetched twice, and what arrives next is fetched', async () => {
    const configDir = agent.configDir;
    const downloadsBefore = (await call(agent.url, 'GET', '/downloads')).body.length;
    expect(downloadsBefore).toBe(7);
    await agent.agent.close();
    agent = await startTestAgent(svc, { 'config-dir': configDir });
    await arrive('alpha', 'new3', NEW3);
    const list = await fetched(single, 4);
    await fetched(all, 5);
    expect(list.map((p) => p.name).sort()).toEqual(['new1', 'new2', 'new3', 'old']);
    // A poll or two more, then count: one download per Package per automation.
    await new Promise((r) => setTimeout(r, 600));
    const downloads = (await call(agent.url, 'GET', '/downloads')).body as any[];
    expect(downloads).toHaveLength(9);
    expect([...(await filesIn(path.join(tmp, 'alpha-in'))).keys()].sort()).toEqual(['new1/cam/a.mov', 'new1/notes.txt', 'new2/b.bin', 'new3/c.txt', 'old/old.txt']);
  });

  test('disabled, it fetches nothing; enabled again, it catches up', async () => {
    const off = await call(agent.url, 'POST', `/automations/${single}/disable`);
    expect(off.status).toBe(200);
    expect(off.body.enabled).toBe(false);
    await arrive('alpha', 'while-off', { 'w.txt': Buffer.from('w\n') });
    await new Promise((r) => setTimeout(r, 800));
    const during = (await call(agent.url, 'GET', `/automations/${single}/packages`)).body as any[];
    expect(during.map((p) => p.name)).not.toContain('while-off');
    const on = await call(agent.url, 'POST', `/automations/${single}/enable`);
    expect(on.body.enabled).toBe(true);
    const list = await fetched(single, 5);
    expect(list.map((p) => p.name)).toContain('while-off');
  });

  test('a fetch recorded but not begun when the agent stopped is begun after a restart, once', async () => {
    const configDir = agent.configDir;
    await agent.agent.close();
    const pkgId = await arrive('alpha', 'crashed', { 'k.txt': Buffer.from('k\n') });
    const db = openAgentDb(path.join(configDir, 'agent.db'));
    const t = new Date().toISOString();
    db.prepare(`INSERT INTO automation_packages (id, automation_id, direction, package_id, portal_id, name, state, dst_folder, created_at, updated_at)
      VALUES ('00000000-0000-4000-8000-000000000001', ?, 'fetch', ?, ?, 'crashed', 'pending', ?, ?, ?)`).run(single, pkgId, portals.alpha!.id, path.join(tmp, 'alpha-in'), t, t);
    await db.shut();
    agent = await startTestAgent(svc, { 'config-dir': configDir });
    const list = await fetched(single, 6);
    expect(list.filter((p) => p.name === 'crashed')).toMatchObject([{ transfer_id: '00000000-0000-4000-8000-000000000001', state: 'complete' }]);
    expect(await fs.readFile(path.join(tmp, 'alpha-in', 'crashed', 'k.txt'), 'utf8')).toBe('k\n');
    expect((await fs.readdir(path.join(tmp, 'alpha-in'))).filter((n) => n.startsWith('crashed'))).toEqual(['crashed']);
  });
});
