// A folder tree through the whole product and back, end to end over real HTTP
// (hosted service, embedded store, in-process agent): sent to recipients in 5 MiB
// parts, sent again as a link-type upload, then downloaded by the agent from its
// Link, and the downloaded tree compared with the source by SHA-256, empty file
// and empty folder included (docs/agent-api-notes: uploads register empty folders
// as directory entries, downloads turn folder entries into folders, empty ones too).
import { randomBytes } from 'node:crypto';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, test, vi } from 'vitest';
import { call, startTestService, type TestService } from '../../helpers/hosted.js';
import { ownerActor, type Actor } from '../../helpers/auth.js';
import { signInAgent, startTestAgent, type TestAgent } from '../../helpers/agent.js';
import { MiB, sha256 } from '../../helpers/flow.js';
import { bytes } from '../../../src/format/sizes.js';
import { startDownload, treeOf, waitForState } from '../../helpers/downloads.js';

vi.setConfig({ testTimeout: 60_000, hookTimeout: 60_000 });

const CHUNK = 5 * MiB; // 5242880
const RECIPIENTS = ['rita@example.com', 'sam@example.com'];

let svc: TestService;
let owner: Actor;
let agent: TestAgent;
let tmp: string;
let src: string; // holds the one folder `tree` that is uploaded
let files: Record<string, Buffer>; // relative to `src`

/** An empty file, folders two and three levels deep, an empty folder, small files, a 30 MiB random file. */
async function makeTree(root: string): Promise<Record<string, Buffer>> {
  const out: Record<string, Buffer> = {
    'tree/empty.txt': Buffer.alloc(0),
    'tree/top.txt': Buffer.from('at the top\n'),
    'tree/docs/readme.md': Buffer.from('# read me\n'.repeat(100)),
    'tree/docs/deep/nested/notes.txt': randomBytes(70_000),
    'tree/docs/deep/nested/one-byte.bin': Buffer.from([0]),
    'tree/media/big.bin': randomBytes(30 * MiB),
  };
  for (const [rel, data] of Object.entries(out)) {
    await fs.mkdir(path.dirname(path.join(root, rel)), { recursive: true });
    await fs.writeFile(path.join(root, rel), data);
  }
  await fs.mkdir(path.join(root, 'tree/empty-folder'));
  return out;
}

/** Polls GET /uploads/{id} until it is complete (bounded); an upload in error shows its error. */
async function waitComplete(id: string): Promise<any> {
  return vi.waitFor(
    async () => {
      const r = await call(agent.url, 'GET', `/uploads/${id}`);
      expect(r.status).toBe(200);
      if (r.body.state === 'error') throw new Error(`upload failed: ${r.body.error}`);
      expect(r.body.state, JSON.stringify({ ...r.body, items: undefined })).toBe('complete');
      return r.body;
    },
    { timeout: 30_000, interval: 50 },
  );
}

/** Parts the agent recorded for one item (`folder/name`) of an upload. */
const partsOf = (uploadId: string, item: string) =>
  agent.agent.ctx.db
    .prepare(`SELECT p.part_number, p.size FROM upload_parts p JOIN upload_files f ON f.upload_id = p.upload_id AND f.idx = p.file_idx
              WHERE p.upload_id = ? AND f.rel_dir = ? AND f.name = ? ORDER BY p.part_number`)
    .all(uploadId, path.posix.dirname(item), path.posix.basename(item));

/** The store's ETag of a Package file, as the owner downloads it: a multipart object's ends in -<parts>. */
async function storedEtag(packageId: string, fileName: string): Promise<string> {
  const listed = await call(svc.url, 'GET', `/v1/packages/${packageId}/files`, { headers: owner.h });
  const f = listed.body.find((e: any) => e.kind === 'file' && (e.path ? `${e.path}/${e.name}` : e.name) === fileName);
  expect(f, fileName).toBeDefined();
  const dl = await call(svc.url, 'GET', `/v1/packages/${packageId}/files/${f.id}/download`, { headers: owner.h });
  expect(dl.status, JSON.stringify(dl.body)).toBe(200);
  const res = await fetch(dl.body.url, { headers: { range: 'bytes=0-0' } });
  await res.arrayBuffer();
  expect(res.status).toBe(206);
  return res.headers.get('etag') ?? '';
}

