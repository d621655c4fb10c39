// Downloads through a faulty path to the store: connection resets, 500/503,
// bodies cut or stalled halfway, 403 to the first GET of some ranges (an
// expired URL). The download still completes byte for byte; failures that do
// not heal end in `error`, and resume takes it from there.
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { startTestAgent, type TestAgent } from '../../helpers/agent.js';
import { startProxiedService, type Fault, type ProxiedService } from '../../helpers/s3Proxy.js';
import { MiB } from '../../helpers/flow.js';
import { agentCall, expectedTree, startDownload, treeOf, treePackage, waitForRecord, waitForState, type TreePackage } from '../../helpers/downloads.js';

let env: ProxiedService;
let a: TestAgent;
let tree: TreePackage;
let tmp: string;
const tuning = { FERRY_AGENT_TIMEOUT_MS: '1500', FERRY_AGENT_RETRY_BASE_MS: '20', FERRY_AGENT_RETRY_MAX_MS: '200', FERRY_AGENT_RETRY_ATTEMPTS: '4' };
const saved: Record<string, string | undefined> = {};

beforeAll(async () => {
  // Short stall timeout and back-off, so that the faults cost seconds, not minutes.
  for (const [k, v] of Object.entries(tuning)) {
    saved[k] = process.env[k];
    process.env[k] = v;
  }
  env = await startProxiedService();
  a = await startTestAgent(env.svc);
  tree = await treePackage(env.svc, { name: 'Faulty', bigMiB: 20 });
  tmp = await fs.mkdtemp(path.join(os.tmpdir(), 'ferry-dl-faults-'));
}, 120_000);

afterAll(async () => {
  await a?.close();
  await env?.close();
  if (tmp) await fs.rm(tmp, { recursive: true, force: true });
  for (const [k, v] of Object.entries(saved)) {
    if (v === undefined) delete process.env[k];
    else process.env[k] = v;
  }
});

const big = () => tree.files.find((f) => f.name === 'big.bin')!;
const isBig = (p: string) => p.endsWith(`/${big().id}`);
const readme = () => tree.files.find((f) => f.name === 'readme.md')!;

describe('faults between the agent and the store', () => {
  test('resets, 5xx, cut and stalled bodies and expired URLs are retried until the tree is byte-identical', async () => {
    // Per range of big.bin (1 MiB ranges): the faults of its 1st, 2nd... request; later requests pass.
    const plan = new Map<number, Fault[]>([
      [1, [{ status: 403 }]],
      [2, [{ status: 500 }]],
      [3, [{ status: 503, code: 'SlowDown' }, { status: 503, code: 'SlowDown' }]],
      [4, ['reset']],
      [5, ['cut-body']],
      [6, ['stall-body']],
      [7, [{ status: 403 }, { status: 403 }]],
      [9, ['reset', 'cut-body', { status: 500 }]],
    ]);
    env.proxy.rule = (r) => {
      if (r.method !== 'GET' || !r.range) return 'pass';
      if (r.path.endsWith(`/${readme().id}`)) return r.n === 1 ? 'reset' : 'pass';
      if (!isBig(r.path)) return 'pass';
      return plan.get(r.range[0] / MiB)?.[r.n - 1] ?? 'pass';
    };
    try {
      const to = path.join(tmp, 'faulty');
      const id = await startDownload(a.url, { url: tree.link.url, dst_folder: to, chunk_size: MiB });
      const record = await waitForState(a.url, id);
      expect(await treeOf(to)).toEqual(expectedTree(tree.files, [...tree.dirs.keys()], 'Faulty'));
      expect(record.error).toBeUndefined();

      // Every planned fault happened, and each faulted range was asked for once more than it failed.
      const asked = (idx: number) => env.proxy.seen.filter((s) => s.method === 'GET' && isBig(s.path) && s.range?.[0] === idx * MiB);
      for (const [idx, faults] of plan) {
        const seen = asked(idx);
        expect(seen.map((s) => s.fault), `range ${idx}`).toEqual([...faults, 'pass']);
      }
      expect(asked(0).map((s) => s.fault)).toEqual(['pass']);
    } finally {
      env.proxy.rule = () => 'pass';
    }
  });

  test('a store that keeps failing keeps the download waiting, then ends it in a recoverable error after --retry-for; resume then completes it', async () => {
    const short = await startTestAgent(env.svc, { 'retry-for': '3s' });
    env.proxy.rule = (r) => (r.method === 'GET' && isBig(r.path) && r.range?.[0] === 2 * MiB ? { status: 503 } : 'pass');
    const from = env.proxy.seen.length;
    try {
      const to = path.join(tmp, 'gives-up');
      const id = await startDownload(short.url, { url: tree.link.url, dst_folder: to, chunk_size: MiB, file_ids: [big().id] });
      const waiting = await waitForRecord(short.url, id, 'waiting', (r) => r.state === 'transferring' && r.waiting !== undefined);
      expect(waiting.waiting).toMatchObject({ reason: expect.stringMatching(/^store_/), last_error: expect.stringMatching(/503/) });
      const failed = await waitForState(short.url, id, 'error');
      expect(failed.error).toMatch(/^no success for 3 s \(--retry-for\); last: .*503/);
      expect(failed.waiting).toBeUndefined();
      // Retried at the back-off's pace, not in a tight loop.
      const tries = env.proxy.seen.slice(from).filter((s) => s.method === 'GET' && isBig(s.path) && s.range?.[0] === 2 * MiB && typeof s.fault === 'object');
      expect(tries.length).toBeGreaterThan(1);
      expect(tries.length).toBeLessThan(100);

      env.proxy.rule = () => 'pass';
      const resumed = await agentCall(short.url, 'POST', `/downloads/${id}/resume`);
      expect(resumed.status).toBe(200);
      expect(resumed.body.state).toBe('transferring');
      expect(resumed.body.error).toBeUndefined();
      await waitForState(short.url, id);
      expect(await treeOf(to)).toEqual(expectedTree([big()], [], 'Faulty'));
    } finally {
      env.proxy.rule = () => 'pass';
      await short.close();
    }
  });

  test('a URL that stays refused (403 after every fresh URL) stops the download in error instead of looping', async () => {
    env.proxy.rule = (r) => (r.method === 'GET' && isBig(r.path) ? { status: 403 } : 'pass');
    const from = env.proxy.seen.length;
    try {
      const to = path.join(tmp, 'refused');
      const id = await startDownload(a.url, { url: tree.link.url, dst_folder: to, chunk_size: 8 * MiB, file_ids: [big().id] });
      const failed = await waitForState(a.url, id, 'error');
      expect(failed.error).toMatch(/403.*refused even when fresh/);
      const refused = env.proxy.seen.slice(from).filter((s) => s.method === 'GET' && isBig(s.path) && typeof s.fault === 'object');
      // At most (1 + fresh URLs) per range in flight: 3 ranges of 8 MiB, 6 tries each.
      expect(refused.length).toBeLessThanOrEqual(3 * 6);

      env.proxy.rule = () => 'pass';
      expect((await agentCall(a.url, 'POST', '/downloads/resume')).body.map((r: any) => r.download_id)).toEqual([id]);
      await waitForState(a.url, id);
      expect(await treeOf(to)).toEqual(expectedTree([big()], [], 'Faulty'));
    } finally {
      env.proxy.rule = () => 'pass';
    }
  });
});
