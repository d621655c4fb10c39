// A storage gateway never trusts its service: here the service is a hostile
// stand-in (a real HTTP server and WebSocket on 127.0.0.1 speaking the gateway
// protocol) that asks a real agent's gateway to write and read outside its
// root. Every such request is refused with its code (unsafe_path), nothing is
// written or read outside the root, a request of the wrong direction is
// refused (permission_denied), and arguments that are not the protocol's are
// bad_request.
import fs from 'node:fs/promises';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import type { AddressInfo } from 'node:net';
import { WebSocketServer, type WebSocket } from 'ws';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestAgent, type TestAgent } from '../../helpers/agent.js';
import { waitFor } from '../../helpers/downloads.js';
import { GATEWAY_PROTOCOL } from '../../../src/api/hosted/storageGateway.js';

let server: http.Server;
let wss: WebSocketServer;
let base: string;
let agent: TestAgent;
let tmp: string;
/** The gateways connected to the stand-in, by id. */
const sockets = new Map<string, WebSocket>();
/** Sockets each gateway opened. */
const connections = new Map<string, number>();
/** Bytes the stand-in's "store" serves to any GET. */
const PAYLOAD = Buffer.from('written by a hostile service\n');
let served = 0;

beforeAll(async () => {
  tmp = await fs.mkdtemp(path.join(os.tmpdir(), 'ferry-gateway-untrusted-'));
  server = http.createServer((req, res) => {
    if (req.url?.startsWith('/v1/storage_gateway/connect')) {
      res.writeHead(426, { 'content-type': 'application/json' }).end(JSON.stringify({ code: 'upgrade_required', message: 'upgrade' }));
      return;
    }
    // The "store": every GET answers the payload (a range as asked).
    served++;
    const m = /bytes=(\d+)-(\d+)/.exec(req.headers.range ?? '');
    const [s, e] = m ? [Number(m[1]), Number(m[2])] : [0, PAYLOAD.length - 1];
    res.writeHead(m ? 206 : 200, { 'content-length': String(e - s + 1), ...(m ? { 'content-range': `bytes ${s}-${e}/${PAYLOAD.length}` } : {}) });
    res.end(PAYLOAD.subarray(s, e + 1));
  });
  wss = new WebSocketServer({ server, path: '/v1/storage_gateway/connect' });
  wss.on('connection', (ws, req) => {
    const id = String(req.headers['x-gateway-id']);
    sockets.set(id, ws);
    connections.set(id, (connections.get(id) ?? 0) + 1);
    // "gw_quiet" is promised a frame every 100 ms, and then hears nothing.
    ws.send(JSON.stringify({ type: 'welcome', protocol: GATEWAY_PROTOCOL, connection_id: id, name: id, direction: 'svc_to_cloud', heartbeat_ms: id === 'gw_quiet' ? 100 : 10_000 }));
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  agent = await startTestAgent({ url: base });
});
afterAll(async () => {
  await agent?.close();
  for (const ws of sockets.values()) ws.terminate();
  await new Promise((r) => wss.close(r));
  await new Promise((r) => server.close(r));
  if (tmp) await fs.rm(tmp, { recursive: true, force: true });
});

let nextId = 1;
/** Sends one request to the gateway `id` and resolves with its reply. */
function ask(id: string, op: string, args: Record<string, unknown>): Promise<any> {
  const ws = sockets.get(id)!;
  const rid = nextId++;
  return new Promise((resolve) => {
    const onMessage = (m: Buffer) => {
      const f = JSON.parse(String(m));
      if (f.type === 'reply' && f.id === rid) {
        ws.off('message', onMessage);
        resolve(f);
      }
    };
    ws.on('message', onMessage);
    ws.send(JSON.stringify({ type: 'request', id: rid, op, args }));
  });
}

async function gatewayWith(id: string, permissions: 'r' | 'w', root: string): Promise<void> {
  await fs.mkdir(root, { recursive: true });
  const r = await fetch(`${agent.url}/storage_gateway/register`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ id, name: id, permissions, root_path: root, secret: 'any' }),
  });
  expect(r.status, await r.clone().text()).toBe(201);
  await waitFor(`the gateway ${id} to connect`, () => (sockets.has(id) ? true : undefined));
}

/** Every path under `dir`. */
async function everything(dir: string): Promise<string[]> {
  const out: string[] = [];
  for (const e of await fs.readdir(dir, { withFileTypes: true })) {
    const p = path.join(dir, e.name);
    out.push(p, ...(e.isDirectory() ? await everything(p) : []));
  }
  return out;
}

