// A download that stopped after all of a file's ranges were recorded, but before
// the file was marked done, finds no `.ferrypart` at restart. The file at its
// final name is then taken as the published one only if it is: another file that
// took the name meanwhile is left alone, and the entry is fetched again under
// `name (1)`.
import { randomBytes } from 'node:crypto';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import Database from 'better-sqlite3';
import { sqliteOptions } from '../../../src/sqlite/binding.js';
import { afterAll, beforeAll, expect, test, vi } from 'vitest';
import { startTestAgent, type TestAgent } from '../../helpers/agent.js';
import { startTestService, type TestService } from '../../helpers/hosted.js';
import { ownerActor } from '../../helpers/auth.js';
import { createPackage, finalizeFile, finalizePackage, makeLink, MiB, putWith, register, uploadFile, type Pkg } from '../../helpers/flow.js';
import { startDownload, waitForState } from '../../helpers/downloads.js';

vi.setConfig({ testTimeout: 60_000, hookTimeout: 60_000 });

let svc: TestService;
let tmp: string;
let agent: TestAgent | undefined;

beforeAll(async () => {
  svc = await startTestService();
  tmp = await fs.mkdtemp(path.join(os.tmpdir(), 'ferry-adopt-'));
});

afterAll(async () => {
  await agent?.close();
  await svc?.close();
  if (tmp) await fs.rm(tmp, { recursive: true, force: true });
});

/** Puts the download back to "every range recorded, the file not yet done", as a crash at that moment leaves it. */
function unfinish(configDir: string, downloadId: string): void {
  const db = new Database(path.join(configDir, 'agent.db'), sqliteOptions());
  try {
    db.prepare("UPDATE download_items SET state = 'pending' WHERE download_id = ?").run(downloadId);
    db.prepare("UPDATE downloads SET state = 'transferring' WHERE id = ?").run(downloadId);
  } finally {
    db.close();
  }
}

/** One PutObject: the store's ETag is then the plain MD5 of the file. */
async function uploadSingle(pkg: Pkg, name: string, data: Buffer): Promise<void> {
  const reg = await register(svc, pkg, { name, size: data.length }, undefined, true);
  const parts = await putWith(reg.upload_blueprints!, data, data.length);
  const fin = await finalizeFile(svc, pkg, reg.file.id, reg.upload_id!, parts, data.length);
  expect(fin.status, JSON.stringify(fin.body)).toBe(204);
}

test.each([
  ['of another size (multipart ETag: only the size tells)', false, (data: Buffer) => randomBytes(data.length + 1)],
  ['of the same size, other bytes (plain ETag: the MD5 tells)', true, (data: Buffer) => randomBytes(data.length)],
])('a file %s at the final name is not taken for the download: it stays, and the entry is fetched again as "name (1)"', async (_what, single, stranger) => {
  const owner = await ownerActor(svc);
  const data = randomBytes(3 * MiB + 7);
  const pkg = await createPackage(svc, owner, { name: 'Adopt' });
  if (single) await uploadSingle(pkg, 'clip.mov', data);
  else await uploadFile(svc, pkg, 'clip.mov', '', data);
  await finalizePackage(svc, pkg);
  const link = await makeLink(svc, pkg);

  const configDir = await fs.mkdtemp(path.join(tmp, 'agent-'));
  const dst = await fs.mkdtemp(path.join(tmp, 'dst-'));
  agent = await startTestAgent(svc, { 'config-dir': configDir });
  const id = await startDownload(agent.url, { url: link.url, dst_folder: dst });
  await waitForState(agent.url, id, 'complete');
  await agent.agent.close();
  agent = undefined;

  const final = path.join(dst, 'Adopt', 'clip.mov');
  expect((await fs.readFile(final)).equals(data)).toBe(true);
  unfinish(configDir, id);
  const theirs = stranger(data);
  await fs.writeFile(final, theirs);

  agent = await startTestAgent(svc, { 'config-dir': configDir });
  const done = await waitForState(agent.url, id, 'complete');
  expect((await fs.readFile(final)).equals(theirs)).toBe(true);
  const ours = path.join(dst, 'Adopt', 'clip (1).mov');
  expect((await fs.readFile(ours)).equals(data)).toBe(true);
  expect(done.items.map((i: { local_path: string }) => i.local_path)).toEqual([ours]);
  await agent.close();
  agent = undefined;
});
