// Crash and resume: the agent runs as a child process (`ferry agent`) and is
// killed with SIGKILL at several points of a 300 MiB upload in 5 MiB parts.
// Restarted on the same config dir, it continues on its own, re-sends only parts
// that were not recorded, and the Package arrives byte-identical.
import { createHash, randomBytes } from 'node:crypto';
import { createWriteStream } from 'node:fs';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import Database from 'better-sqlite3';
import { afterAll, beforeAll, expect, test, vi } from 'vitest';
import { call } from '../../helpers/hosted.js';
import { signInAgent } from '../../helpers/agent.js';
import { startFerry, jsonLine, type Running } from '../../helpers/cli.js';
import { MiB } from '../../helpers/flow.js';
import { startProxiedUploads, type ProxiedUploads } from './uploads-proxy.js';

const SIZE = 300 * MiB;
const PART = 5 * MiB;
const PARTS = SIZE / PART;
const CONCURRENCY = 4;

let env: ProxiedUploads;
let tmp: string;
let configDir: string;
let child: Running | undefined;

beforeAll(async () => {
  env = await startProxiedUploads();
  // Slows every part a little, so that kills land mid-way.
  env.proxy.rule = () => ({ delayMs: 40 });
  tmp = await fs.mkdtemp(path.join(os.tmpdir(), 'ferry-upload-crash-'));
  configDir = path.join(tmp, 'agent');
});

afterAll(async () => {
  await child?.stop('SIGKILL');
  await env?.close();
  if (tmp) await fs.rm(tmp, { recursive: true, force: true });
});

/** Writes SIZE random bytes, 1 MiB at a time, and returns their SHA-256. */
async function bigFile(p: string): Promise<string> {
  const hash = createHash('sha256');
  const out = createWriteStream(p);
  for (let i = 0; i < SIZE / MiB; i++) {
    const block = randomBytes(MiB);
    hash.update(block);
    if (!out.write(block)) await new Promise<void>((r) => out.once('drain', () => r()));
  }
  await new Promise<void>((resolve, reject) => out.end((err?: Error | null) => (err ? reject(err) : resolve())));
  return hash.digest('hex');
}

async function startAgentProcess(): Promise<string> {
  child = startFerry([
    'agent',
    '--listen', '127.0.0.1:0',
    '--config-dir', configDir,
    '--hosted-url', env.svc.url,
    '--chunk-size', String(PART),
    '--concurrency', String(CONCURRENCY),
    '--log-level', 'info',
  ]);
  const ready = await child.waitFor((l) => jsonLine(l)?.msg === 'ferry agent ready', 'the ready line');
  return jsonLine(ready)!.url as string;
}

/** The parts the agent's SQLite holds for the upload (read after the process is gone). */
function recordedParts(uploadId: string): Set<number> {
  const db = new Database(path.join(configDir, 'agent.db'), { readonly: true });
  try {
    const rows = db.prepare('SELECT part_number FROM upload_parts WHERE upload_id = ?').all(uploadId) as { part_number: number }[];
    return new Set(rows.map((r) => r.part_number));
  } finally {
    db.close();
  }
}

/** Downloads the Package's only file through a Link, hashing it as it streams. */
async function downloadedSha(link: { id: string; secret: string }): Promise<string> {
  const info = await call(env.svc.url, 'GET', `/v1/links/${link.id}?secret=${encodeURIComponent(link.secret)}`);
  const h = { 'x-package-token': info.body.package_token };
  const files = (await call(env.svc.url, 'GET', `/v1/packages/${info.body.package_id}/files`, { headers: h })).body.filter((f: any) => f.kind === 'file');
  expect(files).toHaveLength(1);
  const dl = await call(env.svc.url, 'GET', `/v1/packages/${info.body.package_id}/files/${files[0].id}/download`, { headers: h });
  const res = await fetch(dl.body.url);
  expect(res.status).toBe(200);
  const hash = createHash('sha256');
  for await (const chunk of res.body as unknown as AsyncIterable<Uint8Array>) hash.update(chunk);
  return hash.digest('hex');
}

test('kill -9 at several points: each restart continues on its own, re-sends only unrecorded parts, and the result is byte-identical', async () => {
  const file = path.join(tmp, 'huge.bin');
  const expected = await bigFile(file);

  let url = await startAgentProcess();
  await signInAgent(url, env.svc);
  const teamId = (await call(url, 'GET', '/teams')).body[0].id;
  const created = await call(url, 'POST', '/uploads', { body: { team_id: teamId, paths: [file], recipients: ['crash@example.com'] } });
  expect(created.status, JSON.stringify(created.body)).toBe(201);
  const id = created.body.upload_id as string;

  let kills = 0;
  for (const fraction of [0.15, 0.45, 0.75]) {
    // Kill once this many parts are recorded, as the agent reports them.
    await vi.waitFor(
      async () => {
        const u = (await call(url, 'GET', `/uploads/${id}`)).body;
        expect(u.state).toBe('transferring');
        expect(u.progress).toBeGreaterThanOrEqual(Math.floor(PARTS * fraction) * PART);
      },
      { timeout: 60_000, interval: 10 },
    );
    await child!.stop('SIGKILL');
    kills++;
    const before = recordedParts(id);
    expect(before.size).toBeGreaterThanOrEqual(Math.floor(PARTS * fraction));
    expect(before.size).toBeLessThan(PARTS);
    const putsBefore = env.proxy.puts.length;

    url = await startAgentProcess();
    // It goes on by itself, from what was recorded: no part recorded before the kill is sent again.
    const resumed = (await call(url, 'GET', `/uploads/${id}`)).body;
    expect(['transferring', 'idle', 'complete']).toContain(resumed.state);
    expect(resumed.progress).toBeGreaterThanOrEqual(before.size * PART);
    await vi.waitFor(
      async () => {
        const u = (await call(url, 'GET', `/uploads/${id}`)).body;
        expect(u.state === 'complete' || u.progress > resumed.progress, `${u.state} ${u.progress}`).toBe(true);
      },
      { timeout: 60_000, interval: 20 },
    );
    const resent = env.proxy.puts.slice(putsBefore).filter((p) => before.has(p.partNumber));
    expect(resent).toEqual([]);
  }

  const done = await vi.waitFor(
    async () => {
      const u = (await call(url, 'GET', `/uploads/${id}`)).body;
      expect(u.state).toBe('complete');
      return u;
    },
    { timeout: 120_000, interval: 50 },
  );
  expect(done.progress).toBe(SIZE);
  // Bytes the store took more than once: at most the parts in flight at each kill.
  expect(env.proxy.storedBytes).toBeGreaterThanOrEqual(SIZE);
  expect(env.proxy.storedBytes - SIZE).toBeLessThanOrEqual(kills * CONCURRENCY * PART);

  const pkg = (await call(url, 'GET', `/uploads/${id}`)).body.package_id;
  const link = await call(url, 'POST', `/uploads/${id}/link`, { body: {} });
  expect(link.status, JSON.stringify(link.body)).toBe(201);
  expect(link.body.url).toContain(link.body.id);
  expect(await downloadedSha(link.body)).toBe(expected);
  expect(pkg).toBe(created.body.package_id);
  await child!.stop('SIGTERM');
}, 300_000);