describe('a hostile service asking a w gateway to write', () => {
  it('gets unsafe_path for every path that leaves the root, and nothing is written outside it', async () => {
    const root = path.join(tmp, 'w', 'root');
    await gatewayWith('gw_w', 'w', root);
    const begin = await ask('gw_w', 'deliver.begin', { transfer_id: 'xfr_1', package_id: 'pkg_1', package_name: 'P', folder: 'P', files_total: 9, bytes_total: 9 });
    expect(begin).toMatchObject({ ok: true });
    const evil = ['../escaped.txt', 'P/../../escaped.txt', '../../../../../../tmp/escaped.txt', 'a\\..\\..\\escaped.txt', 'P/..', 'C:/escaped.txt', 'P/\u0000x.txt', ''];
    for (const [i, p] of evil.entries()) {
      const r = await ask('gw_w', 'deliver.file', { transfer_id: 'xfr_1', seq: i + 1, path: p, size: PAYLOAD.length, url: `${base}/obj` });
      expect(r, p).toMatchObject({ ok: false, error: { code: 'unsafe_path' } });
    }
    // A link planted in the root is not followed either.
    await fs.mkdir(path.join(tmp, 'w', 'elsewhere'));
    await fs.symlink(path.join(tmp, 'w', 'elsewhere'), path.join(root, 'link'));
    const linked = await ask('gw_w', 'deliver.file', { transfer_id: 'xfr_1', seq: 20, path: 'link/escaped.txt', size: PAYLOAD.length, url: `${base}/obj` });
    expect(linked).toMatchObject({ ok: false, error: { code: 'unsafe_path' } });
    expect(served).toBe(0);
    const good = await ask('gw_w', 'deliver.file', { transfer_id: 'xfr_1', seq: 21, path: 'P/ok.txt', size: PAYLOAD.length, url: `${base}/obj` });
    expect(good).toMatchObject({ ok: true, value: { size: PAYLOAD.length } });
    expect((await everything(path.join(tmp, 'w'))).sort()).toEqual([root, path.join(root, 'P'), path.join(root, 'P', 'ok.txt'), path.join(root, 'link'), path.join(tmp, 'w', 'elsewhere')].sort());
    // The w gateway serves nothing.
    expect(await ask('gw_w', 'collect.list', { transfer_id: 'xfr_2', package_id: 'pkg_2', package_name: 'Q', refs: [''] })).toMatchObject({ ok: false, error: { code: 'permission_denied' } });
  });

  it('answers bad_request to arguments that are not the protocol', async () => {
    expect(await ask('gw_w', 'deliver.file', { transfer_id: 'xfr_1', seq: 'one', path: 'x', size: 1, url: 'u' })).toMatchObject({ ok: false, error: { code: 'bad_request' } });
    expect(await ask('gw_w', 'deliver.file', { transfer_id: 'xfr_unknown', seq: 1, path: 'x', size: 1, url: `${base}/obj` })).toMatchObject({ ok: false, error: { code: 'bad_request' } });
  });
});

describe('a hostile service asking an r gateway to read', () => {
  it('gets unsafe_path for paths that leave the root, links are neither listed nor read, and w work is refused', async () => {
    const root = path.join(tmp, 'r', 'root');
    await gatewayWith('gw_r', 'r', root);
    await fs.writeFile(path.join(root, 'mine.txt'), 'mine\n');
    await fs.writeFile(path.join(tmp, 'r', 'secret.txt'), 'not the gateway\'s\n');
    await fs.symlink(path.join(tmp, 'r', 'secret.txt'), path.join(root, 'secret-link.txt'));
    await fs.symlink(path.join(tmp, 'r'), path.join(root, 'dir-link'));
    for (const ref of ['..', '../', '../secret.txt', '/etc', 'a/../../secret.txt', 'secret-link.txt', 'dir-link/secret.txt']) {
      const r = await ask('gw_r', 'collect.list', { transfer_id: 'xfr_r', package_id: 'pkg_r', package_name: 'R', refs: [ref] });
      expect(r, ref).toMatchObject({ ok: false, error: { code: 'unsafe_path' } });
    }
    const listed = await ask('gw_r', 'collect.list', { transfer_id: 'xfr_r', package_id: 'pkg_r', package_name: 'R', refs: [''] });
    expect(listed).toMatchObject({ ok: true });
    expect(listed.value.files.map((f: any) => f.path)).toEqual(['mine.txt']);
    const st = await fs.stat(path.join(tmp, 'r', 'secret.txt'));
    const bp = { url: `${base}/put`, method: 'PUT', headers: {}, body: '' };
    for (const p of ['../secret.txt', 'secret-link.txt', 'dir-link/secret.txt']) {
      const r = await ask('gw_r', 'collect.part', { transfer_id: 'xfr_r', seq: 1, path: p, size: st.size, mtime_ms: Math.floor(st.mtimeMs), offset: 0, length: st.size, blueprint: bp });
      expect(r, p).toMatchObject({ ok: false, error: { code: 'unsafe_path' } });
    }
    expect(served).toBe(1); // the one good delivery of the test before
    expect(await ask('gw_r', 'deliver.begin', { transfer_id: 'xfr_3', package_id: 'pkg_3', package_name: 'S', folder: 'S', files_total: 1, bytes_total: 1 })).toMatchObject({
      ok: false,
      error: { code: 'permission_denied' },
    });
  });
});

describe('a service that goes silent', () => {
  it('is left: the gateway closes the socket after three heartbeats of silence and connects again', async () => {
    await gatewayWith('gw_quiet', 'w', path.join(tmp, 'quiet'));
    await waitFor('a second socket of the quiet gateway', () => ((connections.get('gw_quiet') ?? 0) >= 2 ? true : undefined), 400);
    const r = await fetch(`${agent.url}/storage_gateway/unregister`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ id: 'gw_quiet' }) });
    expect(r.status).toBe(200);
  });
});
