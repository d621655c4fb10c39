// cloud_to_svc through a storage gateway on a real agent: the files under the
// connection's source folders (or the files and folders a transfer names),
// relative to the gateway's root, become a new Package, sent by the gateway
// straight to the service's store in parts; the Package is finalized and a
// recipient downloads identical bytes. Nothing outside the root is served (a
// symbolic link is not followed), and a gateway with permissions w refuses.
import { randomBytes } from 'node:crypto';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { call, startTestService, type TestService } from '../../helpers/hosted.js';
import { ownerActor, type Actor } from '../../helpers/auth.js';
import { startTestAgent, type TestAgent } from '../../helpers/agent.js';
import { MiB, createPackage, downloadAll, makeLink, sha256 } from '../../helpers/flow.js';
import { waitFor } from '../../helpers/downloads.js';
import { connectionAttached, gatewayConnection, gatewayRecord, registerGateway } from '../../helpers/gateway.js';

let svc: TestService;
let owner: Actor;
let agent: TestAgent;
let tmp: string;
let root: string;

const FILES: Record<string, Buffer> = {
  'footage/day1/a.mov': randomBytes(200_000),
  'footage/day1/sub/b.wav': randomBytes(30_000),
  'footage/day1/sub/deeper/empty.txt': Buffer.alloc(0),
  // Past the part size: sent in three parts.
  'footage/day1/big.bin': randomBytes(13 * MiB + 7),
  'footage/day10/not-this.txt': Buffer.from('a sibling folder with a longer name'),
  'loose.txt': Buffer.from('outside the source folder'),
};

beforeAll(async () => {
  svc = await startTestService({ 'cloud-part-size': String(6 * MiB), 'cloud-retry-base-ms': '50', 'jobs-poll-ms': '50', 'cloud-attempts': '2', 'gateway-recheck-ms': '200' });
  owner = await ownerActor(svc);
  agent = await startTestAgent(svc);
  tmp = await fs.mkdtemp(path.join(os.tmpdir(), 'ferry-gateway-collect-'));
  root = path.join(tmp, 'root');
  for (const [rel, data] of Object.entries(FILES)) {
    await fs.mkdir(path.dirname(path.join(root, rel)), { recursive: true });
    await fs.writeFile(path.join(root, rel), data);
  }
  // Outside the root, and a link to it inside: never served.
  await fs.writeFile(path.join(tmp, 'secret.txt'), 'not the gateway\'s to give\n');
  await fs.symlink(path.join(tmp, 'secret.txt'), path.join(root, 'footage', 'day1', 'link-out.txt'));
  await fs.symlink(tmp, path.join(root, 'footage', 'day1', 'dir-out'));
});
afterAll(async () => {
  await agent?.close();
  await svc?.close();
  if (tmp) await fs.rm(tmp, { recursive: true, force: true });
});

async function fill(connId: string, name: string, extra: Record<string, unknown> = {}) {
  const pkg = await createPackage(svc, owner, { name });
  const r = await call(svc.url, 'POST', `/v1/packages/${pkg.id}/transfer`, { headers: pkg.h, body: { cloud_connection_id: connId, ...extra } });
  expect(r.status, JSON.stringify(r.body)).toBe(201);
  expect(r.body).toMatchObject({ direction: 'cloud_to_svc', state: 'queued', trigger: 'manual' });
  const t = await waitFor('the collection', async () => {
    const g = await call(svc.url, 'GET', `/v1/packages/${pkg.id}/transfers/${r.body.id}`, { headers: pkg.h });
    return g.body.state === 'complete' || g.body.state === 'error' ? g.body : undefined;
  });
  return { pkg, t };
}

const pick = (prefix: string, strip: string) =>
  new Map(Object.entries(FILES).filter(([k]) => k.startsWith(prefix)).map(([k, v]) => [k.slice(strip.length), sha256(v)]));

