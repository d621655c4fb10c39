// The storage gateway end to end, over real HTTP and a real WebSocket: a
// storage_gateway connection on the service, a gateway registered on a real
// agent with its id and secret, a Portal whose finalized Packages are
// delivered into the gateway's root (byte-identical, under "name (id)"), the
// connection connected while the gateway is and disconnected after it is
// unregistered; a Package whose paths try to leave the root writes nothing
// outside it; permissions r refuses deliveries with a clear error on the
// transfer; the gateway's state changes on the agent's /events feed.
import { randomBytes } from 'node:crypto';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, startTestService, type TestService } from '../../helpers/hosted.js';
import { ownerActor, type Actor } from '../../helpers/auth.js';
import { openEventStream, startTestAgent, type TestAgent } from '../../helpers/agent.js';
import { MiB, register, startUpload, putParts, finalizeFile, finalizePackage } from '../../helpers/flow.js';
import { expectedTree, sha256File, treeOf, waitFor } from '../../helpers/downloads.js';
import {
  connectionAttached,
  gatewayConnection,
  gatewayRecord,
  portalPackage,
  portalWith,
  registerGateway,
  sendToPortal,
  settledTransfers,
  type TreeEntry,
} from '../../helpers/gateway.js';
import { createHash } from 'node:crypto';

const sha = (b: Buffer) => createHash('sha256').update(b).digest('hex');
const FLAGS = { 'jobs-poll-ms': '50', 'cloud-retry-base-ms': '50', 'cloud-attempts': '2', 'gateway-recheck-ms': '200', 'gateway-heartbeat-ms': '500' };

let svc: TestService;
let owner: Actor;
let agent: TestAgent;
let tmp: string;

beforeAll(async () => {
  svc = await startTestService(FLAGS);
  owner = await ownerActor(svc);
  agent = await startTestAgent(svc);
  tmp = await fs.mkdtemp(path.join(os.tmpdir(), 'ferry-gateway-'));
});
afterAll(async () => {
  await agent?.close();
  await svc?.close();
  if (tmp) await fs.rm(tmp, { recursive: true, force: true });
});

const FILES: TreeEntry[] = [
  { path: '', name: 'read me.txt', data: Buffer.from('delivered through the gateway\n') },
  { path: 'audio/day1', name: 'boom.wav', data: randomBytes(70_000) },
  { path: 'audio', name: 'empty.wav', data: Buffer.alloc(0) },
  // Past the gateway's 8 MiB range: fetched in several ranges.
  { path: 'big', name: 'master.mov', data: randomBytes(19 * MiB + 4321) },
];

/** Every folder (with a trailing /) and file under `dir`, as absolute paths. */
async function everything(dir: string): Promise<string[]> {
  const out: string[] = [];
  for (const e of await fs.readdir(dir, { withFileTypes: true })) {
    const p = path.join(dir, e.name);
    if (e.isDirectory()) out.push(`${p}/`, ...(await everything(p)));
    else out.push(p);
  }
  return out;
}


