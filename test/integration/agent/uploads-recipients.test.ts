// An e-mailed upload's record carries its recipients (a Ferry addition: the app
// shows and finds transfers by them); a link-type upload's record has none.
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, expect, test } from 'vitest';
import { call, startTestService, type TestService } from '../../helpers/hosted.js';
import { ownerActor, type Actor } from '../../helpers/auth.js';
import { signInAgent, startTestAgent, type TestAgent } from '../../helpers/agent.js';

let svc: TestService;
let owner: Actor;
let agent: TestAgent;
let tmp: string;

beforeAll(async () => {
  svc = await startTestService();
  owner = await ownerActor(svc);
  tmp = await fs.mkdtemp(path.join(os.tmpdir(), 'ferry-recipients-'));
  await fs.writeFile(path.join(tmp, 'cut.txt'), 'the final cut\n');
  agent = await startTestAgent(svc);
  await signInAgent(agent.url, svc);
});

afterAll(async () => {
  await agent?.close();
  await svc?.close();
  if (tmp) await fs.rm(tmp, { recursive: true, force: true });
});

test('POST /uploads with recipients answers them in the record, and GET /uploads and /uploads/{id} keep them; without, the record has none', async () => {
  const recipients = ['rita@example.com', 'sam@example.com'];
  const mailed = await call(agent.url, 'POST', '/uploads', { body: { team_id: owner.teamId, paths: [path.join(tmp, 'cut.txt')], recipients, package_name: 'Mailed' } });
  expect(mailed.status, JSON.stringify(mailed.body)).toBe(201);
  expect(mailed.body.recipients).toEqual(recipients);
  const one = await call(agent.url, 'GET', `/uploads/${mailed.body.upload_id}`);
  expect(one.body.recipients).toEqual(recipients);

  const linked = await call(agent.url, 'POST', '/uploads', { body: { team_id: owner.teamId, paths: [path.join(tmp, 'cut.txt')], package_name: 'Linked' } });
  expect(linked.status, JSON.stringify(linked.body)).toBe(201);
  expect(linked.body).not.toHaveProperty('recipients');

  const all = await call(agent.url, 'GET', '/uploads');
  const byName = Object.fromEntries(all.body.map((u: { package_name: string }) => [u.package_name, u]));
  expect(byName.Mailed.recipients).toEqual(recipients);
  expect(byName.Linked).not.toHaveProperty('recipients');
});
