// Blueprints that really expire: the service signs them for 2 seconds
// (--blueprint-ttl 2), and a proxy slows the store down so that later parts
// arrive after that. The store refuses them with 403 on its own SigV4 check (no
// injected fault); the agent asks for fresh ones, and the upload completes
// byte-identical. (Download URLs live for hours, their life not set by that flag:
// their refresh on a 403 is tested with injected answers in downloads-faults.)
import { randomBytes } from 'node:crypto';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, test, vi } from 'vitest';
import { signInAgent, startTestAgent, type TestAgent } from '../../helpers/agent.js';
import { ownerActor } from '../../helpers/auth.js';
import { call } from '../../helpers/hosted.js';
import { downloadAll, MiB } from '../../helpers/flow.js';
import { startProxiedUploads, type ProxiedUploads } from './uploads-proxy.js';

vi.setConfig({ testTimeout: 90_000, hookTimeout: 60_000 });

const TTL = { 'blueprint-ttl': '2' };
let tmp: string;

beforeAll(async () => void (tmp = await fs.mkdtemp(path.join(os.tmpdir(), 'ferry-expiry-'))));
afterAll(() => fs.rm(tmp, { recursive: true, force: true }));

describe('an upload', () => {
  let env: ProxiedUploads;
  let agent: TestAgent;
  beforeAll(async () => {
    env = await startProxiedUploads(TTL);
    agent = await startTestAgent(env.svc, { 'chunk-size': String(5 * MiB), concurrency: '1' });
    await signInAgent(agent.url, env.svc);
  });
  afterAll(async () => {
    await agent?.close();
    await env?.close();
  });

  test('whose blueprints expire before their parts go: the store refuses them, fresh ones are fetched, and every part lands once', async () => {
    const data = randomBytes(6 * 5 * MiB);
    const file = path.join(tmp, 'reel.mov');
    await fs.writeFile(file, data);
    // Each part waits 0.9 s before it reaches the store, one at a time: the third is past the 2 s.
    env.proxy.rule = () => ({ delayMs: 900 });
    const owner = await ownerActor(env.svc);
    const created = await call(agent.url, 'POST', '/uploads', { body: { team_id: owner.teamId, paths: [file] } });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    const id = created.body.upload_id as string;
    const done = await vi.waitFor(
      async () => {
        const u = (await call(agent.url, 'GET', `/uploads/${id}`)).body;
        if (u.state === 'error') throw new Error(`upload failed: ${u.error}`);
        expect(u.state).toBe('complete');
        return u;
      },
      { timeout: 80_000, interval: 100 },
    );
    expect(done.size).toBe(data.length);

    const refused = env.proxy.puts.filter((p) => p.status === 403);
    expect(refused.length).toBeGreaterThan(0);
    const stored = env.proxy.puts.filter((p) => p.status === 200).map((p) => p.partNumber).sort((a, b) => a - b);
    expect(stored).toEqual([1, 2, 3, 4, 5, 6]);
    const link = await call(agent.url, 'POST', `/uploads/${id}/link`, { body: {} });
    expect(link.status, JSON.stringify(link.body)).toBe(201);
    const got = await downloadAll(env.svc, link.body);
    expect(got.get('reel.mov')!.equals(data)).toBe(true);
  });
});