describe('a storage gateway with permissions w', () => {
  it('connects out, receives a Portal Package into its root byte-identical, and shows disconnected once unregistered', async () => {
    const root = path.join(tmp, 'nas');
    await fs.mkdir(root);
    const conn = await gatewayConnection(svc, owner, { name: 'Edit NAS', target_directory_id: 'incoming' });
    expect(conn.body).toMatchObject({ provider: 'storage_gateway', direction: 'svc_to_cloud', state: 'disconnected', last_error: null, gateway: { connected: false } });

    const events = await openEventStream(agent.url, { query: 'types=gateway' });
    const g = await registerGateway(agent.url, { id: conn.id, name: 'Edit NAS', permissions: 'w', root_path: root, secret: conn.secret });
    expect(g).toMatchObject({ id: conn.id, name: 'Edit NAS', permissions: 'w', root_path: root, secret: '********', user_id: null, group_id: null, service_url: svc.url });
    await events.next((m) => m.json?.id === conn.id && m.json?.state === 'connected');

    const shown = await connectionAttached(svc, owner, conn.id, true);
    expect(shown).toMatchObject({ state: 'ok', last_error: null, gateway: { connected: true, permissions: 'w' } });
    expect(typeof shown.gateway.connected_at).toBe('string');
    // The secret is shown once: never in a read.
    expect(shown.secret).toBeUndefined();

    const portal = await portalWith(svc, owner, [{ id: conn.id, target_action: 'transfer' }]);
    const pkg = await sendToPortal(svc, portal.id, 'Day 1: rushes', FILES);
    const [t] = await settledTransfers(svc, owner, pkg.id);
    const folder = `incoming/Day 1_ rushes (${pkg.id})`;
    expect(t, JSON.stringify(t)).toMatchObject({
      state: 'complete',
      direction: 'svc_to_cloud',
      trigger: 'portal',
      files_total: FILES.length,
      files_done: FILES.length,
      bytes_total: FILES.reduce((n, f) => n + f.data.length, 0),
      bytes_done: FILES.reduce((n, f) => n + f.data.length, 0),
      destination: `${folder}/`,
    });
    expect(await treeOf(path.join(root, ...folder.split('/')))).toEqual(expectedTree(FILES));
    // Nothing but the delivery under the root: no partial file left.
    expect(await fs.readdir(root)).toEqual(['incoming']);

    const rec = await gatewayRecord(agent.url, conn.id);
    expect(rec.state).toBe('connected');
    expect(rec.transfers[0]).toMatchObject({ transfer_id: t.id, direction: 'svc_to_cloud', package_id: pkg.id, state: 'complete', files_done: FILES.length, folder: path.join(root, 'incoming', `Day 1_ rushes (${pkg.id})`) });
    await events.next((m) => m.json?.id === conn.id && m.json?.transfers?.[0]?.state === 'complete');
    // The root's disk is listed as the gateway's, and the delivery's writes (this agent's only ones) took its writer slots.
    const disk = (await call(agent.url, 'GET', '/settings/disks')).body.disks.find((d: any) => d.used_for.includes('storage_gateways'));
    const status = (await call(agent.url, 'GET', '/settings/disk_status')).body.disks.find((d: any) => d.disk_id === disk?.disk_id);
    expect(status?.writes, JSON.stringify(status)).toBeGreaterThan(0);

    const un = await call(agent.url, 'POST', '/storage_gateway/unregister', { body: { id: conn.id } });
    expect(un.status, JSON.stringify(un.body)).toBe(200);
    expect(un.body).toMatchObject({ id: conn.id, state: 'disconnected' });
    await events.next((m) => m.json?.id === conn.id && m.json?.deleted === true);
    events.close();
    const after = await connectionAttached(svc, owner, conn.id, false);
    expect(after.state).toBe('disconnected');
    expect(await gatewayRecord(agent.url, conn.id)).toBeUndefined();
    // Delivered files stay.
    expect(await treeOf(path.join(root, ...folder.split('/')))).toEqual(expectedTree(FILES));
  });

  it('writes nothing outside its root for a Package whose paths try to leave it; the rest arrives and the transfer says why', async () => {
    const base = path.join(tmp, 'escape');
    const root = path.join(base, 'root');
    await fs.mkdir(root, { recursive: true });
    const conn = await gatewayConnection(svc, owner, { name: 'Escape NAS' });
    await registerGateway(agent.url, { id: conn.id, name: 'Escape NAS', permissions: 'w', root_path: root, secret: conn.secret });
    await connectionAttached(svc, owner, conn.id, true);
    const portal = await portalWith(svc, owner, [{ id: conn.id, target_action: 'transfer' }]);

    // The service refuses such paths, so they are written into its database as a compromised service would hold them.
    const pkg = await portalPackage(svc, portal.id, 'Escape');
    const files: { rel: [string, string]; evil?: [string, string]; data: Buffer }[] = [
      { rel: ['', 'fine.txt'], data: Buffer.from('fine\n') },
      { rel: ['', 'a1.txt'], evil: ['../../../..', 'escaped-a.txt'], data: Buffer.from('a\n') },
      { rel: ['', 'b1.txt'], evil: ['sub/../../..', 'escaped-b.txt'], data: Buffer.from('b\n') },
      { rel: ['', 'c1.txt'], evil: ['', '..'], data: Buffer.from('c\n') },
      // An absolute path is taken below the Package's folder, as every path is.
      { rel: ['', 'd1.txt'], evil: ['/abs/olute', 'inside-d.txt'], data: Buffer.from('d\n') },
      { rel: ['', 'e1.txt'], evil: ['x\\..\\..\\..', 'escaped-e.txt'], data: Buffer.from('e\n') },
    ];
    for (const f of files) {
      const reg = await register(svc, pkg, { name: f.rel[1], path: f.rel[0], size: f.data.length });
      const uploadId = await startUpload(reg.create_blueprint);
      const parts = await putParts(svc, pkg, reg.file.id, uploadId, f.data);
      const fin = await finalizeFile(svc, pkg, reg.file.id, uploadId, parts, f.data.length);
      expect(fin.status, JSON.stringify(fin.body)).toBe(204);
      if (f.evil) await svc.ctx.db.updateTable('files').set({ path: f.evil[0], name: f.evil[1] }).where('id', '=', reg.file.id).execute();
    }
    await finalizePackage(svc, pkg);
    const [t] = await settledTransfers(svc, owner, pkg.id);
    expect(t.state).toBe('error');
    expect(t.error).toMatch(/refused 4 file\(s\)/);
    expect(t.files_done).toBe(2);

    // Only the two files, where they belong; nothing anywhere else under the test's folder.
    const pkgDir = path.join(root, `Escape (${pkg.id})`);
    expect((await everything(base)).sort()).toEqual(
      [`${root}/`, `${pkgDir}/`, path.join(pkgDir, 'fine.txt'), `${pkgDir}/abs/`, `${pkgDir}/abs/olute/`, path.join(pkgDir, 'abs', 'olute', 'inside-d.txt')].sort(),
    );
    for (const name of ['escaped-a.txt', 'escaped-b.txt', 'escaped-e.txt']) {
      for (const dir of [tmp, os.tmpdir(), path.dirname(tmp), '/']) expect(await fs.stat(path.join(dir, name)).catch(() => null)).toBeNull();
    }
    const rec = await gatewayRecord(agent.url, conn.id);
    expect(rec.transfers[0]).toMatchObject({ transfer_id: t.id, state: 'error', files_done: 2 });
    await call(agent.url, 'POST', '/storage_gateway/unregister', { body: { id: conn.id } });
  });

  it('does not follow a symbolic link planted under its root', async () => {
    const base = path.join(tmp, 'links');
    const root = path.join(base, 'root');
    const outside = path.join(base, 'outside');
    await fs.mkdir(root, { recursive: true });
    await fs.mkdir(outside);
    const conn = await gatewayConnection(svc, owner, { name: 'Linked NAS', target_directory_id: 'drop' });
    await registerGateway(agent.url, { id: conn.id, name: 'Linked NAS', permissions: 'w', root_path: root, secret: conn.secret });
    await connectionAttached(svc, owner, conn.id, true);
    // The target folder is a link to a folder outside the root.
    await fs.symlink(outside, path.join(root, 'drop'));
    const portal = await portalWith(svc, owner, [{ id: conn.id, target_action: 'transfer' }]);
    const pkg = await sendToPortal(svc, portal.id, 'Linked', [{ path: '', name: 'x.txt', data: Buffer.from('x\n') }]);
    const [t] = await settledTransfers(svc, owner, pkg.id);
    expect(t.state).toBe('error');
    expect(t.error).toMatch(/refused 1 file/);
    expect(await fs.readdir(outside)).toEqual([]);
    await call(agent.url, 'POST', '/storage_gateway/unregister', { body: { id: conn.id } });
  });
});

