// The service's 429 (rate limit, with Retry-After) is a wait for the agent, not a
// failure: an upload that runs into its Package's limit shows `waiting` and then
// completes by itself, byte for byte.
import { createHash } from 'node:crypto';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, expect, test } from 'vitest';
import { call, startTestService, type TestService } from '../../helpers/hosted.js';
import { ownerActor, type Actor } from '../../helpers/auth.js';
import { signInAgent, startTestAgent, type TestAgent } from '../../helpers/agent.js';

const sha = (b: Buffer) => createHash('sha256').update(b).digest('hex');

let svc: TestService;
let owner: Actor;
let agent: TestAgent;
let tmp: string;

beforeAll(async () => {
  // Two requests per Package token in 3 s: an upload makes at least three (its files' registrations, their finalizes
  // and the Package's finalize, each gathered into as few requests as the agent can), so it goes past the limit
  // however it batches and however slowly a loaded machine sends, and the wait lasts long enough to be seen.
  svc = await startTestService({ 'rate-limit-package': '2', 'rate-limit-window-ms': '3000' });
  owner = await ownerActor(svc);
  tmp = await fs.mkdtemp(path.join(os.tmpdir(), 'ferry-ratelimited-'));
  agent = await startTestAgent(svc, { concurrency: '4' });
  await signInAgent(agent.url, svc);
});

afterAll(async () => {
  await agent?.close();
  await svc?.close();
  if (tmp) await fs.rm(tmp, { recursive: true, force: true });
});

test('an upload past its Package rate limit waits (service_error) and completes by itself', async () => {
  const files: Record<string, Buffer> = {};
  for (let i = 0; i < 8; i++) files[`batch/f${i}.txt`] = Buffer.from(`file ${i} `.repeat(100 + i));
  for (const [rel, data] of Object.entries(files)) {
    await fs.mkdir(path.dirname(path.join(tmp, rel)), { recursive: true });
    await fs.writeFile(path.join(tmp, rel), data);
  }
  const r = await call(agent.url, 'POST', '/uploads', { body: { team_id: owner.teamId, paths: [path.join(tmp, 'batch')], package_name: 'Throttled' } });
  expect(r.status, JSON.stringify(r.body)).toBe(201);

  const waits = new Set<string>();
  let last: any;
  const deadline = Date.now() + 60_000;
  for (;;) {
    last = (await call(agent.url, 'GET', `/uploads/${r.body.upload_id}`)).body;
    if (last.waiting) waits.add(`${last.waiting.reason}: ${last.waiting.last_error}`);
    if (last.state === 'complete' || last.state === 'error' || Date.now() > deadline) break;
    await new Promise((res) => setTimeout(res, 25));
  }
  expect(last.state, JSON.stringify(last)).toBe('complete');
  expect([...waits].some((w) => w.startsWith('service_error') && /429|too many requests/.test(w)), [...waits].join('\n')).toBe(true);

  // The service refused some of its requests, and every file arrived whole all the same.
  const counted = await svc.ctx.db.selectFrom('rate_limits').select('key').where('key', '=', `package:${r.body.package_id}`).execute();
  expect(counted).toHaveLength(1);
  // Read back with the owner's key (its own, generous limit).
  const listed = await call(svc.url, 'GET', `/v1/packages/${r.body.package_id}/files`, { headers: owner.h });
  const got = new Map<string, Buffer>();
  for (const f of listed.body.filter((x: any) => x.kind === 'file')) {
    const u = await call(svc.url, 'GET', `/v1/packages/${r.body.package_id}/files/${f.id}/download`, { headers: owner.h });
    got.set(`${f.path}/${f.name}`, Buffer.from(await (await fetch(u.body.url)).arrayBuffer()));
  }
  expect(got.size).toBe(8);
  for (const [rel, data] of Object.entries(files)) expect(sha(got.get(rel)!), rel).toBe(sha(data));
});
