// Team uploads through the agent, end to end over real HTTP (hosted service,
// embedded store, agent): a folder tree to recipients, a link-type upload, manual
// finalize, the session requirement, bad input, and deleting by state.
import { createHash } from 'node:crypto';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, test, vi } from 'vitest';
import { call, startTestService, type TestService } from '../../helpers/hosted.js';
import { ownerActor, type Actor } from '../../helpers/auth.js';
import { signInAgent, startTestAgent, type TestAgent } from '../../helpers/agent.js';
import { downloadAll, MiB } from '../../helpers/flow.js';

const sha = (b: Buffer) => createHash('sha256').update(b).digest('hex');

let svc: TestService;
let owner: Actor;
let agent: TestAgent;
let manual: TestAgent;
let signedOut: TestAgent;
let tmp: string;

const signIn = (a: TestAgent) => signInAgent(a.url, svc);

/** Polls GET /uploads/{id} until `done` accepts the record (bounded). */
async function waitFor(a: TestAgent, id: string, done: (r: any) => boolean, what: string) {
  return vi.waitFor(
    async () => {
      const r = await call(a.url, 'GET', `/uploads/${id}`);
      expect(r.status).toBe(200);
      if (r.body.state === 'error') throw new Error(`upload failed: ${r.body.error}`);
      expect(done(r.body), `${what}: ${JSON.stringify({ ...r.body, items: undefined })}`).toBe(true);
      return r.body;
    },
    { timeout: 45_000, interval: 50 },
  );
}

/** A folder tree: nested folders, an empty file, an empty folder, OS clutter, a 30 MiB file. */
async function makeTree(root: string) {
  const files: Record<string, Buffer> = {
    'shoot/notes.txt': Buffer.from('day one: rain\n'),
    'shoot/empty.txt': Buffer.alloc(0),
    'shoot/cam-a/clip-001.bin': Buffer.alloc(1_234_567, 3),
    'shoot/cam-a/deep/er/still.bin': Buffer.from('a still'),
    'shoot/big.bin': Buffer.concat(Array.from({ length: 30 }, (_, i) => Buffer.alloc(MiB, i + 1))),
  };
  for (const [rel, data] of Object.entries(files)) {
    await fs.mkdir(path.dirname(path.join(root, rel)), { recursive: true });
    await fs.writeFile(path.join(root, rel), data);
  }
  await fs.mkdir(path.join(root, 'shoot/cam-b'), { recursive: true }); // empty folder
  await fs.writeFile(path.join(root, 'shoot/.DS_Store'), 'clutter');
  await fs.writeFile(path.join(root, 'shoot/cam-a/Thumbs.db'), 'clutter');
  return files;
}

beforeAll(async () => {
  svc = await startTestService();
  owner = await ownerActor(svc);
  tmp = await fs.mkdtemp(path.join(os.tmpdir(), 'ferry-uploads-'));
  agent = await startTestAgent(svc, { 'chunk-size': String(5 * MiB), concurrency: '4' });
  manual = await startTestAgent(svc, { 'chunk-size': String(5 * MiB), 'auto-finalize': 'false' });
  signedOut = await startTestAgent(svc);
  await signIn(agent);
  await signIn(manual);
});

afterAll(async () => {
  await agent?.close();
  await manual?.close();
  await signedOut?.close();
  await svc?.close();
  if (tmp) await fs.rm(tmp, { recursive: true, force: true });
});

