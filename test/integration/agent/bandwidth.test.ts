// Bandwidth limits on a real agent, service and embedded store (docs/agent-api-notes/bandwidth.md).
// The agent's clock is a fake one the test moves: a schedule that begins during an
// upload changes the rate of its bytes in flight, and a download obeys its own
// limit. Rates are read as the bytes the direction's bucket let through per fake
// second (never wall time); real bytes still move, and the files arrive whole.
// PATCH /settings refuses bad schedules in words, and config.yml keeps the list.
import { createHash } from 'node:crypto';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { parse as parseYaml } from 'yaml';
import { afterAll, beforeAll, describe, expect, test, vi } from 'vitest';
import { call, startTestService, type TestService } from '../../helpers/hosted.js';
import { startTestAgent, type TestAgent } from '../../helpers/agent.js';
import { bytesInOneSecond, drained, FakeClock } from '../../helpers/fakeClock.js';
import { startDownload, treePackage, waitFor, waitForState } from '../../helpers/downloads.js';
import type { TokenBucket } from '../../../src/agent/engine/tokenBucket.js';

vi.setConfig({ testTimeout: 120_000 });
const MiB = 1024 * 1024;
const md5 = (b: Buffer) => createHash('md5').update(b).digest('hex');
// Monday 30 November 2026, 08:59:58 local time.
const clock = new FakeClock(new Date(2026, 10, 30, 8, 59, 58).getTime());
const OFFICE = { days: ['mon', 'tue', 'wed', 'thu', 'fri'], start: '09:00', end: '18:00', upload_rate_limit: 1 * MiB, download_rate_limit: 1 * MiB };

let svc: TestService;
let agent: TestAgent;
let tmp: string;
let teamId: string;
beforeAll(async () => {
  svc = await startTestService();
  agent = await startTestAgent(svc, { 'chunk-size': String(5 * MiB) }, { clock });
  teamId = (await call(agent.url, 'POST', '/login', { body: svc.owner })).body.teams[0].id;
  tmp = await fs.mkdtemp(path.join(os.tmpdir(), 'ferry-bandwidth-'));
});
afterAll(async () => {
  await agent?.close();
  await svc?.close();
  if (tmp) await fs.rm(tmp, { recursive: true, force: true });
});

const patch = (body: unknown) => call(agent.url, 'PATCH', '/settings', { body });

/** The bytes the bucket let through over one fake second. */
const oneSecond = (bucket: TokenBucket) => bytesInOneSecond(clock, bucket);

