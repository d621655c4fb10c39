// Storage gateway tests share these steps: a storage_gateway connection on the
// service (with the secret of its create answer), a Portal that delivers to it,
// a Portal Package, the transfers of a Package, and the connection's state as
// the service shows it.
import { expect } from 'vitest';
import { call, type TestService } from './hosted.js';
import type { Actor } from './auth.js';
import { uploadFile, finalizePackage, type Pkg } from './flow.js';
import { waitFor } from './downloads.js';

export interface GatewayConnection {
  id: string;
  secret: string;
  body: any;
}

export async function gatewayConnection(svc: TestService, owner: Actor, body: Record<string, unknown> = {}): Promise<GatewayConnection> {
  const r = await call(svc.url, 'POST', `/v1/teams/${owner.teamId}/cloud_connections`, {
    headers: owner.h,
    body: { name: 'NAS', provider: 'storage_gateway', authorization: {}, ...body },
  });
  expect(r.status, JSON.stringify(r.body)).toBe(201);
  expect(typeof r.body.secret).toBe('string');
  return { id: r.body.id, secret: r.body.secret, body: r.body };
}

export async function getConnection(svc: TestService, owner: Actor, id: string): Promise<any> {
  const r = await call(svc.url, 'GET', `/v1/cloud_connections/${id}`, { headers: owner.h });
  expect(r.status, JSON.stringify(r.body)).toBe(200);
  return r.body;
}

/** Waits until the service shows the connection's gateway attached (true) or not (false). */
export const connectionAttached = (svc: TestService, owner: Actor, id: string, attached: boolean) =>
  waitFor(`the connection ${id} to be ${attached ? 'connected' : 'disconnected'}`, async () => {
    const c = await getConnection(svc, owner, id);
    return c.gateway.connected === attached ? c : undefined;
  });

let seq = 0;
export async function portalWith(svc: TestService, owner: Actor, connections: unknown[]): Promise<any> {
  const r = await call(svc.url, 'POST', `/v1/teams/${owner.teamId}/portals`, {
    headers: owner.h,
    body: { name: 'To the NAS', subdomain: `to-the-nas-${process.pid}-${++seq}`, active: true, configure_cloud_connections: true, cloud_connections: connections },
  });
  expect(r.status, JSON.stringify(r.body)).toBe(201);
  return r.body;
}

export async function portalPackage(svc: TestService, portalId: string, name: string): Promise<Pkg> {
  const r = await call(svc.url, 'POST', `/v1/portals/${portalId}/packages`, { body: { name, description: '', sender: 'uploader@example.com' } });
  expect(r.status, JSON.stringify(r.body)).toBe(201);
  return { id: r.body.id, token: r.body.access_token, h: { 'x-package-token': r.body.access_token }, body: r.body };
}

export interface TreeEntry { path: string; name: string; data: Buffer }

/** A Portal Package with these files, finalized (which raises its transfers). */
export async function sendToPortal(svc: TestService, portalId: string, name: string, files: TreeEntry[]): Promise<Pkg> {
  const pkg = await portalPackage(svc, portalId, name);
  for (const f of files) await uploadFile(svc, pkg, f.name, f.path, f.data);
  await finalizePackage(svc, pkg);
  return pkg;
}

export async function transfersOf(svc: TestService, owner: Actor, packageId: string): Promise<any[]> {
  const r = await call(svc.url, 'GET', `/v1/packages/${packageId}/transfers`, { headers: owner.h });
  expect(r.status, JSON.stringify(r.body)).toBe(200);
  return r.body.records;
}

/** The Package's transfers once all of them (`count`) have ended. */
export const settledTransfers = (svc: TestService, owner: Actor, packageId: string, count = 1, tries = 1200) =>
  waitFor(
    `the transfers of ${packageId} to end`,
    async () => {
      const list = await transfersOf(svc, owner, packageId);
      return list.length === count && list.every((t) => t.state === 'complete' || t.state === 'error') ? list : undefined;
    },
    tries,
  );

/** Registers a gateway on the agent; expects 201. */
export async function registerGateway(agentUrl: string, body: Record<string, unknown>): Promise<any> {
  const r = await call(agentUrl, 'POST', '/storage_gateway/register', { body });
  expect(r.status, JSON.stringify(r.body)).toBe(201);
  return r.body;
}

export async function gatewayRecord(agentUrl: string, id: string): Promise<any> {
  const r = await call(agentUrl, 'GET', '/storage_gateway/list');
  expect(r.status, JSON.stringify(r.body)).toBe(200);
  return (r.body as any[]).find((g) => g.id === id);
}
