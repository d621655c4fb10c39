// Crash and resume: the agent runs as a child process (`ferry agent`) and is
// killed with SIGKILL at several points of a 300 MiB upload in 5 MiB parts, and
// once amid a folder of small files that each go up in one PutObject.
// Restarted on the same config dir, it continues on its own, re-sends only parts
// that were not recorded, and the Package arrives byte-identical.
import { createHash, randomBytes } from 'node:crypto';
import { createWriteStream } from 'node:fs';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import Database from 'better-sqlite3';
import { sqliteOptions } from '../../../src/sqlite/binding.js';
import { afterAll, beforeAll, expect, test, vi } from 'vitest';
import { call } from '../../helpers/hosted.js';
import { signInAgent } from '../../helpers/agent.js';
import { startFerry, jsonLine, type Running } from '../../helpers/cli.js';
import { MiB, downloadAll } from '../../helpers/flow.js';
import { SINGLE_PUT } from '../../../src/api/hosted/files.js';
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

async function startAgentProcess(extraEnv: Record<string, string> = {}): Promise<string> {
  child = startFerry(
    [
      'agent',
      '--listen', '127.0.0.1:0',
      '--config-dir', configDir,
      '--hosted-url', env.svc.url,
      '--chunk-size', String(PART),
      '--concurrency', String(CONCURRENCY),
      '--log-level', 'info',
    ],
    extraEnv,
  );
  const ready = await child.waitFor((l) => jsonLine(l)?.msg === 'ferry agent ready', 'the ready line');
  return jsonLine(ready)!.url as string;
}

/** The parts the agent's SQLite holds for the upload (read after the process is gone). */
function recordedParts(uploadId: string): Set<number> {
  const db = new Database(path.join(configDir, 'agent.db'), { ...sqliteOptions(), readonly: true });
  try {
    const rows = db.prepare('SELECT part_number FROM upload_parts WHERE upload_id = ?').all(uploadId) as { part_number: number }[];
    return new Set(rows.map((r) => r.part_number));
  } finally {
    db.close();
  }
}

/** The upload's record once the agent reports it complete. */
function completed(url: string, id: string) {
  return vi.waitFor(
    async () => {
      const u = (await call(url, 'GET', `/uploads/${id}`)).body;
      expect(u.state).toBe('complete');
      return u;
    },
    { timeout: 120_000, interval: 50 },
  );
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

  const done = await completed(url, id);
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

/** Service file ids (object key paths end with them) of the files with a recorded part, and with a file id at all. */
function recordedFiles(uploadId: string): { stored: Set<string>; registered: number } {
  const db = new Database(path.join(configDir, 'agent.db'), { ...sqliteOptions(), readonly: true });
  try {
    const stored = db
      .prepare('SELECT DISTINCT f.file_id FROM upload_parts p JOIN upload_files f ON f.upload_id = p.upload_id AND f.idx = p.file_idx WHERE p.upload_id = ?')
      .all(uploadId) as { file_id: string }[];
    const registered = db.prepare('SELECT COUNT(*) AS n FROM upload_files WHERE upload_id = ? AND file_id IS NOT NULL').get(uploadId) as { n: number };
    return { stored: new Set(stored.map((r) => r.file_id)), registered: registered.n };
  } finally {
    db.close();
  }
}

test('kill -9 amid a folder of one-part files (one PutObject each), read from SQLite 16 at a time: the restart finishes it, and no stored file is put again', async () => {
  configDir = path.join(tmp, 'agent-small');
  const dir = path.join(tmp, 'small');
  await fs.mkdir(dir);
  const files = new Map<string, Buffer>();
  for (let i = 0; i < 150; i++) files.set(`f${String(i).padStart(3, '0')}.bin`, randomBytes(20_000 + ((i * 7919) % 40_000)));
  for (const [name, data] of files) await fs.writeFile(path.join(dir, name), data);
  const total = [...files.values()].reduce((n, d) => n + d.length, 0);
  const largest = Math.max(...[...files.values()].map((d) => d.length));
  const [putsAtStart, storedAtStart] = [env.proxy.puts.length, env.proxy.storedBytes];

  // Each run reads the files left 16 at a time (pendingFiles.ts): the kill and the resume fall across windows.
  const readAhead = { FERRY_AGENT_READ_AHEAD: '16' };
  let url = await startAgentProcess(readAhead);
  await signInAgent(url, env.svc);
  const teamId = (await call(url, 'GET', '/teams')).body[0].id;
  const created = await call(url, 'POST', '/uploads', { body: { team_id: teamId, paths: [dir] } });
  expect(created.status, JSON.stringify(created.body)).toBe(201);
  const id = created.body.upload_id as string;
  await vi.waitFor(
    async () => {
      const u = (await call(url, 'GET', `/uploads/${id}`)).body;
      expect(u.state).toBe('transferring');
      expect(u.progress).toBeGreaterThanOrEqual(total * 0.3);
    },
    { timeout: 60_000, interval: 10 },
  );
  await child!.stop('SIGKILL');
  const before = recordedFiles(id);
  expect(before.stored.size).toBeGreaterThan(0);
  expect(before.stored.size).toBeLessThan(files.size);
  const putsAtKill = env.proxy.puts.length;

  url = await startAgentProcess(readAhead);
  const done = await completed(url, id);
  expect(done.progress).toBe(total);
  // Every file went up as one PutObject, and a file recorded as stored was not put again.
  const puts = env.proxy.puts.slice(putsAtStart);
  expect(puts.every((p) => p.uploadId === SINGLE_PUT && p.partNumber === 1)).toBe(true);
  const keyOf = (p: { key: string }) => p.key.slice(p.key.lastIndexOf('/') + 1);
  expect(env.proxy.puts.slice(putsAtKill).filter((p) => before.stored.has(keyOf(p)))).toEqual([]);
  // Bytes the store took more than once: at most the files in flight at the kill.
  expect(env.proxy.storedBytes - storedAtStart - total).toBeLessThanOrEqual(CONCURRENCY * largest);

  const link = await call(url, 'POST', `/uploads/${id}/link`, { body: {} });
  expect(link.status, JSON.stringify(link.body)).toBe(201);
  const got = await downloadAll(env.svc, link.body);
  expect(got.size).toBe(files.size);
  for (const [name, data] of files) expect(got.get(`small/${name}`)?.equals(data), name).toBe(true);
  await child!.stop('SIGTERM');
}, 300_000);