describe('a Team upload of a folder tree to recipients', () => {
  test('finalizes a Package with every file and size, mailed to the recipients, byte-identical through their Link', async () => {
    const root = path.join(tmp, 'tree');
    const files = await makeTree(root);
    const r = await call(agent.url, 'POST', '/uploads', {
      body: { team_id: owner.teamId, paths: [path.join(root, 'shoot')], recipients: ['rita@example.com'], package_name: 'Shoot day 1' },
    });
    expect(r.status, JSON.stringify(r.body)).toBe(201);
    expect(r.body).toMatchObject({ upload_id: expect.any(String), package_id: expect.any(String), package_name: 'Shoot day 1', type: 'team' });
    const total = Object.values(files).reduce((s, b) => s + b.length, 0);
    expect(r.body.size).toBe(total);
    // The clutter is left out; the empty folder is an entry of its own.
    expect(r.body.items.map((i: any) => i.path).sort()).toEqual(
      ['shoot/cam-b', ...Object.keys(files)].sort(),
    );

    const done = await waitFor(agent, r.body.upload_id, (u) => u.state === 'complete', 'complete');
    expect(done.progress).toBe(total);
    expect(done.items.every((i: any) => i.state === 'complete' && i.progress === i.size)).toBe(true);
    // The 30 MiB file went as six 5 MiB parts, each recorded.
    const parts = agent.agent.ctx.db
      .prepare(`SELECT p.part_number, p.size FROM upload_parts p JOIN upload_files f ON f.upload_id = p.upload_id AND f.idx = p.file_idx
                WHERE p.upload_id = ? AND f.name = 'big.bin' ORDER BY p.part_number`)
      .all(r.body.upload_id);
    expect(parts).toEqual([1, 2, 3, 4, 5, 6].map((n) => ({ part_number: n, size: 5 * MiB })));

    // The service's view: finalized, every file with its size, the empty folder too.
    const pkg = await call(svc.url, 'GET', `/v1/packages/${r.body.package_id}`, { headers: owner.h });
    expect(pkg.body).toMatchObject({ state: 'finalized', total_files: Object.keys(files).length, size: total, recipients: ['rita@example.com'] });
    const listed = await call(svc.url, 'GET', `/v1/packages/${r.body.package_id}/files`, { headers: owner.h });
    const entries = listed.body.filter((f: any) => f.kind === 'file' || f.kind === 'directory');
    const byPlace = new Map(entries.map((f: any) => [f.path ? `${f.path}/${f.name}` : f.name, f]));
    for (const [rel, data] of Object.entries(files)) expect((byPlace.get(rel) as any)?.size, rel).toBe(data.length);
    expect((byPlace.get('shoot/cam-b') as any)?.kind).toBe('directory');

    // The recipient's mail carries a Link; every file downloads byte-identical through it.
    const mail = await vi.waitFor(
      async () => {
        const dir = path.join(svc.dataDir, 'outbox');
        const names = (await fs.readdir(dir)).filter((n) => n.endsWith('.eml'));
        const texts = await Promise.all(names.map((n) => fs.readFile(path.join(dir, n), 'utf8')));
        const hit = texts.find((t) => /^To: rita@example\.com/m.test(t) && t.includes('secret='));
        expect(hit).toBeDefined();
        return hit!.replace(/=\r?\n/g, '').replace(/=([0-9A-F]{2})/g, (_, h: string) => String.fromCharCode(parseInt(h, 16)));
      },
      { timeout: 20_000 },
    );
    const m = /\/l\/(lnk_[A-Za-z0-9]+)\?secret=([A-Za-z0-9_-]+)/.exec(mail)!;
    const got = await downloadAll(svc, { id: m[1]!, secret: m[2]! });
    expect([...got.keys()].sort()).toEqual(Object.keys(files).sort());
    for (const [rel, data] of Object.entries(files)) expect(sha(got.get(rel)!), rel).toBe(sha(data));
  });
});

describe('a link-type upload (no recipients)', () => {
  test('completes, then POST /uploads/{id}/link makes a Link that downloads it byte-identical', async () => {
    const file = path.join(tmp, 'single.bin');
    const data = Buffer.concat([Buffer.alloc(7 * MiB, 9), Buffer.from('tail')]);
    await fs.writeFile(file, data);
    const r = await call(agent.url, 'POST', '/uploads', { body: { team_id: owner.teamId, paths: [file], password: 'pw-1' } });
    expect(r.status, JSON.stringify(r.body)).toBe(201);
    await waitFor(agent, r.body.upload_id, (u) => u.state === 'complete', 'complete');

    const link = await call(agent.url, 'POST', `/uploads/${r.body.upload_id}/link`, { body: { email: 'ann@example.com' } });
    expect(link.status, JSON.stringify(link.body)).toBe(201);
    expect(link.body).toEqual({
      id: expect.any(String),
      secret: expect.any(String),
      email: 'ann@example.com',
      expiry: null,
      locked: true,
      url: expect.stringContaining(`/${link.body.id}?secret=`),
    });
    const got = await downloadAll(svc, link.body, 'pw-1');
    expect(sha(got.get('single.bin')!)).toBe(sha(data));

    const open = await call(agent.url, 'POST', `/uploads/${r.body.upload_id}/link`);
    expect(open.status).toBe(201);
    expect(open.body.locked).toBe(true);

    // Signed out, no Link: the session is nil.
    expect((await call(agent.url, 'DELETE', '/login')).status).toBeLessThan(300);
    const signedOutLink = await call(agent.url, 'POST', `/uploads/${r.body.upload_id}/link`, { body: {} });
    expect(signedOutLink.status).toBe(401);
    expect(signedOutLink.body).toEqual({ code: 262146, message: 'session is nil' });
    await signIn(agent);
  });
});

