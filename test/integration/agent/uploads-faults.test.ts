// Uploads through a faulty path to the store: a proxy between the agent and the
// store resets connections, answers 500 and 503, stalls, lies about the ETag and
// lets URLs expire (403), for parts streamed from large files and for small files
// read whole. The upload still completes byte-identical; and a part
// that keeps failing puts the upload in `error` instead of retrying forever.
import { createHash } from 'node:crypto';
import fs from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, test, vi } from 'vitest';
import { call } from '../../helpers/hosted.js';
import type { Actor } from '../../helpers/auth.js';
import { signInAgent, startTestAgent, type TestAgent } from '../../helpers/agent.js';
import { downloadAll, MiB } from '../../helpers/flow.js';
import { startProxiedAgent, type ProxiedAgent, type ProxiedUploads, type UploadFault } from './uploads-proxy.js';

const sha = (b: Buffer) => createHash('sha256').update(b).digest('hex');
const md5 = (b: Buffer) => createHash('md5').update(b).digest('hex');

let env: ProxiedUploads;
let owner: Actor;
let agent: TestAgent;
let tmp: string;
let setup: ProxiedAgent | undefined;

beforeAll(async () => {
  // Small timeouts and back-offs, so that stalls and retries take milliseconds (read when the agent starts).
  process.env.FERRY_AGENT_TIMEOUT_MS = '3000';
  process.env.FERRY_AGENT_RETRY_BASE_MS = '20';
  process.env.FERRY_AGENT_RETRY_MAX_MS = '200';
  setup = await startProxiedAgent('upload-faults', { 'chunk-size': String(5 * MiB), concurrency: '4' });
  ({ env, owner, agent, tmp } = setup);
});

afterAll(() => setup?.close());

async function settle(id: string, states: string[]) {
  return vi.waitFor(
    async () => {
      const r = await call(agent.url, 'GET', `/uploads/${id}`);
      expect(states, JSON.stringify({ ...r.body, items: undefined })).toContain(r.body.state);
      return r.body;
    },
    { timeout: 45_000, interval: 50 },
  );
}

const pseudoRandom = (size: number, seed: number) => {
  const b = Buffer.alloc(size);
  let x = seed;
  for (let i = 0; i < size; i += 4) {
    x = (Math.imul(x, 1664525) + 1013904223) >>> 0;
    b.writeUInt32LE(x, i);
  }
  return b;
};

test('resets, 500 and 503, a stall, a store that never answers, a wrong ETag and expired URLs: the upload completes byte-identical', async () => {
  const dir = path.join(tmp, 'faulty');
  await fs.mkdir(dir);
  const files = { 'a.bin': pseudoRandom(40 * MiB, 1), 'b.bin': pseudoRandom(11 * MiB, 2) };
  for (const [n, d] of Object.entries(files)) await fs.writeFile(path.join(dir, n), d);
  const faults: Record<number, Record<number, UploadFault>> = {
    1: { 1: 'reset' },
    2: { 1: { status: 500 }, 2: { status: 503 } },
    3: { 1: 'stall' },
    4: { 1: { status: 403 } },
    5: { 1: { status: 403 } },
    6: { 1: 'bad-etag' },
    7: { 1: 'mute' },
  };
  env.proxy.rule = (p) => faults[p.partNumber]?.[p.n] ?? 'pass';

  const r = await call(agent.url, 'POST', '/uploads', { body: { team_id: owner.teamId, paths: [dir] } });
  expect(r.status, JSON.stringify(r.body)).toBe(201);
  const done = await settle(r.body.upload_id, ['complete']);
  expect(done.progress).toBe(51 * MiB);

  // Every fault was met, and the part it hit went through on a later try.
  const puts = env.proxy.puts;
  for (const [part, byTry] of Object.entries(faults)) {
    for (const n of Object.keys(byTry)) {
      expect(puts.some((p) => p.partNumber === Number(part) && p.n === Number(n)), `part ${part} try ${n}`).toBe(true);
    }
    expect(puts.some((p) => p.partNumber === Number(part) && p.status === 200), `part ${part} stored`).toBe(true);
  }
  // The part whose ETag was wrong is recorded with the real one.
  const row = agent.agent.ctx.db
    .prepare(`SELECT p.etag FROM upload_parts p JOIN upload_files f ON f.upload_id = p.upload_id AND f.idx = p.file_idx WHERE p.upload_id = ? AND f.name = 'a.bin' AND p.part_number = 6`)
    .get(r.body.upload_id) as { etag: string };
  expect(row.etag).toBe(md5(files['a.bin'].subarray(25 * MiB, 30 * MiB)));

  const link = await call(agent.url, 'POST', `/uploads/${r.body.upload_id}/link`, { body: {} });
  expect(link.status).toBe(201);
  const got = await downloadAll(env.svc, link.body);
  for (const [n, d] of Object.entries(files)) expect(sha(got.get(`faulty/${n}`)!), n).toBe(sha(d));
});

