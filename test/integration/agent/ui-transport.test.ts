// The app's browser transport over real HTTP and a real WebSocket, against a real
// service and store: requests answer {ok, value} or {ok: false, error} (errors as
// data, never a thrown status), the window follows transfers from a snapshot and
// the batches after its cursor, and progress reaches it coalesced.
import { createHash, randomBytes } from 'node:crypto';
import fs from 'node:fs/promises';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import WebSocket from 'ws';
import { afterAll, beforeAll, describe, expect, test, vi } from 'vitest';
import { call, startTestService, type TestService } from '../../helpers/hosted.js';
import { startTestAgent, type TestAgent } from '../../helpers/agent.js';
import { ownerActor, type Actor } from '../../helpers/auth.js';
import { MiB } from '../../helpers/flow.js';
import { channels, type TransferEvent } from '../../../src/ipc/contract.js';
import { applyChange, keyOfChange, transferKey, type TransferSummary } from '../../../src/ipc/transfers.js';
import { createHandlers } from '../../../src/agent/ui/handlers.js';

let svc: TestService;
let agent: TestAgent;
let owner: Actor;
let tmp: string;
let base: string;

beforeAll(async () => {
  svc = await startTestService();
  owner = await ownerActor(svc);
  agent = await startTestAgent(svc, { 'chunk-size': String(5 * MiB), ui: true });
  base = agent.url.replace(/\/api\/v1$/, '');
  tmp = await fs.mkdtemp(path.join(os.tmpdir(), 'ferry-ui-transport-'));
});

afterAll(async () => {
  await agent?.close();
  await svc?.close();
  if (tmp) await fs.rm(tmp, { recursive: true, force: true });
});

async function ipc(channel: string, body: unknown = {}, headers: Record<string, string> = { 'x-ferry-ui': '1' }): Promise<{ status: number; body: any }> {
  const r = await fetch(`${base}/ui/ipc/${channel}`, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body: JSON.stringify(body) });
  return { status: r.status, body: await r.json() };
}

/** A window's event socket: every message it got so far. */
async function openEvents(since?: number): Promise<{ ws: WebSocket; got: { event: string; payload: any }[] }> {
  const ws = new WebSocket(`${base.replace(/^http/, 'ws')}/ui/events${since === undefined ? '' : `?since=${since}`}`);
  const got: { event: string; payload: any }[] = [];
  ws.on('message', (m) => got.push(JSON.parse(String(m))));
  await new Promise((resolve, reject) => {
    ws.once('open', resolve);
    ws.once('error', reject);
  });
  return { ws, got };
}

describe('the contract and its handler table', () => {
  test('every channel has exactly one handler, and every handler a channel', () => {
    const handlers = createHandlers(agent.agent.services, agent.agent.ctx);
    expect(Object.keys(handlers).sort()).toEqual(Object.keys(channels).sort());
  });
});