describe('a file that changes while it is uploaded', () => {
  test('stops the upload with an error naming the file, and the Package never takes the file', async () => {
    const file = path.join(tmp, 'growing.bin');
    await fs.writeFile(file, Buffer.alloc(30 * MiB, 5));
    const r = await call(agent.url, 'POST', '/uploads', { body: { team_id: owner.teamId, paths: [file] } });
    expect(r.status, JSON.stringify(r.body)).toBe(201);
    // After the walk, before the file's finalize (at the latest) checks it again.
    await fs.appendFile(file, 'more');
    const failed = await vi.waitFor(
      async () => {
        const u = (await call(agent.url, 'GET', `/uploads/${r.body.upload_id}`)).body;
        expect(u.state).toBe('error');
        return u;
      },
      { timeout: 45_000, interval: 50 },
    );
    expect(JSON.stringify(failed)).toContain(`${file} changed while it was being uploaded`);
    const pkg = await call(svc.url, 'GET', `/v1/packages/${r.body.package_id}`, { headers: owner.h });
    expect(pkg.body).toMatchObject({ state: 'new', total_files: 0 });
  });
});

describe('with --auto-finalize false', () => {
  test('the upload stays idle until POST /uploads/{id}/finalize, which completes it', async () => {
    const file = path.join(tmp, 'manual.bin');
    await fs.writeFile(file, Buffer.alloc(6 * MiB, 4));
    const r = await call(manual.url, 'POST', '/uploads', { body: { team_id: owner.teamId, paths: [file], delete_after: 3 } });
    expect(r.status, JSON.stringify(r.body)).toBe(201);
    const idle = await waitFor(manual, r.body.upload_id, (u) => u.state === 'idle', 'idle');
    expect(idle.progress).toBe(6 * MiB);
    const before = await call(svc.url, 'GET', `/v1/packages/${r.body.package_id}`, { headers: owner.h });
    expect(before.body.state).toBe('new');
    // A Link needs a complete upload.
    expect((await call(manual.url, 'POST', `/uploads/${r.body.upload_id}/link`, { body: {} })).status).toBe(409);

    const fin = await call(manual.url, 'POST', `/uploads/${r.body.upload_id}/finalize`);
    expect(fin.status).toBe(200);
    expect(fin.body).toEqual({ code: 200 });
    expect((await call(manual.url, 'GET', `/uploads/${r.body.upload_id}`)).body.state).toBe('complete');
    const after = await call(svc.url, 'GET', `/v1/packages/${r.body.package_id}`, { headers: owner.h });
    expect(after.body).toMatchObject({ state: 'finalized', total_files: 1, size: 6 * MiB, custom_expiry: true });
    const days = (Date.parse(after.body.expiry) - Date.now()) / 86_400_000;
    expect(days).toBeGreaterThan(2.9);
    expect(days).toBeLessThanOrEqual(3);
    // Only from idle.
    const again = await call(manual.url, 'POST', `/uploads/${r.body.upload_id}/finalize`);
    expect(again.status).toBe(409);
    expect(again.body).toMatchObject({ code: expect.any(Number), message: expect.any(String) });
  });
});

describe('without a session', () => {
  test('POST /uploads answers 401 {code: 262146, message: "session is nil"} and creates nothing', async () => {
    const file = path.join(tmp, 'nosession.txt');
    await fs.writeFile(file, 'x');
    const r = await call(signedOut.url, 'POST', '/uploads', { body: { team_id: owner.teamId, paths: [file] } });
    expect(r.status).toBe(401);
    expect(r.body).toEqual({ code: 262146, message: 'session is nil' });
    expect((await call(signedOut.url, 'GET', '/uploads')).body).toEqual([]);
  });
});

