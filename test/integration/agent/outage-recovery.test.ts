// What ends a transfer and what brings it back without a person: an error no
// retry fixes (the Package deleted on the service) ends it at once, with words
// that say what to do; transfers an older agent left in a recoverable error
// resume when the agent starts; after a sleep of the machine, a transfer waiting
// out a long back-off goes on at once.
import { createHash, randomBytes } from 'node:crypto';
import fs from 'node:fs/promises';
import path from 'node:path';
import Database from 'better-sqlite3';
import { sqliteOptions } from '../../../src/sqlite/binding.js';
import { afterAll, beforeAll, expect, test, vi } from 'vitest';
import { call } from '../../helpers/hosted.js';
import { signInAgent, startTestAgent, type TestAgent } from '../../helpers/agent.js';
import { downloadAll, MiB } from '../../helpers/flow.js';
import { startProxiedAgent, type ProxiedAgent } from './uploads-proxy.js';

vi.setConfig({ testTimeout: 120_000, hookTimeout: 120_000 });

let setup: ProxiedAgent;
const sha = (b: Buffer) => createHash('sha256').update(b).digest('hex');

beforeAll(async () => {
  setup = await startProxiedAgent('outage-recovery', { 'chunk-size': String(5 * MiB), concurrency: '2' });
});

afterAll(() => setup?.close());

async function until(agentUrl: string, kind: 'uploads' | 'downloads', id: string, ok: (r: any) => boolean, what: string): Promise<any> {
  return vi.waitFor(async () => {
    const r = (await call(agentUrl, 'GET', `/${kind}/${id}`)).body;
    if (!ok(r)) throw new Error(`not yet: ${what}: ${JSON.stringify({ ...r, items: undefined })}`);
    return r;
  }, { timeout: 60_000, interval: 50 });
}

async function writeData(name: string, size: number): Promise<{ file: string; data: Buffer }> {
  const data = randomBytes(size);
  const file = path.join(setup.tmp, name);
  await fs.writeFile(file, data);
  return { file, data };
}

test('the Package deleted on the service mid-upload: error at once, saying what to do, and no retrying for 24 hours', async () => {
  const { env, agent, owner } = setup;
  const { file } = await writeData('deleted.bin', 30 * MiB);
  env.proxy.rule = () => ({ delayMs: 200 });
  try {
    const r = await call(agent.url, 'POST', '/uploads', { body: { team_id: owner.teamId, paths: [file] } });
    expect(r.status).toBe(201);
    await until(agent.url, 'uploads', r.body.upload_id, (u) => u.progress > 0, 'under way');
    const del = await call(env.svc.url, 'DELETE', `/v1/packages/${r.body.package_id}`, { headers: owner.h });
    expect(del.status).toBe(204);
    // The default --retry-for is 24 h: an error within the minute means it was not retried.
    const failed = await until(agent.url, 'uploads', r.body.upload_id, (u) => u.state === 'error', 'the upload in error');
    expect(failed.error).toMatch(/^The Package can no longer take files on the service \(it was deleted, .*\): start a new upload\. the service answered (404|409|410)/);
    expect(failed.waiting).toBeUndefined();
    const row = agent.agent.ctx.db.prepare('SELECT error_recoverable FROM uploads WHERE id = ?').get(r.body.upload_id) as { error_recoverable: number };
    expect(row.error_recoverable).toBe(0);
    // It does not come back by itself either, and resume says why.
    const resumed = await call(agent.url, 'POST', `/uploads/${r.body.upload_id}/resume`);
    expect(resumed.status).toBe(409);
    expect(resumed.body.message).toMatch(/start a new upload/);
  } finally {
    env.proxy.rule = () => 'pass';
  }
});