describe('requests over HTTP', () => {
  test('without a session, session.current answers null and a Team call answers the session error as data', async () => {
    expect(await ipc('session.current')).toEqual({ status: 200, body: { ok: true, value: null } });
    const teams = await ipc('teams.list');
    expect(teams.status).toBe(200);
    expect(teams.body).toEqual({ ok: false, error: { code: 262146, message: 'session is nil' } });
  });

  test('a wrong password, an unknown channel, a request that does not fit its schema: errors as data, in words', async () => {
    const wrong = await ipc('session.login', { email: svc.owner.email, password: 'not it' });
    expect(wrong.body.ok).toBe(false);
    expect(wrong.body.error.code).toBe(262146);
    expect(wrong.body.error.message).toMatch(/refused the credentials/);
    expect((await ipc('uploads.explode')).body).toEqual({ ok: false, error: { code: 262145, message: 'no channel "uploads.explode"' } });
    const bad = await ipc('uploads.pause', { upload_id: 42 });
    expect(bad.body).toEqual({ ok: false, error: { code: 262145, message: 'Upload id is text.', field: 'upload_id' } });
  });

  test('a request without X-Ferry-UI (what a foreign page could send) is refused; so is a foreign Origin', async () => {
    const bare = await ipc('session.current', {}, {});
    expect(bare.status).toBe(403);
    const foreign = await ipc('session.current', {}, { 'x-ferry-ui': '1', origin: 'http://evil.example' });
    expect(foreign.status).toBe(403);
  });

  test('fs.list shows a folder of the agent\'s machine, folders first; a relative or missing path is an error', async () => {
    const dir = path.join(tmp, 'browse');
    await fs.mkdir(path.join(dir, 'b-folder'), { recursive: true });
    await fs.writeFile(path.join(dir, 'a.txt'), 'hello');
    const r = await ipc('fs.list', { path: dir });
    expect(r.body).toEqual({
      ok: true,
      value: {
        path: dir,
        parent: tmp,
        entries: [
          { name: 'b-folder', path: path.join(dir, 'b-folder'), kind: 'folder', size: 0 },
          { name: 'a.txt', path: path.join(dir, 'a.txt'), kind: 'file', size: 5 },
        ],
      },
    });
    expect((await ipc('fs.list', { path: 'relative/dir' })).body.error).toEqual({ code: 262145, message: 'path must be absolute' });
    expect((await ipc('fs.list', { path: path.join(dir, 'missing') })).body.error.code).toBe(262149);
  });

  test('fs.measure says what an upload of the paths would send, folders walked as the upload walks them; a path it would refuse is said', async () => {
    const dir = path.join(tmp, 'measure');
    await fs.mkdir(path.join(dir, 'reel', 'day 1'), { recursive: true });
    await fs.mkdir(path.join(dir, 'reel', 'empty'), { recursive: true });
    await fs.writeFile(path.join(dir, 'reel', 'day 1', 'a.mov'), Buffer.alloc(3000));
    await fs.writeFile(path.join(dir, 'reel', 'b.mov'), Buffer.alloc(700));
    await fs.writeFile(path.join(dir, 'reel', '.DS_Store'), 'clutter');
    await fs.writeFile(path.join(dir, 'one.txt'), 'hello');
    const r = await ipc('fs.measure', { paths: [path.join(dir, 'one.txt'), path.join(dir, 'reel')] });
    expect(r.body).toEqual({ ok: true, value: { files: 3, empty_folders: 1, bytes: 3705 } });
    const missing = await ipc('fs.measure', { paths: [path.join(dir, 'missing')] });
    expect(missing.body.error).toMatchObject({ code: 262145, message: expect.stringContaining('does not exist') });
    expect((await ipc('fs.measure', { paths: [] })).body.error.code).toBe(262145);
  });
});

describe('the window in browser mode (--ui)', () => {
  test('the app is served at the agent\'s address with a strict CSP; nothing outside its folder is', async () => {
    const page = await fetch(`${base}/`);
    expect(page.status).toBe(200);
    expect(page.headers.get('content-type')).toMatch(/^text\/html/);
    expect(page.headers.get('content-security-policy')).toMatch(/default-src 'self'.*object-src 'none'/);
    const html = await page.text();
    const script = /src="\.\/(assets\/[^"]+\.js)"/.exec(html)?.[1];
    expect(script, html).toBeDefined();
    const js = await fetch(`${base}/${script}`);
    expect(js.status).toBe(200);
    expect(js.headers.get('content-type')).toMatch(/^text\/javascript/);
    for (const p of ['/assets/../../package.json', '/assets/%2e%2e/%2e%2e/package.json', '/assets/missing.js']) {
      expect((await fetch(`${base}${p}`)).status, p).toBe(404);
    }
    // A page of another name that resolves here (DNS rebinding) is refused.
    const status = await new Promise<number>((resolve, reject) => {
      http.get(`${base}/`, { headers: { host: 'evil.example' } }, (res) => (res.resume(), resolve(res.statusCode ?? 0))).on('error', reject);
    });
    expect(status).toBe(403);
  });
});

describe('an agent with an API key', () => {
  test('its page loads, but nothing answers until the key is proven once; then an HttpOnly, SameSite=Strict cookie stands for it', async () => {
    const locked = await startTestAgent(svc, { 'api-key': 'agent-key-123', ui: true });
    const at = locked.url.replace(/\/api\/v1$/, '');
    try {
      expect((await fetch(`${at}/`)).status).toBe(200);
      const post = (p: string, body: unknown, headers: Record<string, string> = {}) =>
        fetch(`${at}${p}`, { method: 'POST', headers: { 'content-type': 'application/json', 'x-ferry-ui': '1', ...headers }, body: JSON.stringify(body) });
      const before = await post('/ui/ipc/session.current', {});
      expect(before.status).toBe(401);
      expect(await before.json()).toEqual({ code: 262147, message: 'X-API-Key is missing or wrong' });
      expect(await (await post('/ui/unlock', { api_key: 'guess' })).json()).toEqual({ ok: false, error: { code: 262147, message: 'That is not the API key of this agent.' } });
      const unlocked = await post('/ui/unlock', { api_key: 'agent-key-123' });
      const cookie = unlocked.headers.get('set-cookie')!;
      expect(cookie).toMatch(/^ferry_ui=[\w-]+; Path=\/; HttpOnly; SameSite=Strict$/);
      expect(cookie).not.toContain('agent-key-123');
      const after = await post('/ui/ipc/session.current', {}, { cookie: cookie.split(';')[0]! });
      expect(await after.json()).toEqual({ ok: true, value: null });
      // The cookie stands for the key on the REST API too, and a forged one does not.
      expect((await fetch(`${locked.url}/about`, { headers: { cookie: cookie.split(';')[0]! } })).status).toBe(200);
      expect((await fetch(`${locked.url}/about`, { headers: { cookie: 'ferry_ui=forged' } })).status).toBe(401);
    } finally {
      await locked.close();
    }
  });
});

