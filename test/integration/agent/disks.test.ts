// Disk settings end to end: the routes and their bad input, settings that stay
// with a disk across a restart, and prioritize_writes holding an upload's reads
// back while a download writes to the same disk, counted by the disk's gate
// (GET /settings/disk_status), not timed.
import { randomBytes } from 'node:crypto';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, test, vi } from 'vitest';
import { call, startTestService, type TestService } from '../../helpers/hosted.js';
import { ownerActor, type Actor } from '../../helpers/auth.js';
import { signInAgent, startTestAgent, type TestAgent } from '../../helpers/agent.js';
import { MiB } from '../../helpers/flow.js';
import { startDownload, treePackage, waitForState, type TreePackage } from '../../helpers/downloads.js';

let svc: TestService;
let owner: Actor;
let a: TestAgent;
let tmp: string;
let tree: TreePackage;
let diskId: string;

beforeAll(async () => {
  svc = await startTestService();
  owner = await ownerActor(svc);
  tmp = await fs.mkdtemp(path.join(os.tmpdir(), 'ferry-disks-'));
  a = await startTestAgent(svc, { 'chunk-size': String(5 * MiB), concurrency: '8' });
  await signInAgent(a.url, svc);
  tree = await treePackage(svc, { name: 'Disk package', bigMiB: 48 });
}, 120_000);

afterAll(async () => {
  await a?.close();
  await svc?.close();
  if (tmp) await fs.rm(tmp, { recursive: true, force: true });
});

/** The disk holding `p`, as GET /settings/disks lists it: the one whose mount point is the longest that holds it. */
async function diskOf(p: string) {
  const r = await call(a.url, 'GET', '/settings/disks');
  expect(r.status, JSON.stringify(r.body)).toBe(200);
  const holding = r.body.disks.filter((d: any) => p === d.mount_point || p.startsWith(d.mount_point.endsWith('/') ? d.mount_point : `${d.mount_point}/`));
  return holding.sort((x: any, y: any) => y.mount_point.length - x.mount_point.length)[0];
}

async function uploadDone(id: string) {
  return vi.waitFor(
    async () => {
      const r = await call(a.url, 'GET', `/uploads/${id}?files=false`);
      if (r.body.state === 'error') throw new Error(`upload failed: ${r.body.error}`);
      expect(r.body.state).toBe('complete');
    },
    { timeout: 60_000, interval: 50 },
  );
}

