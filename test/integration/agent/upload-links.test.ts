// Link management of a sent transfer through the agent, over real HTTP against a
// real service and store: the transfer's own Link (copied again, not made anew),
// new Links with their own options, the list with access counts, and revoking.
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, test, vi } from 'vitest';
import { call, startTestService, type TestService } from '../../helpers/hosted.js';
import { ownerActor, type Actor } from '../../helpers/auth.js';
import { signInAgent, startTestAgent, type TestAgent } from '../../helpers/agent.js';
import { createPackage, finalizePackage, makeLink, uploadFile } from '../../helpers/flow.js';
import { createHandlers } from '../../../src/agent/ui/handlers.js';

let svc: TestService;
let owner: Actor;
let agent: TestAgent;
let tmp: string;
let uploadId: string;

beforeAll(async () => {
  svc = await startTestService();
  owner = await ownerActor(svc);
  agent = await startTestAgent(svc);
  await signInAgent(agent.url, svc);
  tmp = await fs.mkdtemp(path.join(os.tmpdir(), 'ferry-upload-links-'));
  const file = path.join(tmp, 'cut.mov');
  await fs.writeFile(file, 'the final cut\n');
  // Sent with a download limit of 1: the Package's default for its Links.
  const r = await call(agent.url, 'POST', '/uploads', { body: { team_id: owner.teamId, paths: [file], package_name: 'Final cut', download_limit: 1 } });
  expect(r.status, JSON.stringify(r.body)).toBe(201);
  uploadId = r.body.upload_id;
  await vi.waitFor(async () => expect((await call(agent.url, 'GET', `/uploads/${uploadId}`)).body.state).toBe('complete'), { timeout: 30_000, interval: 50 });
});

afterAll(async () => {
  await agent?.close();
  await svc?.close();
  if (tmp) await fs.rm(tmp, { recursive: true, force: true });
});

const links = async () => {
  const r = await call(agent.url, 'GET', `/uploads/${uploadId}/links`);
  expect(r.status, JSON.stringify(r.body)).toBe(200);
  return r.body as any[];
};

describe("a transfer's Links", () => {
  test('"Copy link" copies the transfer\'s one Link, made once with the Send options; it counts for everyone', async () => {
    const ipc = createHandlers(agent.agent.services, agent.agent.ctx);
    const [a, b] = await Promise.all([ipc['uploads.transferLink']({ upload_id: uploadId }), ipc['uploads.transferLink']({ upload_id: uploadId })]);
    const c = await ipc['uploads.transferLink']({ upload_id: uploadId });
    expect(b.url).toBe(a.url);
    expect(c.url).toBe(a.url);
    expect(new URL(a.url).searchParams.get('secret')).toBe(a.secret);
    const listed = await links();
    expect(listed).toHaveLength(1);
    expect(listed[0]).toMatchObject({ id: a.id, url: a.url, transfer: true, access_limit: 1, access_count: 0, active: true, locked: false });

    // Opened once (its limit): still the transfer's Link, now with its count.
    expect((await call(svc.url, 'GET', `/v1/links/${a.id}?secret=${a.secret}`)).status).toBe(200);
    expect((await ipc['uploads.transferLink']({ upload_id: uploadId })).url).toBe(a.url);
    expect((await links())[0]).toMatchObject({ access_count: 1, access_limit: 1 });
  });

  test('a new Link has its own options and counter; revoking one stops it opening and drops it from the list', async () => {
    const made = await call(agent.url, 'POST', `/uploads/${uploadId}/link`, { body: { access_limit: 5, password: 'open sesame', expiry: new Date(Date.now() + 86_400_000).toISOString() } });
    expect(made.status, JSON.stringify(made.body)).toBe(201);
    let listed = await links();
    expect(listed).toHaveLength(2);
    const entry = listed.find((l) => l.id === made.body.id);
    expect(entry).toMatchObject({ url: made.body.url, transfer: false, access_limit: 5, access_count: 0, locked: true, active: true, expiry: expect.any(String) });

    const revoked = await call(agent.url, 'DELETE', `/uploads/${uploadId}/links/${made.body.id}`);
    expect(revoked.status, JSON.stringify(revoked.body)).toBe(200);
    expect(revoked.body).toMatchObject({ id: made.body.id, access_limit: 5 });
    expect((await call(svc.url, 'GET', `/v1/links/${made.body.id}?secret=${made.body.secret}`, { headers: { 'x-link-password': 'open sesame' } })).status).toBe(404);
    listed = await links();
    expect(listed.map((l) => l.id)).not.toContain(made.body.id);
    expect(listed.filter((l) => l.transfer)).toHaveLength(1);

    // Gone already, or never this transfer's: 404 in words.
    const again = await call(agent.url, 'DELETE', `/uploads/${uploadId}/links/${made.body.id}`);
    expect(again.status).toBe(404);
    expect(again.body.message).toMatch(/Link of this transfer not found/);
  });

  test("a Link made elsewhere is listed without an address; a revoked transfer's Link is replaced at the next copy", async () => {
    const pkgId = (await call(agent.url, 'GET', `/uploads/${uploadId}`)).body.package_id;
    const outside = await call(svc.url, 'POST', `/v1/packages/${pkgId}/links`, { headers: owner.h, body: { access_limit: null } });
    expect(outside.status).toBe(201);
    expect((await links()).find((l) => l.id === outside.body.id)).toMatchObject({ url: null, transfer: false, access_limit: null });

    const ipc = createHandlers(agent.agent.services, agent.agent.ctx);
    const old = await ipc['uploads.transferLink']({ upload_id: uploadId });
    expect((await call(agent.url, 'DELETE', `/uploads/${uploadId}/links/${old.id}`)).status).toBe(200);
    const fresh = await ipc['uploads.transferLink']({ upload_id: uploadId });
    expect(fresh.id).not.toBe(old.id);
    expect((await links()).find((l) => l.transfer)).toMatchObject({ id: fresh.id, access_limit: 1 });
  });

  test('an unknown upload answers 404; a Link of another Package 404 too, and stays', async () => {
    expect((await call(agent.url, 'GET', '/uploads/upl_nope/links')).status).toBe(404);
    const other = await createPackage(svc, owner, { name: 'Other' });
    await uploadFile(svc, other, 'other.txt', '', Buffer.from('other\n'));
    await finalizePackage(svc, other);
    const theirs = await makeLink(svc, other);
    const notMine = await call(agent.url, 'DELETE', `/uploads/${uploadId}/links/${theirs.id}`);
    expect(notMine.status).toBe(404);
    expect((await call(svc.url, 'GET', `/v1/links/${theirs.id}?secret=${theirs.secret}`)).status).toBe(200);
  });
});
