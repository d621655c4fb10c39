// The Automations group's routes: a session is required (401 "session is nil"),
// unknown ids answer 404, overlapping folders 409; records show every field
// with secrets masked; update, enable, disable and delete; every change is on
// the agent's event feed as an `automation` event. (Bad bodies: bad-input.test.ts.)
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { call, startTestService, type TestService } from '../../helpers/hosted.js';
import { ownerActor, type Actor } from '../../helpers/auth.js';
import { openEventStream, signInAgent, startTestAgent, type TestAgent } from '../../helpers/agent.js';

let svc: TestService;
let owner: Actor;
let agent: TestAgent;
let tmp: string;

beforeAll(async () => {
  svc = await startTestService();
  owner = await ownerActor(svc);
  agent = await startTestAgent(svc);
  tmp = await fs.mkdtemp(path.join(os.tmpdir(), 'ferry-automation-routes-'));
  for (const d of ['out', 'out2', 'in']) await fs.mkdir(path.join(tmp, d));
  const portal = await call(svc.url, 'POST', `/v1/teams/${owner.teamId}/portals`, {
    headers: owner.h,
    body: { name: 'Desk', subdomain: 'desk', active: true, recipients: ['desk@example.com'] },
  });
  expect(portal.status).toBe(201);
});

afterAll(async () => {
  await agent?.close();
  await svc?.close();
  if (tmp) await fs.rm(tmp, { recursive: true, force: true });
});

const teamUpload = () => ({
  name: 'Outbox', path: path.join(tmp, 'out'), team_id: owner.teamId, recipient_emails: ['rita@example.com'], timeout: 10, enabled: false,
  download_password: 'hunter2', tag_name: 'rushes', delete_after: 3,
});