describe('permissions', () => {
  it('r refuses deliveries: the transfer ends in error saying the gateway is read-only, nothing is written', async () => {
    const root = path.join(tmp, 'read-only');
    await fs.mkdir(root);
    const conn = await gatewayConnection(svc, owner, { name: 'Archive' });
    await registerGateway(agent.url, { id: conn.id, name: 'Archive', permissions: 'r', root_path: root, secret: conn.secret });
    const shown = await connectionAttached(svc, owner, conn.id, true);
    expect(shown.gateway.permissions).toBe('r');
    const portal = await portalWith(svc, owner, [{ id: conn.id, target_action: 'transfer' }]);
    const pkg = await sendToPortal(svc, portal.id, 'Refused', [{ path: '', name: 'x.txt', data: Buffer.from('x\n') }]);
    const [t] = await settledTransfers(svc, owner, pkg.id);
    expect(t.state).toBe('error');
    expect(t.error).toMatch(/read-only \(permissions r\)/);
    expect(t.attempts).toBe(1);
    expect(await fs.readdir(root)).toEqual([]);
    const after = await connectionAttached(svc, owner, conn.id, true);
    expect(after).toMatchObject({ state: 'error', last_error: t.error });
    await call(agent.url, 'POST', '/storage_gateway/unregister', { body: { id: conn.id } });
  });
});

describe('a transfer raised while no gateway is connected', () => {
  it('waits, queued, and is delivered once the gateway connects', async () => {
    const root = path.join(tmp, 'late');
    await fs.mkdir(root);
    const conn = await gatewayConnection(svc, owner, { name: 'Late NAS' });
    const portal = await portalWith(svc, owner, [{ id: conn.id, target_action: 'transfer' }]);
    const data = randomBytes(100_000);
    const pkg = await sendToPortal(svc, portal.id, 'Early', [{ path: 'a', name: 'early.bin', data }]);
    const waiting = await waitFor('the transfer to wait for its gateway', async () => {
      const r = await call(svc.url, 'GET', `/v1/packages/${pkg.id}/transfers`, { headers: owner.h });
      const t = r.body.records[0];
      return t?.state === 'queued' && /waiting for the storage gateway/.test(t.error ?? '') ? t : undefined;
    });
    expect(waiting.attempts).toBeLessThanOrEqual(1);
    await registerGateway(agent.url, { id: conn.id, name: 'Late NAS', permissions: 'w', root_path: root, secret: conn.secret });
    const [t] = await settledTransfers(svc, owner, pkg.id);
    expect(t.state, JSON.stringify(t)).toBe('complete');
    expect(await sha256File(path.join(root, `Early (${pkg.id})`, 'a', 'early.bin'))).toBe(sha(data));
    await call(agent.url, 'POST', '/storage_gateway/unregister', { body: { id: conn.id } });
  });
});