describe('bad input on every upload route', () => {
  test('400 {code, message}, and nothing is created', async () => {
    const file = path.join(tmp, 'ok.txt');
    await fs.writeFile(file, 'fine');
    const before = (await call(agent.url, 'GET', '/uploads')).body.length;
    const packagesBefore = await svc.ctx.db.selectFrom('packages').select('id').execute();
    const bad: [string, string, unknown][] = [
      ['POST', '/uploads', undefined],
      ['POST', '/uploads', { team_id: owner.teamId }],
      ['POST', '/uploads', { team_id: owner.teamId, paths: [] }],
      ['POST', '/uploads', { team_id: owner.teamId, paths: ['relative/file.txt'] }],
      ['POST', '/uploads', { team_id: owner.teamId, paths: [path.join(tmp, 'does-not-exist')] }],
      ['POST', '/uploads', { team_id: owner.teamId, paths: [file, file] }],
      ['POST', '/uploads', { team_id: owner.teamId, paths: 'not-a-list' }],
      ['POST', '/uploads', { paths: [file] }],
      ['POST', '/uploads', { team_id: owner.teamId, paths: [file], recipients: ['not-an-email'] }],
      ['POST', '/uploads', { team_id: owner.teamId, paths: [file], chunk_size: 0 }],
      ['POST', '/uploads', { team_id: owner.teamId, paths: [file], chunk_size: '5242880' }],
      ['POST', '/uploads', { team_id: owner.teamId, paths: [file], priority: 1.5 }],
      ['POST', '/uploads', { team_id: owner.teamId, paths: [file], delete_after: 0 }],
      ['POST', '/uploads', { team_id: owner.teamId, paths: [file], delete_after: 2, unlimited_storage: true }],
      ['POST', '/uploads', { team_id: owner.teamId, paths: [file], download_limit: -1 }],
      ['POST', '/uploads', { team_id: owner.teamId, paths: [file], unlimited_storage: 'yes' }],
      ['POST', '/uploads/upl_x/link', { access_limit: 0 }],
      ['POST', '/uploads/upl_x/link', { expiry: 'tomorrow' }],
      ['POST', '/uploads/upl_x/link', { email: 'nope' }],
      ['DELETE', '/uploads?states=complete,bogus', undefined],
      ['DELETE', '/uploads?states=', undefined],
    ];
    for (const [method, url, body] of bad) {
      const r = await call(agent.url, method, url, body === undefined ? {} : { body });
      expect(r.status, `${method} ${url} ${JSON.stringify(body)}: ${JSON.stringify(r.body)}`).toBe(400);
      expect(r.body).toMatchObject({ code: 262145, message: expect.any(String) });
    }
    const broken = await call(agent.url, 'POST', '/uploads', { raw: '{"team_id":', headers: { 'content-type': 'application/json' } });
    expect(broken.status).toBe(400);
    expect((await call(agent.url, 'GET', '/uploads')).body).toHaveLength(before);
    expect(await svc.ctx.db.selectFrom('packages').select('id').execute()).toHaveLength(packagesBefore.length);
    // Unknown ids are 404 on every per-upload route.
    for (const [method, url] of [['GET', '/uploads/upl_nope'], ['POST', '/uploads/upl_nope/pause'], ['POST', '/uploads/upl_nope/resume'], ['DELETE', '/uploads/upl_nope'], ['POST', '/uploads/upl_nope/finalize'], ['POST', '/uploads/upl_nope/link']] as const) {
      const r = await call(agent.url, method, url);
      expect(r.status, `${method} ${url}`).toBe(404);
      expect(r.body).toEqual({ code: expect.any(Number), message: expect.any(String) });
    }
  });
});

describe('DELETE /uploads', () => {
  test('?states=complete,error removes only those and answers them; without states every upload goes; the Package stays', async () => {
    const file = path.join(tmp, 'del.txt');
    await fs.writeFile(file, 'to be forgotten');
    const a = await call(manual.url, 'POST', '/uploads', { body: { team_id: owner.teamId, paths: [file] } });
    await waitFor(manual, a.body.upload_id, (u) => u.state === 'idle', 'idle');
    const listBefore = (await call(manual.url, 'GET', '/uploads')).body as any[];
    const completes = listBefore.filter((u) => u.state === 'complete').map((u) => u.upload_id);
    expect(completes.length).toBeGreaterThan(0);

    const d = await call(manual.url, 'DELETE', '/uploads?states=complete,error');
    expect(d.status).toBe(200);
    expect(d.body.map((u: any) => u.upload_id).sort()).toEqual(completes.sort());
    const left = (await call(manual.url, 'GET', '/uploads')).body as any[];
    expect(left.map((u) => u.upload_id)).toEqual([a.body.upload_id]);

    const one = await call(manual.url, 'DELETE', `/uploads/${a.body.upload_id}`);
    expect(one.status).toBe(200);
    expect(one.body).toMatchObject({ upload_id: a.body.upload_id, state: 'idle' });
    expect((await call(manual.url, 'GET', `/uploads/${a.body.upload_id}`)).status).toBe(404);
    const pkg = await call(svc.url, 'GET', `/v1/packages/${a.body.package_id}`, { headers: owner.h });
    expect(pkg.body.state).toBe('new');

    const all = await call(agent.url, 'DELETE', '/uploads');
    expect(all.status).toBe(200);
    expect(all.body.length).toBeGreaterThan(0);
    expect((await call(agent.url, 'GET', '/uploads')).body).toEqual([]);
  });
});