it('files under the source folder become a Package, byte-identical, sent by the gateway in parts; links are not followed', async () => {
  const conn = await gatewayConnection(svc, owner, { name: 'Ingest NAS', direction: 'cloud_to_svc', source_directory_ids: ['footage/day1'] });
  expect(conn.body).toMatchObject({ direction: 'cloud_to_svc', state: 'disconnected', source_directory_ids: ['footage/day1'] });
  await registerGateway(agent.url, { id: conn.id, name: 'Ingest NAS', permissions: 'r', root_path: root, secret: conn.secret });
  await connectionAttached(svc, owner, conn.id, true);

  const { pkg, t } = await fill(conn.id, 'From the NAS');
  expect(t, JSON.stringify(t)).toMatchObject({ state: 'complete', files_total: 4, files_done: 4, bytes_total: 200_000 + 30_000 + 13 * MiB + 7 });
  const p = await call(svc.url, 'GET', `/v1/packages/${pkg.id}`, { headers: pkg.h });
  expect(p.body.state).toBe('finalized');
  const got = await downloadAll(svc, await makeLink(svc, pkg));
  // Kept below the source folder's last name, as for a bucket.
  expect(new Map([...got].map(([k, v]) => [k, sha256(v)]))).toEqual(pick('footage/day1/', 'footage/'));

  const rec = await gatewayRecord(agent.url, conn.id);
  expect(rec.transfers[0]).toMatchObject({ transfer_id: t.id, direction: 'cloud_to_svc', package_id: pkg.id, state: 'complete', files_total: 4, files_done: 4 });
  await call(agent.url, 'POST', '/storage_gateway/unregister', { body: { id: conn.id } });
});

it('a transfer names files and folders below the root; one that tries to leave it is refused by the service', async () => {
  const conn = await gatewayConnection(svc, owner, { name: 'Picked', direction: 'cloud_to_svc' });
  await registerGateway(agent.url, { id: conn.id, name: 'Picked', permissions: 'r', root_path: root, secret: conn.secret });
  await connectionAttached(svc, owner, conn.id, true);
  const { pkg, t } = await fill(conn.id, 'Picked', { files: [{ path: 'loose.txt' }, { path: 'footage/day10/' }] });
  expect(t.state, JSON.stringify(t)).toBe('complete');
  const got = await downloadAll(svc, await makeLink(svc, pkg));
  expect([...got.keys()].sort()).toEqual(['footage/day10/not-this.txt', 'loose.txt']);

  const bad = await createPackage(svc, owner, { name: 'Escape' });
  const r = await call(svc.url, 'POST', `/v1/packages/${bad.id}/transfer`, { headers: bad.h, body: { cloud_connection_id: conn.id, files: [{ path: '../secret.txt' }] } });
  expect(r.status).toBe(400);

  // A link named directly is refused by the gateway, and the transfer says so.
  const { t: linked } = await fill(conn.id, 'Linked', { files: [{ path: 'footage/day1/link-out.txt' }] });
  expect(linked.state).toBe('error');
  expect(linked.error).toMatch(/symbolic link/);
  await call(agent.url, 'POST', '/storage_gateway/unregister', { body: { id: conn.id } });
});

it('a gateway with permissions w refuses cloud_to_svc: the transfer ends in error saying why', async () => {
  const conn = await gatewayConnection(svc, owner, { name: 'Drop box', direction: 'cloud_to_svc' });
  await registerGateway(agent.url, { id: conn.id, name: 'Drop box', permissions: 'w', root_path: root, secret: conn.secret });
  await connectionAttached(svc, owner, conn.id, true);
  const { pkg, t } = await fill(conn.id, 'Refused');
  expect(t.state).toBe('error');
  expect(t.error).toMatch(/write-only \(permissions w\)/);
  const p = await call(svc.url, 'GET', `/v1/packages/${pkg.id}/files`, { headers: pkg.h });
  expect(p.body.filter((f: any) => f.kind === 'file')).toEqual([]);
  await call(agent.url, 'POST', '/storage_gateway/unregister', { body: { id: conn.id } });
});