describe('following transfers', () => {
  test('sign in, snapshot, send a folder, and watch it to complete through coalesced batches after the cursor; preview and fetch it back', async () => {
    const login = await ipc('session.login', { email: svc.owner.email, password: svc.owner.password });
    expect(login.body.ok).toBe(true);
    expect(login.body.value.user.email).toBe(svc.owner.email);
    const snap = await ipc('transfers.snapshot');
    expect(snap.body.ok).toBe(true);
    const { cursor } = snap.body.value;
    const { ws, got } = await openEvents(cursor);
    try {
      const dir = path.join(tmp, 'shoot');
      await fs.mkdir(dir);
      const data = randomBytes(40 * MiB);
      await fs.writeFile(path.join(dir, 'clip.mov'), data);
      const up = await ipc('uploads.create', { team_id: owner.teamId, paths: [dir] });
      expect(up.body.ok, JSON.stringify(up.body)).toBe(true);
      const id = up.body.value.upload_id;

      const changes = (): TransferEvent[] => got.filter((m) => m.event === 'transfers.changed').flatMap((m) => m.payload);
      const mine = () => changes().filter((e) => keyOfChange(e) === transferKey('upload', id));
      /** The upload as the window rebuilds it from the changes. */
      const shown = (key: string) => changes().filter((e) => keyOfChange(e) === key).reduce<TransferSummary | undefined>(applyChange, undefined);
      await vi.waitFor(() => expect(shown(transferKey('upload', id))?.state).toBe('complete'), { timeout: 30_000, interval: 50 });
      // Every event is after the cursor, in order; what they rebuild is the agent's summary.
      const ids = mine().map((e) => e.id);
      expect(ids.every((x: number) => x > cursor)).toBe(true);
      expect([...ids].sort((a, b) => a - b)).toEqual(ids);
      expect(shown(transferKey('upload', id))).toEqual({ direction: 'upload', ...(await call(agent.url, 'GET', `/uploads/${id}?files=false`)).body });
      expect(shown(transferKey('upload', id))?.progress).toBe(40 * MiB);
      // (The spacing of batches is windowEvents.ts's, proved on a fake clock in test/unit/agent/ui/windowEvents.test.ts:
      // gaps seen here would shrink whenever this process stalls and the socket bunches them up.)

      const link = await ipc('uploads.link', { upload_id: id });
      expect(link.body.ok, JSON.stringify(link.body)).toBe(true);
      const preview = await ipc('downloads.preview', { url: link.body.value.url });
      expect(preview.body.value).toMatchObject({ name: 'shoot', files: [{ path: 'shoot/clip.mov', size: 40 * MiB }] });
      const dl = await ipc('downloads.create', { url: link.body.value.url, dst_folder: path.join(tmp, 'received'), file_ids: [preview.body.value.files[0].file_id] });
      expect(dl.body.ok, JSON.stringify(dl.body)).toBe(true);
      const downloadId = dl.body.value.download_id;
      await vi.waitFor(() => expect(shown(transferKey('download', downloadId))?.state).toBe('complete'), { timeout: 30_000, interval: 50 });
      const received = await fs.readFile(path.join(tmp, 'received', 'shoot', 'clip.mov'));
      expect(createHash('sha256').update(received).digest('hex')).toBe(createHash('sha256').update(data).digest('hex'));

      // A sign-out reaches the window as a session change.
      expect((await ipc('session.logout')).body).toEqual({ ok: true, value: { done: true } });
      await vi.waitFor(() => expect(got.some((m) => m.event === 'session.changed' && m.payload.user === null)).toBe(true), { timeout: 5000 });
    } finally {
      ws.close();
    }
  });
});
