// The agent's calls to the service for each file. Against Ferry's service it
// asks the registration to start the multipart upload and sign the first parts
// (`count`), or for a file of one part a PutObject (`single`), so a file takes
// no create request and, up to 100 parts, no blueprint request; and
// registrations and finalizes that come while others are under way go together
// (`register_files`, `finalize_files`). Against a service that keeps to the spec
// (here: a proxy that drops `count` and `single` and knows neither batch route),
// it runs the create blueprint, asks for blueprints, and registers and
// finalizes each file itself. Both end byte-identical.
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
import { SINGLE_PUT } from '../../../src/api/hosted/files.js';

interface Seen {
  method: string;
  path: string;
  query: URLSearchParams;
  /** The `count` and `single` of each entry of a register_files request. */
  counts?: (string | null)[];
  singles?: (string | null)[];
  /** The `upload_id` of each registration answered (for a batch, of each entry registered). */
  uploadIds?: (string | undefined)[];
  /** Files named by a batch request. */
  files?: number;
  status?: number;
}

interface HostedProxy {
  url: string;
  /** Drop `count` from registrations and answer 404 to the batch routes, as a service without Ferry's additions would. */
  specOnly: boolean;
  /** Method, path and query of every request seen. */
  seen: Seen[];
  close(): Promise<void>;
}

const isRegistration = (path: string) => /^\/v1\/packages\/[^/]+\/files$/.test(path);
const isFileFinalize = (path: string) => /^\/v1\/packages\/[^/]+\/files\/[^/]+\/finalize$/.test(path);
const isBatchRegister = (path: string) => /^\/v1\/packages\/[^/]+\/register_files$/.test(path);
const isBatchFinalize = (path: string) => /^\/v1\/packages\/[^/]+\/finalize_files$/.test(path);
/** A single registration or finalize is held this long, so those of other files gather meanwhile. */
const HOLD_MS = 150;