describe('bandwidth limits', () => {
  test('PATCH refuses bad limits and schedules in words (400), and nothing changes', async () => {
    const bad: [unknown, RegExp][] = [
      [{ upload_rate_limit: -1 }, /^Upload rate limit is at least 0/],
      [{ download_rate_limit: 'fast' }, /^Download rate limit/],
      [{ rate_schedules: [{ ...OFFICE, start: '09:00', end: '09:00' }] }, /^Schedule 1 starts and ends at 09:00/],
      [{ rate_schedules: [{ ...OFFICE, days: ['monday'] }] }, /^Days is one of: sun, mon/],
      [{ rate_schedules: [{ ...OFFICE, days: [] }] }, /^Days needs at least one/],
      [{ rate_schedules: [{ ...OFFICE, start: '9am' }] }, /^Start: "9am" is not a time of day from 00:00 to 23:59/],
      [{ rate_schedules: [{ ...OFFICE, end: '24:00' }] }, /^End: "24:00" is not a time of day/],
      [{ rate_limits_paused_until: 'soon' }, /paused until/i],
    ];
    for (const [body, message] of bad) {
      const r = await patch(body);
      expect(r.status, JSON.stringify(body)).toBe(400);
      expect(r.body.message, JSON.stringify(body)).toMatch(message);
    }
    const s = (await call(agent.url, 'GET', '/settings')).body;
    expect(s).toMatchObject({ upload_rate_limit: 0, download_rate_limit: 0, rate_schedules: [], rate_limits_paused_until: null });
  });

  test('a schedule that begins during an upload slows its bytes in flight; config.yml keeps the list', async () => {
    const r = await patch({ upload_rate_limit: 4 * MiB, rate_schedules: [OFFICE] });
    expect(r.status, JSON.stringify(r.body)).toBe(200);
    expect(r.body.settings).toMatchObject({ upload_rate_limit: 4 * MiB, rate_schedules: [OFFICE], rate_limits_now: { upload_rate_limit: 4 * MiB, download_rate_limit: 0, until: new Date(2026, 10, 30, 9).toISOString() } });
    const yml = parseYaml(await fs.readFile(path.join(agent.configDir, 'config.yml'), 'utf8'));
    expect(yml).toMatchObject({ upload_rate_limit: 4 * MiB, rate_schedules: [OFFICE] });

    const data = Buffer.alloc(24 * MiB);
    for (let i = 0; i < data.length; i += 4096) data.writeUInt32LE(i, i);
    const file = path.join(tmp, 'clip.bin');
    await fs.writeFile(file, data);
    const up = await call(agent.url, 'POST', '/uploads', { body: { team_id: teamId, paths: [file] } });
    expect(up.status, JSON.stringify(up.body)).toBe(201);
    const bucket = agent.agent.ctx.rates.upload;
    await drained(bucket);

    // 08:59:58 to 08:59:59: the plain limit.
    const before = await oneSecond(bucket);
    expect(before).toBeGreaterThan(3.7 * MiB);
    expect(before).toBeLessThan(4.3 * MiB);
    // Past 09:00 the office schedule holds: the same parts go on at a quarter of the rate.
    await oneSecond(bucket);
    await oneSecond(bucket);
    expect((await call(agent.url, 'GET', '/settings')).body.rate_limits_now).toMatchObject({ upload_rate_limit: 1 * MiB, until: new Date(2026, 10, 30, 18).toISOString() });
    const after = await oneSecond(bucket);
    expect(after).toBeGreaterThan(0.8 * MiB);
    expect(after).toBeLessThan(1.2 * MiB);

    // No limit: the rest goes at once, and the file arrives whole.
    expect((await patch({ upload_rate_limit: 0, rate_schedules: [] })).status).toBe(200);
    const done = await waitFor('the upload to complete', async () => {
      const u = (await call(agent.url, 'GET', `/uploads/${up.body.upload_id}`)).body;
      expect(u.state).not.toBe('error');
      return u.state === 'complete' ? u : undefined;
    });
    expect(done.progress).toBe(data.length);
    expect(bucket.waiting).toBe(false);
  });

  test('a download obeys the download limit, and completes once it is lifted', async () => {
    const tree = await treePackage(svc, { name: 'Limited', bigMiB: 8 });
    expect((await patch({ download_rate_limit: 2 * MiB })).status).toBe(200);
    const bucket = agent.agent.ctx.rates.download;
    const id = await startDownload(agent.url, { url: tree.link.url, dst_folder: path.join(tmp, 'down') });
    await drained(bucket);
    const second = await oneSecond(bucket);
    expect(second).toBeGreaterThan(1.8 * MiB);
    expect(second).toBeLessThan(2.2 * MiB);
    // Paused for an hour: no limit holds, and GET /settings says until when.
    const until = new Date(clock.now() + 3600_000).toISOString();
    const paused = await patch({ rate_limits_paused_until: until });
    expect(paused.body.settings.rate_limits_now).toEqual({ upload_rate_limit: 0, download_rate_limit: 0, until, paused_until: until });
    await waitForState(agent.url, id);
    const big = tree.files.find((f) => f.name === 'big.bin')!;
    expect(md5(await fs.readFile(path.join(tmp, 'down', 'Limited', 'media', 'big.bin')))).toBe(md5(big.data));
  });

  test('a limit given by a flag is locked, with why, and PATCH answers 409 in words', async () => {
    const fixed = await startTestAgent(svc, { 'upload-rate-limit': '1MiB' }, { clock });
    try {
      const s = (await call(fixed.url, 'GET', '/settings')).body;
      expect(s.upload_rate_limit).toBe(MiB);
      expect(s.locked.upload_rate_limit).toBe('set by --upload-rate-limit where the agent was started');
      const r = await call(fixed.url, 'PATCH', '/settings', { body: { upload_rate_limit: 0 } });
      expect(r.status).toBe(409);
      expect(r.body.message).toBe('The upload limit cannot be changed here: it is set by --upload-rate-limit where the agent was started.');
    } finally {
      await fixed.close();
    }
  });
});