test('small files of one part each (1 byte to 1 MiB) meet the same faults and complete byte-identical', async () => {
  const dir = path.join(tmp, 'small-faulty');
  await fs.mkdir(dir);
  const sizes = [16 * 1024, 1, 100_000, MiB, 4096, 70_000, 3, 50_000];
  const files = Object.fromEntries(sizes.map((n, i) => [`s${i}.bin`, pseudoRandom(n + (4 - (n % 4)) % 4, 10 + i).subarray(0, n)]));
  for (const [n, d] of Object.entries(files)) await fs.writeFile(path.join(dir, n), d);
  // Each file's one part meets its own fault on its first tries; files are told apart by key.
  const faults: Record<number, UploadFault>[] = [{ 1: 'reset' }, { 1: { status: 500 }, 2: { status: 503 } }, { 1: 'stall' }, { 1: { status: 403 } }, { 1: 'bad-etag' }, { 1: 'mute' }];
  const order = new Map<string, number>();
  env.proxy.rule = (p) => {
    if (!order.has(p.key)) order.set(p.key, order.size);
    return faults[order.get(p.key)!]?.[p.n] ?? 'pass';
  };
  const before = env.proxy.puts.length;

  const r = await call(agent.url, 'POST', '/uploads', { body: { team_id: owner.teamId, paths: [dir] } });
  expect(r.status, JSON.stringify(r.body)).toBe(201);
  const done = await settle(r.body.upload_id, ['complete']);
  expect(done.progress).toBe(sizes.reduce((a, b) => a + b, 0));

  const puts = env.proxy.puts.slice(before);
  for (const [key, i] of order) {
    for (const n of Object.keys(faults[i] ?? {})) expect(puts.some((p) => p.key === key && p.n === Number(n)), `file ${i} try ${n}`).toBe(true);
    expect(puts.some((p) => p.key === key && p.status === 200), `file ${i} stored`).toBe(true);
  }
  expect(order.size).toBe(sizes.length);
  const link = await call(agent.url, 'POST', `/uploads/${r.body.upload_id}/link`, { body: {} });
  const got = await downloadAll(env.svc, link.body);
  for (const [n, d] of Object.entries(files)) expect(sha(got.get(`small-faulty/${n}`)!), n).toBe(sha(d));
});

describe('nothing retries forever', () => {
  test('a part that keeps failing with 500 keeps the upload waiting, then in a recoverable error after --retry-for; resume completes it once the store recovers', async () => {
    const short = await startTestAgent(env.svc, { 'chunk-size': String(5 * MiB), concurrency: '4', 'retry-for': '3s' });
    try {
      await signInAgent(short.url, env.svc);
      const file = path.join(tmp, 'sick.bin');
      const data = pseudoRandom(12 * MiB, 3);
      await fs.writeFile(file, data);
      let sick = true;
      env.proxy.rule = (p) => (sick && p.partNumber === 2 ? { status: 500 } : 'pass');
      const before = env.proxy.puts.length;
      const r = await call(short.url, 'POST', '/uploads', { body: { team_id: owner.teamId, paths: [file] } });
      expect(r.status).toBe(201);
      const waiting = await vi.waitFor(async () => {
        const w = (await call(short.url, 'GET', `/uploads/${r.body.upload_id}`)).body;
        expect(w.waiting).toBeDefined();
        return w;
      }, { timeout: 20_000, interval: 20 });
      expect(waiting.state).toBe('transferring');
      expect(waiting.waiting).toMatchObject({ reason: 'store_error', last_error: 'the store answered 500' });
      const failed = await vi.waitFor(async () => {
        const f = (await call(short.url, 'GET', `/uploads/${r.body.upload_id}`)).body;
        expect(f.state).toBe('error');
        return f;
      }, { timeout: 30_000, interval: 50 });
      expect(failed.error).toMatch(/^no success for 3 s \(--retry-for\); last: the store answered 500/);
      // Bounded by time, at the back-off's pace: more than a few tries, far from a tight loop.
      const tries = env.proxy.puts.slice(before).filter((p) => p.partNumber === 2);
      expect(tries.length).toBeGreaterThan(3);
      expect(tries.length).toBeLessThan(100);

      sick = false;
      const resumed = await call(short.url, 'POST', `/uploads/${r.body.upload_id}/resume`);
      expect(resumed.status).toBe(200);
      expect(resumed.body.state).toBe('transferring');
      await vi.waitFor(async () => expect((await call(short.url, 'GET', `/uploads/${r.body.upload_id}`)).body.state).toBe('complete'), { timeout: 30_000, interval: 50 });
      const link = await call(short.url, 'POST', `/uploads/${r.body.upload_id}/link`, { body: {} });
      const got = await downloadAll(env.svc, link.body);
      expect(sha(got.get('sick.bin')!)).toBe(sha(data));
    } finally {
      await short.close();
    }
  });

  test('URLs that are refused as expired even when fresh end in error after a bounded number of refreshes', async () => {
    const file = path.join(tmp, 'expired.bin');
    await fs.writeFile(file, pseudoRandom(6 * MiB, 4));
    env.proxy.rule = (p) => (p.partNumber === 1 ? { status: 403 } : 'pass');
    const before = env.proxy.puts.length;
    const r = await call(agent.url, 'POST', '/uploads', { body: { team_id: owner.teamId, paths: [file] } });
    const failed = await settle(r.body.upload_id, ['error']);
    expect(failed.error).toMatch(/403/);
    const tries = env.proxy.puts.slice(before).filter((p) => p.partNumber === 1);
    expect(tries.length).toBeGreaterThan(1);
    // Five fresh refusals in a row end it; part 2 being stored in between starts the row again
    // (URLs that do work elsewhere), so with two parts at most 2 x (1 + 5) tries of part 1.
    expect(tries.length).toBeLessThanOrEqual(12);
  });
});
