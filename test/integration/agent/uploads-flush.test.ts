// A stored part gives its slot to the next part as soon as its record is
// committed; its file is finished only once the WAL flush has the records on
// disk. Here the flushes are held back: with one part in flight, every part
// still goes out, and the upload completes only when the flushes are let through.
import { createHash } from 'node:crypto';
import fs from 'node:fs/promises';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, expect, test, vi } from 'vitest';
import { call } from '../../helpers/hosted.js';
import { downloadAll, MiB } from '../../helpers/flow.js';
import { startProxiedAgent, type ProxiedAgent } from './uploads-proxy.js';

const PART = 5 * MiB;
const PARTS = 3;

let t: ProxiedAgent;

beforeAll(async () => {
  t = await startProxiedAgent('upload-flush', { 'chunk-size': String(PART), concurrency: '1' });
});

afterAll(() => t?.close());

test('the next part goes out while the last one is being flushed; the file is finished only once flushed', async () => {
  const db = t.agent.agent.ctx.db;
  const flush = db.synced.bind(db);
  let letThrough!: () => void;
  const gate = new Promise<void>((resolve) => (letThrough = resolve));
  try {
    const data = Buffer.concat(Array.from({ length: PARTS * 5 }, (_, i) => Buffer.alloc(MiB, (i * 37 + 5) & 0xff)));
    const file = path.join(t.tmp, 'flushed.bin');
    await fs.writeFile(file, data);
    const r = await call(t.agent.url, 'POST', '/uploads', { body: { team_id: t.owner.teamId, paths: [file] } });
    expect(r.status, JSON.stringify(r.body)).toBe(201);
    const id = r.body.upload_id as string;
    // From here on (the upload is on disk), flushes are made as before, and only their answers wait for the gate.
    db.synced = async () => {
      await flush();
      await gate;
    };

    // One slot, no flush answered: each part still follows the one before.
    await vi.waitFor(
      () => {
        const stored = t.env.proxy.puts.filter((p) => p.status === 200).map((p) => p.partNumber);
        expect(stored.sort()).toEqual([1, 2, 3]);
      },
      { timeout: 30_000, interval: 20 },
    );
    // Recorded (progress is read from the records), but not finished: that waits for the flush.
    await sleep(300);
    const held = (await call(t.agent.url, 'GET', `/uploads/${id}`)).body;
    expect(held.progress).toBe(data.length);
    expect(held.state).toBe('transferring');
    expect(held.items[0].state).toBe('transferring');

    letThrough();
    const done = await vi.waitFor(
      async () => {
        const u = (await call(t.agent.url, 'GET', `/uploads/${id}`)).body;
        expect(u.state).toBe('complete');
        return u;
      },
      { timeout: 30_000, interval: 20 },
    );
    expect(done.progress).toBe(data.length);
    // Each part went once.
    expect(t.env.proxy.puts.map((p) => p.n)).toEqual([1, 1, 1]);
    const link = await call(t.agent.url, 'POST', `/uploads/${id}/link`, { body: {} });
    expect(link.status).toBe(201);
    const got = await downloadAll(t.env.svc, link.body);
    const sha = (b: Buffer) => createHash('sha256').update(b).digest('hex');
    expect(sha(got.get('flushed.bin')!)).toBe(sha(data));
  } finally {
    letThrough();
    db.synced = flush;
  }
});