describe('the Automations routes', () => {
  test('without a session every route answers 401 "session is nil"', async () => {
    const id = 'aut_0123456789abcdef01234567';
    const cases: [string, string, unknown?][] = [
      ['GET', '/automations'],
      ['GET', `/automations/${id}`],
      ['GET', `/automations/${id}/packages`],
      ['POST', '/automations/team_upload', teamUpload()],
      ['POST', '/automations/portal_download', { name: 'In', portal_subdomain: 'desk', dst_folder: path.join(tmp, 'in') }],
      ['PUT', `/automations/team_upload/${id}`, { name: 'x' }],
      ['DELETE', `/automations/${id}`],
      ['POST', `/automations/${id}/enable`],
      ['POST', `/automations/${id}/disable`],
    ];
    for (const [method, p, body] of cases) {
      const r = await call(agent.url, method, p, body === undefined ? {} : { body });
      expect(r.status, `${method} ${p}`).toBe(401);
      expect(r.body).toEqual({ code: 262146, message: 'session is nil' });
    }
  });

  test('create, read, update (secrets masked and kept), enable, disable, delete; each change on /events', async () => {
    await signInAgent(agent.url, svc);
    const events = await openEventStream(agent.url, { query: 'types=automation' });
    const created = await call(agent.url, 'POST', '/automations/team_upload', { body: { ...teamUpload(), colour: 'blue' } });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    const id = created.body.automation_id as string;
    expect(id).toMatch(/^aut_[0-9a-f]{24}$/);
    expect(created.body).toEqual({
      automation_id: id, type: 'team_upload', name: 'Outbox', enabled: false, path: path.join(tmp, 'out'), team_id: owner.teamId,
      recipient_emails: ['rita@example.com'], timeout: 10, download_password: '********', tag_name: 'rushes', delete_after: 3,
      blacklist: [], delete_files_after_upload: false, package_name_suffix: '', message: '', priority: 0, upload_loose_files: false, growing_files: false, unlimited_storage: false,
      last_run_at: null, last_error: null, created_at: expect.any(String), updated_at: expect.any(String),
    });
    expect((await events.next((m) => m.json?.automation_id === id)).json).toEqual(created.body);

    expect((await call(agent.url, 'GET', `/automations/${id}`)).body).toEqual(created.body);
    expect((await call(agent.url, 'GET', '/automations')).body).toEqual([created.body]);
    expect((await call(agent.url, 'GET', `/automations/${id}/packages`)).body).toEqual([]);

    // The mask sent back keeps the password; other fields change.
    const put = await call(agent.url, 'PUT', `/automations/team_upload/${id}`, { body: { ...created.body, name: 'Outbox 2', timeout: 0.5, blacklist: ['*.part'] } });
    expect(put.status, JSON.stringify(put.body)).toBe(200);
    expect(put.body).toMatchObject({ name: 'Outbox 2', timeout: 0.5, blacklist: ['*.part'], download_password: '********', enabled: false });
    const stored = agent.agent.ctx.db.prepare('SELECT fields FROM automations WHERE id = ?').get(id) as { fields: string };
    expect(JSON.parse(stored.fields)).toMatchObject({ download_password: 'hunter2' });
    expect(JSON.parse(stored.fields)).not.toHaveProperty('colour');
    expect((await events.next((m) => m.json?.automation_id === id)).json.name).toBe('Outbox 2');

    const on = await call(agent.url, 'POST', `/automations/${id}/enable`);
    expect(on.status).toBe(200);
    expect(on.body.enabled).toBe(true);
    expect((await events.next((m) => m.json?.automation_id === id)).json.enabled).toBe(true);
    const off = await call(agent.url, 'POST', `/automations/${id}/disable`);
    expect(off.body.enabled).toBe(false);

    const del = await call(agent.url, 'DELETE', `/automations/${id}`);
    expect(del.status).toBe(200);
    expect(del.body).toMatchObject({ automation_id: id, name: 'Outbox 2' });
    expect((await events.next((m) => m.json?.deleted === true)).json).toEqual({ automation_id: id, deleted: true });
    expect((await call(agent.url, 'GET', `/automations/${id}`)).status).toBe(404);
    events.close();
  });

  test('unknown ids answer 404 {code, message}, and so does a PUT of another kind', async () => {
    const d = await call(agent.url, 'POST', '/automations/portal_download', { body: { name: 'In', portal_subdomain: 'desk', dst_folder: path.join(tmp, 'in', 'desk'), enabled: false } });
    expect(d.status, JSON.stringify(d.body)).toBe(201);
    expect(d.body).toMatchObject({ create_package_folder: true, effective_time: expect.any(String), portal_subdomain: 'desk' });
    const unknown = 'aut_ffffffffffffffffffffffff';
    const cases: [string, string, unknown?][] = [
      ['GET', `/automations/${unknown}`],
      ['GET', `/automations/${unknown}/packages`],
      ['PUT', `/automations/portal_download/${unknown}`, { name: 'x' }],
      ['PUT', `/automations/team_upload/${d.body.automation_id}`, { name: 'x' }],
      ['DELETE', `/automations/${unknown}`],
      ['POST', `/automations/${unknown}/enable`],
      ['POST', `/automations/${unknown}/disable`],
      ['POST', '/automations/stream_upload', { name: 'x' }],
    ];
    for (const [method, p, body] of cases) {
      const r = await call(agent.url, method, p, body === undefined ? {} : { body });
      expect(r.status, `${method} ${p}: ${JSON.stringify(r.body)}`).toBe(404);
      expect(r.body).toEqual({ code: 262149, message: expect.any(String) });
    }
  });

  test('a watched folder may not overlap another one, nor a download folder: 409', async () => {
    const first = await call(agent.url, 'POST', '/automations/team_upload', { body: { ...teamUpload(), path: path.join(tmp, 'out2') } });
    expect(first.status, JSON.stringify(first.body)).toBe(201);
    for (const [p, body] of [
      ['/automations/portal_upload', { name: 'Again', path: path.join(tmp, 'out2'), subdomain: 'desk', sender_email: 'a@example.com', timeout: 1 }],
      ['/automations/team_upload', { ...teamUpload(), path: tmp }],
      ['/automations/portal_download', { name: 'Into the outbox', portal_subdomain: 'desk', dst_folder: path.join(tmp, 'out2', 'x') }],
      ['/automations/team_upload', { ...teamUpload(), path: path.join(tmp, 'in') }],
    ] as const) {
      const r = await call(agent.url, 'POST', p, { body });
      expect(r.status, `${p}: ${JSON.stringify(r.body)}`).toBe(409);
      expect(r.body).toEqual({ code: 262150, message: expect.stringContaining('overlaps') });
    }
  });
});
