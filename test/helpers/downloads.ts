// Shared pieces of the agent's download tests: a Package holding a folder tree,
// the tree a download wrote (path -> SHA-256), and bounded polling of the agent.
import { createHash, randomBytes } from 'node:crypto';
import { createReadStream } from 'node:fs';
import fs from 'node:fs/promises';
import path from 'node:path';
import { expect } from 'vitest';
import { call, type TestService } from './hosted.js';
import { ownerActor } from './auth.js';
import { MiB, createPackage, finalizePackage, makeLink, register, sha256, uploadFile, type Pkg } from './flow.js';

export interface TreeFile { path: string; name: string; data: Buffer; id?: string }

export interface TreePackage {
  pkg: Pkg;
  name: string;
  files: TreeFile[];
  /** Folder entries, `path/name`, with their ids. */
  dirs: Map<string, string>;
  link: { id: string; secret: string; url: string };
}

/** An empty file, nested folders (one of them empty), small files and one `bigMiB` file. */
export async function treePackage(svc: TestService, opts: { name?: string; bigMiB?: number; password?: string } = {}): Promise<TreePackage> {
  const name = opts.name ?? 'Tree package';
  const pkg = await createPackage(svc, await ownerActor(svc), { name, ...(opts.password ? { password: opts.password } : {}) });
  const files: TreeFile[] = [
    { path: '', name: 'empty.txt', data: Buffer.alloc(0) },
    { path: '', name: 'top.txt', data: Buffer.from('at the top\n') },
    { path: 'docs', name: 'readme.md', data: Buffer.from('# read me\n'.repeat(100)) },
    { path: 'docs/deep/nested', name: 'notes.txt', data: randomBytes(70_000) },
    { path: 'media', name: 'big.bin', data: randomBytes((opts.bigMiB ?? 30) * MiB) },
  ];
  for (const f of files) f.id = await uploadFile(svc, pkg, f.name, f.path, f.data, 8 * MiB);
  const dirs = new Map<string, string>();
  for (const d of [{ path: '', name: 'empty-folder' }, { path: 'docs', name: 'deep' }]) {
    const r = await register(svc, pkg, { kind: 'directory', ...d });
    dirs.set(d.path ? `${d.path}/${d.name}` : d.name, r.file.id);
  }
  await finalizePackage(svc, pkg);
  const link = await makeLink(svc, pkg);
  return { pkg, name, files, dirs, link };
}

export const relOf = (f: { path: string; name: string }) => (f.path ? `${f.path}/${f.name}` : f.name);

export async function sha256File(p: string): Promise<string> {
  const h = createHash('sha256');
  for await (const c of createReadStream(p)) h.update(c as Buffer);
  return h.digest('hex');
}

/** Every entry under dir: files map to their SHA-256, folders to 'dir'. */
export async function treeOf(dir: string): Promise<Map<string, string>> {
  const out = new Map<string, string>();
  async function walk(rel: string): Promise<void> {
    for (const e of await fs.readdir(path.join(dir, rel), { withFileTypes: true })) {
      const r = rel ? `${rel}/${e.name}` : e.name;
      if (e.isDirectory()) {
        out.set(r, 'dir');
        await walk(r);
      } else out.set(r, await sha256File(path.join(dir, r)));
    }
  }
  await walk('');
  return out;
}

/** The tree a download of `files` should produce under a prefix, folders included. */
export function expectedTree(files: TreeFile[], extraDirs: string[] = [], prefix = ''): Map<string, string> {
  const out = new Map<string, string>();
  const addDir = (d: string) => {
    const segs = d.split('/').filter(Boolean);
    for (let i = 1; i <= segs.length; i++) out.set(segs.slice(0, i).join('/'), 'dir');
  };
  if (prefix) addDir(prefix);
  const pre = (p: string) => (prefix ? (p ? `${prefix}/${p}` : prefix) : p);
  for (const d of extraDirs) addDir(pre(d));
  for (const f of files) {
    if (f.path || prefix) addDir(pre(f.path));
    out.set(pre(relOf(f)), sha256(f.data));
  }
  return out;
}

export const agentCall = (agentUrl: string, method: string, p: string, body?: unknown) => call(agentUrl, method, p, body === undefined ? {} : { body });

/** Polls until `check` returns a value; bounded by `tries` rounds of `everyMs`. */
export async function waitFor<T>(what: string, check: () => Promise<T | undefined> | T | undefined, tries = 1200, everyMs = 50): Promise<T> {
  for (let i = 0; i < tries; i++) {
    const v = await check();
    if (v !== undefined) return v;
    await new Promise((r) => setTimeout(r, everyMs));
  }
  throw new Error(`timed out waiting for ${what}`);
}

/** Waits until the download is no longer transferring and expects `state`. */
export async function waitForState(agentUrl: string, id: string, state = 'complete'): Promise<any> {
  const record = await waitFor(`download ${id} to settle`, async () => {
    const r = await agentCall(agentUrl, 'GET', `/downloads/${id}`);
    expect(r.status, JSON.stringify(r.body)).toBe(200);
    return r.body.state === 'transferring' ? undefined : r.body;
  });
  expect(record.state, JSON.stringify(record.error ?? record)).toBe(state);
  return record;
}

/** Polls the download until `match` accepts its record (say, while it is waiting); resolves that record. */
export function waitForRecord(agentUrl: string, id: string, what: string, match: (r: any) => boolean): Promise<any> {
  return waitFor(`download ${id}: ${what}`, async () => {
    const r = await agentCall(agentUrl, 'GET', `/downloads/${id}`);
    expect(r.status, JSON.stringify(r.body)).toBe(200);
    return match(r.body) ? r.body : undefined;
  });
}

export async function startDownload(agentUrl: string, body: Record<string, unknown>): Promise<string> {
  const r = await agentCall(agentUrl, 'POST', '/downloads', body);
  expect(r.status, JSON.stringify(r.body)).toBe(201);
  expect(typeof r.body.download_id).toBe('string');
  return r.body.download_id;
}