test('an upload and a download that an agent of before this change left in a recoverable error resume when the agent starts', async () => {
  const { env, owner } = setup;
  // A Package to download, and a file to upload.
  const shared = await writeData('old-shared.bin', 12 * MiB);
  let a: TestAgent | undefined = await startTestAgent(env.svc, { 'chunk-size': String(5 * MiB) });
  try {
    await signInAgent(a.url, env.svc);
    const s = await call(a.url, 'POST', '/uploads', { body: { team_id: owner.teamId, paths: [shared.file] } });
    await until(a.url, 'uploads', s.body.upload_id, (u) => u.state === 'complete', 'the shared Package');
    const link = await call(a.url, 'POST', `/uploads/${s.body.upload_id}/link`, { body: {} });

    // Caught mid-way, then stopped: the agent keeps them transferring.
    const up = await writeData('old-upload.bin', 20 * MiB);
    env.proxy.rule = () => ({ delayMs: 300 });
    env.proxy.getDelayMs = 300;
    const u = await call(a.url, 'POST', '/uploads', { body: { team_id: owner.teamId, paths: [up.file] } });
    const d = await call(a.url, 'POST', '/downloads', { body: { url: link.body.url, dst_folder: path.join(setup.tmp, 'old-download'), chunk_size: MiB } });
    await until(a.url, 'uploads', u.body.upload_id, (x) => x.progress > 0, 'upload under way');
    await until(a.url, 'downloads', d.body.download_id, (x) => x.progress > 0, 'download under way');
    const configDir = a.configDir;
    await a.agent.close();
    env.proxy.rule = () => 'pass';
    env.proxy.getDelayMs = 0;

    // What the older agent left: both in error after its six tries, and the downloads table as it was then.
    const db = new Database(path.join(configDir, 'agent.db'), sqliteOptions());
    db.prepare(`UPDATE uploads SET state = 'error', error = 'part 2 of ${up.file} failed 6 times; last: connect ECONNREFUSED', error_recoverable = 1 WHERE id = ?`).run(u.body.upload_id);
    db.prepare(`UPDATE downloads SET state = 'error', error = 'old-shared.bin: gave up after 6 tries: connect ECONNREFUSED' WHERE id = ?`).run(d.body.download_id);
    db.exec('ALTER TABLE downloads DROP COLUMN error_recoverable; DELETE FROM schema_migrations WHERE version = 4;');
    db.close();

    a = await startTestAgent(env.svc, { 'config-dir': configDir, 'chunk-size': String(5 * MiB) });
    const doneUp = await until(a.url, 'uploads', u.body.upload_id, (x) => x.state !== 'error' && x.state !== 'transferring' && x.state !== 'idle', 'the upload resumed to its end');
    expect(doneUp.state).toBe('complete');
    const doneDown = await until(a.url, 'downloads', d.body.download_id, (x) => x.state === 'complete', 'the download resumed to its end');
    expect(sha(await fs.readFile(doneDown.items[0].local_path))).toBe(sha(shared.data));
    const l2 = await call(a.url, 'POST', `/uploads/${u.body.upload_id}/link`, { body: {} });
    expect(sha((await downloadAll(env.svc, l2.body)).get('old-upload.bin')!)).toBe(sha(up.data));
  } finally {
    env.proxy.rule = () => 'pass';
    env.proxy.getDelayMs = 0;
    await a?.close();
  }
});

test('after a sleep of the machine, an upload waiting out a long back-off goes on at once', async () => {
  const { env, owner } = setup;
  const saved = { base: process.env.FERRY_AGENT_RETRY_BASE_MS, max: process.env.FERRY_AGENT_RETRY_MAX_MS };
  // Ten minutes and more between tries: only the wake-up can make it finish within the test's time.
  process.env.FERRY_AGENT_RETRY_BASE_MS = process.env.FERRY_AGENT_RETRY_MAX_MS = '1200000';
  const a = await startTestAgent(env.svc, { 'chunk-size': String(5 * MiB) });
  try {
    await signInAgent(a.url, env.svc);
    const { file, data } = await writeData('sleepy.bin', 8 * MiB);
    env.proxy.rule = (p) => (p.n === 1 ? { status: 500 } : 'pass'); // both parts: no success to end the wait
    const r = await call(a.url, 'POST', '/uploads', { body: { team_id: owner.teamId, paths: [file] } });
    const waiting = await until(a.url, 'uploads', r.body.upload_id, (u) => u.waiting !== undefined, 'the upload waiting');
    expect(waiting.waiting.reason).toBe('store_error');
    expect(Date.parse(waiting.waiting.next_attempt_at) - Date.now()).toBeGreaterThan(5 * 60_000);

    // What the sleep watch does when a tick finds an hour gone by.
    a.agent.ctx.sleep.woke(3600_000);
    const done = await until(a.url, 'uploads', r.body.upload_id, (u) => u.state === 'complete', 'the upload complete');
    expect(done.waiting).toBeUndefined();
    const link = await call(a.url, 'POST', `/uploads/${r.body.upload_id}/link`, { body: {} });
    expect(sha((await downloadAll(env.svc, link.body)).get('sleepy.bin')!)).toBe(sha(data));
  } finally {
    env.proxy.rule = () => 'pass';
    for (const [k, v] of [['FERRY_AGENT_RETRY_BASE_MS', saved.base], ['FERRY_AGENT_RETRY_MAX_MS', saved.max]] as const) {
      if (v === undefined) delete process.env[k];
      else process.env[k] = v;
    }
    await a.close();
  }
});