async function startHostedProxy(target: string): Promise<HostedProxy> {
  const upstream = new URL(target);
  const p: HostedProxy = { url: '', specOnly: false, seen: [], close: async () => undefined };
  const server = http.createServer(async (req, res) => {
    const u = new URL(req.url ?? '/', 'http://x');
    const seen: Seen = { method: req.method ?? '', path: u.pathname, query: new URLSearchParams(u.searchParams) };
    p.seen.push(seen);
    const chunks: Buffer[] = [];
    for await (const c of req) chunks.push(c as Buffer);
    const body = Buffer.concat(chunks);
    if (isBatchRegister(u.pathname) || isBatchFinalize(u.pathname)) {
      const files = JSON.parse(body.toString()).files as { count?: number; single?: boolean }[];
      seen.files = files.length;
      if (isBatchRegister(u.pathname)) {
        seen.counts = files.map((f) => (f.count === undefined ? null : String(f.count)));
        seen.singles = files.map((f) => (f.single === undefined ? null : String(f.single)));
      }
      if (p.specOnly) {
        res.writeHead(404, { 'content-type': 'application/json' });
        return res.end(JSON.stringify({ code: 'not_found', message: 'no such route' }));
      }
    }
    if (p.specOnly && isRegistration(u.pathname)) for (const q of ['count', 'single']) u.searchParams.delete(q);
    if (isRegistration(u.pathname) || isFileFinalize(u.pathname)) await new Promise((r) => setTimeout(r, HOLD_MS));
    const up = http.request({ host: upstream.hostname, port: upstream.port, method: req.method, path: u.pathname + u.search, headers: req.headers }, (ur) => {
      seen.status = ur.statusCode;
      res.writeHead(ur.statusCode ?? 502, ur.headers);
      const answer: Buffer[] = [];
      ur.on('data', (c: Buffer) => answer.push(c));
      ur.on('end', () => {
        if (ur.statusCode === 201 && isRegistration(u.pathname)) seen.uploadIds = [JSON.parse(Buffer.concat(answer).toString()).upload_id];
        if (ur.statusCode === 200 && isBatchRegister(u.pathname)) {
          const { results } = JSON.parse(Buffer.concat(answer).toString()) as { results: { registration?: { upload_id?: string } }[] };
          seen.uploadIds = results.map((r) => r.registration?.upload_id);
        }
      });
      ur.pipe(res);
    });
    up.on('error', () => res.destroy());
    up.end(body);
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
  ...Array.from({ length: 30 }, (_, i) => [`many/${i}.txt`, Buffer.from(`small file ${i}\n`)] as const),
]);
const counts = () => ['1', '1', '3', ...Array.from({ length: 30 }, () => '1')].sort();
/** Files of one part (not the empty one): asked to go up in one PutObject. */
const singles = () => Array.from({ length: 31 }, () => 'true');

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
async function uploadTree(): Promise<{ seen: Seen[]; got: Map<string, Buffer> }> {
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

const registrations = (seen: Seen[]) => seen.filter((s) => s.method === 'POST' && isRegistration(s.path));
const blueprintAsks = (seen: Seen[]) => seen.filter((s) => s.method === 'POST' && /^\/v1\/packages\/[^/]+\/files\/[^/]+$/.test(s.path));
const fileFinalizes = (seen: Seen[]) => seen.filter((s) => isFileFinalize(s.path));
const batches = (seen: Seen[], is: (path: string) => boolean) => seen.filter((s) => is(s.path));
/** Entries registered, or files finalized, through batches that the service answered. */
const batched = (seen: Seen[], is: (path: string) => boolean) => batches(seen, is).filter((b) => b.status === 200).reduce((n, b) => n + b.files!, 0);
const answeredBatches = (seen: Seen[]) => batches(seen, isBatchRegister).filter((b) => b.status === 200);
/** The `count` asked for each registration, alone or in a batch the service answered. */
const countsAsked = (seen: Seen[]) => [...registrations(seen).map((s) => s.query.get('count')), ...answeredBatches(seen).flatMap((b) => b.counts!)].sort();
/** The `single` asked for, where it was. */
const singlesAsked = (seen: Seen[]) =>
  [...registrations(seen).map((s) => s.query.get('single')), ...answeredBatches(seen).flatMap((b) => b.singles!)].filter((x) => x !== null);
/** The upload ids the registrations answered. */
const uploadIds = (seen: Seen[]) => [...registrations(seen), ...answeredBatches(seen)].flatMap((s) => s.uploadIds ?? []);

test('against Ferry\'s service, registrations start the uploads and bring the blueprints, and registrations and finalizes go together', async () => {
  proxy.specOnly = false;
  const { seen, got } = await uploadTree();
  expect(countsAsked(seen)).toEqual(counts());
  // The files of one part go up in one PutObject each; the three-part file and the empty one start multipart uploads.
  expect(singlesAsked(seen)).toEqual(singles());
  const ids = uploadIds(seen);
  expect(ids).toHaveLength(files.size);
  expect(ids.filter((id) => id === SINGLE_PUT)).toHaveLength(31);
  expect(ids.filter((id) => id !== SINGLE_PUT).every((id) => typeof id === 'string' && id.length > 0)).toBe(true);
  expect(blueprintAsks(seen)).toEqual([]);
  // Each file registered and finalized once: alone, or in a batch that gathered while others were under way.
  for (const is of [isBatchRegister, isBatchFinalize]) {
    expect(batches(seen, is).length, String(is)).toBeGreaterThan(0);
    expect(batches(seen, is).every((b) => b.status === 200 && b.files! > 1), String(is)).toBe(true);
  }
  expect(registrations(seen).length + batched(seen, isBatchRegister)).toBe(files.size);
  expect(fileFinalizes(seen).length + batched(seen, isBatchFinalize)).toBe(files.size);
  for (const [rel, data] of files) expect(sha256(got.get(`tree/${rel}`)!), rel).toBe(sha256(data));
});

test('against a service that keeps to the spec, the agent runs the create blueprint, asks for blueprints, and registers and finalizes each file', async () => {
  proxy.specOnly = true;
  const { seen, got } = await uploadTree();
  // Told that there is no batch route, the agent registers and finalizes every file on its own.
  expect(registrations(seen).map((s) => s.query.get('count')).sort()).toEqual(counts());
  expect(fileFinalizes(seen)).toHaveLength(files.size);
  // One ask for each file with content; the empty file finalizes without parts.
  expect(blueprintAsks(seen)).toHaveLength(files.size - 1);
  for (const [rel, data] of files) expect(sha256(got.get(`tree/${rel}`)!), rel).toBe(sha256(data));
});
