// The streamed ZIP of a whole Package: stored entries, per-platform names,
// Finder noise left out of the Mac variant, folders and empty files kept.
import http from 'node:http';
import type { Readable } from 'node:stream';
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { call, startTestService, type TestService } from '../../helpers/hosted.js';
import { newActor, ownerActor } from '../../helpers/auth.js';
import { MiB, createPackage, fetchBytes, finalizePackage, makeLink, readZip, register, sha256, uploadFile, type Pkg } from '../../helpers/flow.js';

let svc: TestService;
let pkg: Pkg;
const files = new Map<string, Buffer>([
  ['clips/day 1/take?1.mov', randomBytes(6 * MiB)],
  ['clips/day 1/Take?1.mov', randomBytes(1000)],
  ['notes/a<b>|c.txt', Buffer.from('angle brackets')],
  ['notes/CON.txt', Buffer.from('a device name on Windows')],
  ['notes/trailing.', Buffer.from('trailing dot')],
  ['résumé/café ☕.txt', Buffer.from('unicode')],
  ['notes/.DS_Store', Buffer.from('finder noise')],
  ['__MACOSX/notes/._a.txt', Buffer.from('resource fork')],
  ['empty.txt', Buffer.alloc(0)],
]);

beforeAll(async () => {
  svc = await startTestService();
  pkg = await createPackage(svc, await ownerActor(svc), { name: 'Shoot: day/1' });
  for (const [rel, data] of files) {
    const slash = rel.lastIndexOf('/');
    await uploadFile(svc, pkg, rel.slice(slash + 1), slash < 0 ? '' : rel.slice(0, slash), data);
  }
  await register(svc, pkg, { kind: 'directory', name: 'empty dir', path: 'clips' });
  await finalizePackage(svc, pkg);
});
afterAll(async () => {
  await svc?.close();
});

async function zipOf(variant: 'zip_mac' | 'zip_windows', headers = pkg.h) {
  const d = await call(svc.url, 'GET', `/v1/packages/${pkg.id}/files/${variant}/download`, { headers });
  expect(d.status, JSON.stringify(d.body)).toBe(200);
  const got = await fetchBytes(d.body.url);
  expect(got.status).toBe(200);
  return { ...got, entries: await readZip(got.data) };
}

describe('Package ZIPs', () => {
  it('Mac variant keeps UTF-8 names as uploaded and leaves out .DS_Store and __MACOSX', async () => {
    const { entries, headers } = await zipOf('zip_mac');
    const expected = [...files.keys()].filter((k) => !k.endsWith('.DS_Store') && !k.startsWith('__MACOSX/'));
    expect([...entries.keys()].sort()).toEqual([...expected, 'clips/empty dir/'].sort());
    for (const name of expected) expect(sha256(entries.get(name)!), name).toBe(sha256(files.get(name)!));
    expect(headers.get('content-disposition')).toContain(`filename*=UTF-8''${encodeURIComponent('Shoot: day_1.zip')}`);
  });

  it('Windows variant replaces characters Windows refuses and keeps names distinct ignoring case', async () => {
    const { entries } = await zipOf('zip_windows');
    const rename: Record<string, string> = {
      // Entries go in byte order of their names: "Take" comes before "take".
      'clips/day 1/Take?1.mov': 'clips/day 1/Take_1.mov',
      'clips/day 1/take?1.mov': 'clips/day 1/take_1 (2).mov',
      'notes/a<b>|c.txt': 'notes/a_b__c.txt',
      'notes/CON.txt': 'notes/_CON.txt',
      'notes/trailing.': 'notes/trailing_',
    };
    const expectedNames = [...files.keys()].map((k) => rename[k] ?? k);
    expect([...entries.keys()].sort()).toEqual([...expectedNames, 'clips/empty dir/'].sort());
    for (const [orig, data] of files) expect(sha256(entries.get(rename[orig] ?? orig)!), orig).toBe(sha256(data));
    for (const name of entries.keys()) expect(name).not.toMatch(/[<>:"|?*\\]/);
  });

  it('works through a Link token, and its URL works without any header', async () => {
    const link = await makeLink(svc, pkg);
    const info = await call(svc.url, 'GET', `/v1/links/${link.id}?secret=${link.secret}`);
    const { entries } = await zipOf('zip_mac', { 'x-package-token': info.body.package_token });
    expect(entries.size).toBeGreaterThan(0);
  });

  it('refuses a tampered or foreign URL token, and a plain package token in its place', async () => {
    const d = await call(svc.url, 'GET', `/v1/packages/${pkg.id}/files/zip_mac/download`, { headers: pkg.h });
    const url = new URL(d.body.url);
    const token = url.searchParams.get('token')!;
    url.searchParams.set('token', token.slice(0, -2) + (token.endsWith('A') ? 'BB' : 'AA'));
    expect((await fetch(url)).status).toBe(401);

    const windows = new URL(d.body.url.replace('/zip/zip_mac', '/zip/zip_windows'));
    expect((await fetch(windows)).status).toBe(401);

    const other = await createPackage(svc, await newActor(svc, 'zip-other@example.com'));
    const foreign = new URL(d.body.url.replace(pkg.id, other.id));
    expect((await fetch(foreign)).status).toBe(401);

    const plain = new URL(d.body.url);
    plain.searchParams.set('token', pkg.token);
    expect((await fetch(plain)).status).toBe(401);
  });

  it('closes its storage reads when the client goes away mid-download', async () => {
    const big = await createPackage(svc, await ownerActor(svc));
    await uploadFile(svc, big, 'big.bin', '', randomBytes(12 * MiB));
    await finalizePackage(svc, big);
    const d = await call(svc.url, 'GET', `/v1/packages/${big.id}/files/zip_mac/download`, { headers: big.h });
    const storage = svc.ctx.storage;
    const read = storage.read;
    const opened: Readable[] = [];
    storage.read = async (key) => {
      const s = await read.call(storage, key);
      opened.push(s);
      return s;
    };
    try {
      await new Promise<void>((resolve, reject) => {
        const req = http.get(d.body.url, { agent: false }, (res) => res.once('data', () => (req.destroy(), resolve())));
        req.on('error', (e: NodeJS.ErrnoException) => (e.code === 'ECONNRESET' || /aborted/.test(e.message) ? resolve() : reject(e)));
      });
      await vi.waitFor(() => {
        expect(opened.length).toBeGreaterThan(0);
        expect(opened.every((s) => s.destroyed)).toBe(true);
      });
    } finally {
      storage.read = read;
    }
  });

  it('stops working when the Package expires', async () => {
    const d = await call(svc.url, 'GET', `/v1/packages/${pkg.id}/files/zip_windows/download`, { headers: pkg.h });
    await svc.ctx.db.updateTable('packages').set({ state: 'expired' }).where('id', '=', pkg.id).execute();
    try {
      expect((await fetch(d.body.url)).status).toBe(410);
    } finally {
      await svc.ctx.db.updateTable('packages').set({ state: 'finalized' }).where('id', '=', pkg.id).execute();
    }
  });
});