describe('disk settings', () => {
  test('lists the disk of the config dir with its mount point and the spec resource', async () => {
    const d = await diskOf(a.configDir);
    expect(d).toMatchObject({ disk_id: expect.stringMatching(/^[0-9a-f]{16}$/), priority: 'mixed_read_writes', max_concurrent_readers: 0, max_concurrent_writers: 0, present: true });
    expect(d.used_for).toContain('configuration');
    diskId = d.disk_id;
    const one = await call(a.url, 'GET', `/settings/disks/${diskId}`);
    expect(one.status).toBe(200);
    expect(one.body).toEqual(d);
  });

  test('answers 404 for an unknown disk and 400, in words, for bad values', async () => {
    const missing = await call(a.url, 'GET', '/settings/disks/nosuchdisk');
    expect(missing.status).toBe(404);
    expect(missing.body.message).toMatch(/disk nosuchdisk not found/);
    expect((await call(a.url, 'PUT', '/settings/disks/nosuchdisk', { body: { priority: 'prioritize_reads' } })).status).toBe(404);
    for (const [body, field] of [
      [{ priority: 'fastest' }, 'priority'],
      [{ max_concurrent_readers: -1 }, 'max_concurrent_readers'],
      [{ max_concurrent_writers: 2.5 }, 'max_concurrent_writers'],
      [{ color: 'red' }, undefined],
      [{}, undefined],
      [{ disk_id: 'another', priority: 'prioritize_reads' }, 'disk_id'],
    ] as const) {
      const r = await call(a.url, 'PUT', `/settings/disks/${diskId}`, { body });
      expect(r.status, JSON.stringify(body)).toBe(400);
      expect(r.body.message.length).toBeGreaterThan(10);
      if (field) expect(r.body.field, JSON.stringify(r.body)).toBe(field);
    }
    expect((await call(a.url, 'GET', '/settings/disks/bad%20id')).status).toBe(400);
  });

  test('a change applies at once, and the disk keeps it after the agent starts again', async () => {
    const put = await call(a.url, 'PUT', `/settings/disks/${diskId}`, { body: { priority: 'prioritize_reads', max_concurrent_readers: 3 } });
    expect(put.status, JSON.stringify(put.body)).toBe(200);
    expect(put.body).toMatchObject({ disk_id: diskId, priority: 'prioritize_reads', max_concurrent_readers: 3, max_concurrent_writers: 0 });
    // Fields not given keep their values.
    const again = await call(a.url, 'PUT', `/settings/disks/${diskId}`, { body: { max_concurrent_writers: 2 } });
    expect(again.body).toMatchObject({ priority: 'prioritize_reads', max_concurrent_readers: 3, max_concurrent_writers: 2 });

    await a.agent.close();
    const b = await startTestAgent(svc, { 'config-dir': a.configDir, 'chunk-size': String(5 * MiB), concurrency: '8' });
    a = b;
    const kept = await call(a.url, 'GET', `/settings/disks/${diskId}`);
    expect(kept.status).toBe(200);
    expect(kept.body).toMatchObject({ disk_id: diskId, priority: 'prioritize_reads', max_concurrent_readers: 3, max_concurrent_writers: 2, present: true });
    const reset = await call(a.url, 'PUT', `/settings/disks/${diskId}`, { body: { priority: 'mixed_read_writes', max_concurrent_readers: 0, max_concurrent_writers: 0 } });
    expect(reset.status).toBe(200);
  });

  test("prioritize_writes: no read of an upload starts while the download's writes run or wait on the same disk", async () => {
    const d = await diskOf(tmp);
    const put = await call(a.url, 'PUT', `/settings/disks/${d.disk_id}`, { body: { priority: 'prioritize_writes' } });
    expect(put.status, JSON.stringify(put.body)).toBe(200);
    await signInAgent(a.url, svc);
    // The overlap is made, not hoped for: the upload is 2,000 small files, each read
    // whole in one slot as its turn comes, so its reads go on for seconds; the download
    // starts once the upload has begun reading, and its writes (512 KiB batches of a
    // 48 MiB file) run within that span. A round that still misses runs again.
    const src = path.join(tmp, 'up');
    await fs.mkdir(src, { recursive: true });
    for (let i = 0; i < 2000; i++) await fs.writeFile(path.join(src, `f${i}.bin`), randomBytes(8192));
    const status = async () => {
      const r = await call(a.url, 'GET', '/settings/disk_status');
      expect(r.status).toBe(200);
      return r.body.disks.find((x: any) => x.disk_id === d.disk_id);
    };
    for (let round = 0; round < 3; round++) {
      const readsBefore = (await status()).reads;
      const up = await call(a.url, 'POST', '/uploads?files=false', { body: { team_id: owner.teamId, paths: [src] } });
      expect(up.status, JSON.stringify(up.body)).toBe(201);
      await vi.waitFor(async () => expect((await status()).reads).toBeGreaterThan(readsBefore), { timeout: 30_000, interval: 20 });
      const dl = await startDownload(a.url, { url: tree.link.url, dst_folder: path.join(tmp, `down-${round}`) });
      await Promise.all([uploadDone(up.body.upload_id), waitForState(a.url, dl)]);
      if ((await status()).reads_held_for_writes > 0) break;
    }
    const s = await status();
    expect(s.reads).toBeGreaterThan(0);
    expect(s.writes).toBeGreaterThan(0);
    expect(s.reads_held_for_writes, JSON.stringify(s)).toBeGreaterThan(0);
    // The count that matters: not one read started beside a running or waiting write.
    expect(s.reads_beside_writes, JSON.stringify(s)).toBe(0);
    expect(s).toMatchObject({ readers: 0, writers: 0, waiting_readers: 0, waiting_writers: 0 });
  }, 180_000);

  test("a watch folder's scan is a read of its disk", async () => {
    const d = await diskOf(tmp);
    const reads = async () => (await call(a.url, 'GET', '/settings/disk_status')).body.disks.find((x: any) => x.disk_id === d.disk_id).reads as number;
    const before = await reads();
    const watched = path.join(tmp, 'watched');
    await fs.mkdir(watched);
    const made = await call(a.url, 'POST', '/automations/team_upload', {
      body: { name: 'Outbox', path: watched, team_id: owner.teamId, recipient_emails: [], timeout: 0.05, enabled: true },
    });
    expect(made.status, JSON.stringify(made.body)).toBe(201);
    // The folder is empty: no upload reads anything, only the scan does.
    await vi.waitFor(async () => expect(await reads()).toBeGreaterThan(before), { timeout: 30_000, interval: 50 });
    const listed = await call(a.url, 'GET', `/settings/disks/${d.disk_id}`);
    expect(listed.body.used_for).toEqual(['configuration', 'watch_folders']);
    expect((await call(a.url, 'DELETE', `/automations/${made.body.automation_id}`)).status).toBe(200);
  });
});