async function outbox(): Promise<string[]> {
  const dir = path.join(svc.dataDir, 'outbox');
  const names = (await fs.readdir(dir).catch(() => [] as string[])).filter((n) => n.endsWith('.eml')).sort();
  const texts = await Promise.all(names.map((n) => fs.readFile(path.join(dir, n), 'utf8')));
  // Undo quoted-printable soft breaks and escapes, as a mail reader would.
  return texts.map((t) => t.replace(/=\r?\n/g, '').replace(/=([0-9A-F]{2})/g, (_, h: string) => String.fromCharCode(parseInt(h, 16))));
}

const expectedNames = () => ['tree/empty-folder', ...Object.keys(files)].sort();
const total = () => Object.values(files).reduce((s, b) => s + b.length, 0);

beforeAll(async () => {
  svc = await startTestService();
  owner = await ownerActor(svc);
  agent = await startTestAgent(svc);
  await signInAgent(agent.url, svc);
  tmp = await fs.mkdtemp(path.join(os.tmpdir(), 'ferry-roundtrip-'));
  src = path.join(tmp, 'src');
  files = await makeTree(src);
});

afterAll(async () => {
  await agent?.close();
  await svc?.close();
  if (tmp) await fs.rm(tmp, { recursive: true, force: true });
});

describe('a folder tree, uploaded twice and downloaded back', () => {
  let linkUpload: { upload_id: string; package_id: string };
  let link: { id: string; secret: string; url: string };

  test('as a Team upload to recipients in 5 MiB parts: complete, 30 MiB in 6 parts, every recipient mailed a Link', async () => {
    const r = await call(agent.url, 'POST', '/uploads', {
      body: { team_id: owner.teamId, paths: [path.join(src, 'tree')], recipients: RECIPIENTS, package_name: 'Roundtrip mailed', chunk_size: CHUNK },
    });
    expect(r.status, JSON.stringify(r.body)).toBe(201);
    expect(r.body).toMatchObject({ type: 'team', package_name: 'Roundtrip mailed', size: total() });
    expect(r.body.items.map((i: any) => i.path).sort()).toEqual(expectedNames());
    // An item names its place in the Package (`path`) and the file it is read from (`local_path`);
    // just made, nothing is registered yet: every item is `queued`, as a download's entry would be.
    for (const i of r.body.items) expect(i).toEqual({ path: i.path, local_path: path.join(src, i.path), size: i.size, progress: 0, state: 'queued' });

    const done = await waitComplete(r.body.upload_id);
    expect(done.progress).toBe(total());
    expect(done.items.every((i: any) => i.state === 'complete' && i.progress === i.size)).toBe(true);
    // Six 5 MiB parts, as the agent recorded them and as the store assembled the object.
    expect(partsOf(r.body.upload_id, 'tree/media/big.bin')).toEqual([1, 2, 3, 4, 5, 6].map((n) => ({ part_number: n, size: CHUNK })));
    expect(await storedEtag(r.body.package_id, 'tree/media/big.bin')).toMatch(/^"[0-9a-f]{32}-6"$/);

    const pkg = await call(svc.url, 'GET', `/v1/packages/${r.body.package_id}`, { headers: owner.h });
    expect(pkg.body).toMatchObject({ state: 'finalized', size: total(), total_files: Object.keys(files).length, recipients: RECIPIENTS });

    // Each recipient gets a mail naming the Package and carrying their own Link.
    const mails = await vi.waitFor(
      async () => {
        const all = await outbox();
        expect(all).toHaveLength(RECIPIENTS.length);
        return all;
      },
      { timeout: 10_000, interval: 50 },
    );
    const secrets = new Set<string>();
    for (const to of RECIPIENTS) {
      const mail = mails.find((t) => new RegExp(`^To: ${to.replace('.', '\\.')}$`, 'm').test(t));
      expect(mail, `mail to ${to}`).toBeDefined();
      expect(mail).toMatch(/^Subject: .*Roundtrip mailed/m);
      expect(mail).toContain(`"Roundtrip mailed" (${Object.keys(files).length} files, ${bytes(total())})`);
      const m = /\/(lnk_[A-Za-z0-9]+)\?secret=([A-Za-z0-9_-]+)/.exec(mail!);
      expect(m, mail).not.toBeNull();
      secrets.add(m![2]!);
    }
    expect(secrets.size).toBe(RECIPIENTS.length);
  });

  test('again as a link-type upload: complete without any mail, then POST /uploads/{id}/link makes a Link', async () => {
    const r = await call(agent.url, 'POST', '/uploads', {
      body: { team_id: owner.teamId, paths: [path.join(src, 'tree')], package_name: 'Roundtrip link', chunk_size: CHUNK },
    });
    expect(r.status, JSON.stringify(r.body)).toBe(201);
    expect(r.body.items.map((i: any) => i.path).sort()).toEqual(expectedNames());
    linkUpload = r.body;
    const done = await waitComplete(r.body.upload_id);
    expect(done.progress).toBe(total());
    expect(partsOf(r.body.upload_id, 'tree/media/big.bin')).toHaveLength(6);
    const pkg = await call(svc.url, 'GET', `/v1/packages/${r.body.package_id}`, { headers: owner.h });
    expect(pkg.body).toMatchObject({ state: 'finalized', size: total(), recipients: [] });
    expect(await outbox()).toHaveLength(RECIPIENTS.length); // no new mail

    const l = await call(agent.url, 'POST', `/uploads/${r.body.upload_id}/link`, { body: {} });
    expect(l.status, JSON.stringify(l.body)).toBe(201);
    expect(l.body).toMatchObject({ id: expect.any(String), secret: expect.any(String), url: expect.stringContaining(`/${l.body.id}?secret=`) });
    link = l.body;
  });

  test('downloaded by the agent from that Link: the same tree, byte for byte, empty file and empty folder included', async () => {
    expect(link, 'the Link of the previous test').toBeDefined();
    const dst = path.join(tmp, 'dst');
    const id = await startDownload(agent.url, { url: link.url, dst_folder: dst });
    const record = await waitForState(agent.url, id, 'complete');
    expect(record).toMatchObject({ package_id: linkUpload.package_id, package_name: 'Roundtrip link', size: total(), progress: total() });
    // The same file has the same `path` both ways; each side's `local_path` is its own copy.
    const sent = (await call(agent.url, 'GET', `/uploads/${linkUpload.upload_id}`)).body.items as { path: string; local_path: string; size: number }[];
    const sentFiles = sent.filter((i) => files[i.path] !== undefined);
    expect(sentFiles).toHaveLength(Object.keys(files).length);
    for (const u of sentFiles) {
      const d = record.items.find((i: { path: string }) => i.path === u.path);
      expect(d, u.path).toMatchObject({ path: u.path, size: u.size, state: 'complete', local_path: path.join(dst, 'Roundtrip link', u.path) });
      expect(u.local_path).toBe(path.join(src, u.path));
    }

    // Only the Package folder lands in dst_folder; within it, exactly the source tree.
    expect(await fs.readdir(dst)).toEqual(['Roundtrip link']);
    const got = await treeOf(path.join(dst, 'Roundtrip link'));
    const want = await treeOf(src);
    expect(got).toEqual(want);
    // What the comparison must have covered, spelled out.
    expect(want.get('tree/empty-folder')).toBe('dir');
    expect(want.get('tree/empty.txt')).toBe(sha256(Buffer.alloc(0)));
    expect(want.get('tree/media/big.bin')).toBe(sha256(files['tree/media/big.bin']!));
    expect([...want.values()].filter((v) => v !== 'dir')).toHaveLength(Object.keys(files).length);
    expect(await fs.readdir(path.join(dst, 'Roundtrip link', 'tree/empty-folder'))).toEqual([]);
    expect((await fs.stat(path.join(dst, 'Roundtrip link', 'tree/empty.txt'))).size).toBe(0);
  });
});
