// How the agent starts each file's upload. Against Ferry's service it asks the
// registration to start the multipart upload and sign the first parts (`count`),
// so a file takes no create request and, up to 100 parts, no blueprint request.
// Against a service that keeps to the spec (here: a proxy that drops `count`),
// it runs the create blueprint and asks for blueprints itself. Both end
// byte-identical.
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, expect, test, vi } from 'vitest';
import { call, startTestService, type TestService } from '../../helpers/hosted.js';
import { ownerActor, type Actor } from '../../helpers/auth.js';
import { signInAgent, startTestAgent, type TestAgent } from '../../helpers/agent.js';
import { downloadAll, MiB, sha256 } from '../../helpers/flow.js';

interface HostedProxy {
  url: string;
  /** Drop `count` from registrations, as a service without Ferry's addition ignores it. */
  specOnly: boolean;
  /** Method, path and query of every request seen. */
  seen: { method: string; path: string; query: URLSearchParams }[];
  close(): Promise<void>;
}

async function startHostedProxy(target: string): Promise<HostedProxy> {
  const upstream = new URL(target);
  const p: HostedProxy = { url: '', specOnly: false, seen: [], close: async () => undefined };
  const server = http.createServer((req, res) => {
    const u = new URL(req.url ?? '/', 'http://x');
    p.seen.push({ method: req.method ?? '', path: u.pathname, query: new URLSearchParams(u.searchParams) });
    if (p.specOnly && /^\/v1\/packages\/[^/]+\/files$/.test(u.pathname)) u.searchParams.delete('count');
    const up = http.request({ host: upstream.hostname, port: upstream.port, method: req.method, path: u.pathname + u.search, headers: req.headers }, (ur) => {
      res.writeHead(ur.statusCode ?? 502, ur.headers);
      ur.pipe(res);
    });
    up.on('error', () => res.destroy());
    req.pipe(up);
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  p.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  p.close = async () => {
    server.closeAllConnections();
    await new Promise<void>((r) => server.close(() => r()));
  };
  return p;
}

let svc: TestService;
let proxy: HostedProxy;
let owner: Actor;
let agent: TestAgent;
let tmp: string;
const files = new Map<string, Buffer>([
  ['tiny.txt', Buffer.from('five!')],
  ['empty.bin', Buffer.alloc(0)],
  ['sub/three-parts.bin', Buffer.alloc(12 * MiB + 1, 9)],
]);

beforeAll(async () => {
  svc = await startTestService();
  proxy = await startHostedProxy(svc.url);
  owner = await ownerActor(svc);
  tmp = await fs.mkdtemp(path.join(os.tmpdir(), 'ferry-upload-registration-'));
  for (const [rel, data] of files) {
    await fs.mkdir(path.join(tmp, 'tree', path.dirname(rel)), { recursive: true });
    await fs.writeFile(path.join(tmp, 'tree', rel), data);
  }
  agent = await startTestAgent({ url: proxy.url }, { 'chunk-size': String(5 * MiB) });
  await signInAgent(agent.url, svc);
});

afterAll(async () => {
  await agent?.close();
  await proxy?.close();
  await svc?.close();
  if (tmp) await fs.rm(tmp, { recursive: true, force: true });
});

/** Uploads the tree through the agent; answers the hosted requests it made and what a recipient downloads. */
async function uploadTree(): Promise<{ seen: HostedProxy['seen']; got: Map<string, Buffer> }> {
  const from = proxy.seen.length;
  const r = await call(agent.url, 'POST', '/uploads', { body: { team_id: owner.teamId, paths: [path.join(tmp, 'tree')] } });
  expect(r.status, JSON.stringify(r.body)).toBe(201);
  await vi.waitFor(
    async () => expect((await call(agent.url, 'GET', `/uploads/${r.body.upload_id}`)).body.state).toBe('complete'),
    { timeout: 30_000, interval: 50 },
  );
  const seen = proxy.seen.slice(from);
  const link = await call(agent.url, 'POST', `/uploads/${r.body.upload_id}/link`, { body: {} });
  expect(link.status).toBe(201);
  return { seen, got: await downloadAll(svc, link.body) };
}

const registrations = (seen: HostedProxy['seen']) => seen.filter((s) => s.method === 'POST' && /^\/v1\/packages\/[^/]+\/files$/.test(s.path));
const blueprintAsks = (seen: HostedProxy['seen']) => seen.filter((s) => s.method === 'POST' && /^\/v1\/packages\/[^/]+\/files\/[^/]+$/.test(s.path));

test('against Ferry\'s service, each registration starts the upload and brings the blueprints: no blueprint request is made', async () => {
  proxy.specOnly = false;
  const { seen, got } = await uploadTree();
  const regs = registrations(seen);
  expect(regs.map((s) => s.query.get('count')).sort()).toEqual(['1', '1', '3']);
  expect(blueprintAsks(seen)).toEqual([]);
  for (const [rel, data] of files) expect(sha256(got.get(`tree/${rel}`)!), rel).toBe(sha256(data));
});

test('against a service that keeps to the spec, the agent runs the create blueprint and asks for blueprints itself', async () => {
  proxy.specOnly = true;
  const { seen, got } = await uploadTree();
  expect(registrations(seen).map((s) => s.query.get('count')).sort()).toEqual(['1', '1', '3']);
  // One ask for each file with content; the empty file finalizes without parts.
  expect(blueprintAsks(seen)).toHaveLength(2);
  for (const [rel, data] of files) expect(sha256(got.get(`tree/${rel}`)!), rel).toBe(sha256(data));
});
