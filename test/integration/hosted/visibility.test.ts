// Who sees which Package (services/visibility.ts), on every route that lists or
// reads Packages: Owners and Admins see all; a member sees Packages with no
// Teamspace, those of their Teamspaces and their own, and a private Portal's only
// when in its Teamspace. A hidden Package answers 404 and nothing changes.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, startTestService, type TestService } from '../../helpers/hosted.js';
import { newActor, teamActors, type Actor } from '../../helpers/auth.js';
import { createPackage, finalizePackage, uploadFile } from '../../helpers/flow.js';
import { nowIso } from '../../../src/hosted/ids.js';

let svc: TestService;
let owner: Actor;
let admin: Actor;
let member: Actor;
let outsider: Actor;
const ids: Record<string, string> = {};
const fileIds: Record<string, string> = {};
let spaceX: string;
let spaceY: string;
const portals: Record<string, string> = {};
let connectionId: string;

const api = (method: string, path: string, who: Actor, body?: unknown) =>
  call(svc.url, method, path, { headers: who.h, ...(body === undefined ? {} : { body }) });
const membershipId = async (a: Actor) =>
  (await svc.ctx.db.selectFrom('memberships').select('id').where('user_id', '=', a.userId).where('team_id', '=', a.teamId).executeTakeFirstOrThrow()).id;

async function finalized(key: string, who: Actor, teamspace_id?: string) {
  const p = await createPackage(svc, who, { name: key, ...(teamspace_id ? { teamspace_id } : {}) });
  fileIds[key] = await uploadFile(svc, p, `${key}.txt`, '', Buffer.from(`bytes of ${key}`));
  await finalizePackage(svc, p);
  ids[key] = p.id;
}

async function portal(key: string, body: Record<string, unknown>) {
  const r = await api('POST', `/v1/teams/${owner.teamId}/portals`, admin, { name: key, subdomain: `vis-${key}`, active: true, ...body });
  expect(r.status, JSON.stringify(r.body)).toBe(201);
  portals[key] = r.body.id;
  // An anonymous upload: the Package takes the Portal's Teamspace.
  const p = await call(svc.url, 'POST', `/v1/portals/${r.body.id}/packages`, { body: { name: `via ${key}`, description: '', sender: 'someone@example.com' } });
  expect(p.status, JSON.stringify(p.body)).toBe(201);
  ids[key] = p.body.id;
  await svc.ctx.db.updateTable('packages').set({ state: 'finalized', finalized_at: nowIso() }).where('id', '=', p.body.id).execute();
}

beforeAll(async () => {
  svc = await startTestService();
  ({ owner, admin, member } = await teamActors(svc, 'vis'));
  outsider = await newActor(svc, 'vis-outsider@example.com', { teamId: owner.teamId, role: 'member' });
  const mk = async (name: string, who: Actor[]) => {
    const r = await api('POST', `/v1/teams/${owner.teamId}/spaces`, owner, { name, membership_ids: await Promise.all(who.map(membershipId)) });
    expect(r.status, JSON.stringify(r.body)).toBe(201);
    return r.body.id as string;
  };
  spaceX = await mk('X', [member]);
  spaceY = await mk('Y', [outsider]);
  await finalized('inX', owner, spaceX);
  await finalized('inY', owner, spaceY);
  await finalized('noSpace', owner);
  // The outsider sends into Y, then leaves it: their own Package stays theirs to see.
  await finalized('ownY', outsider, spaceY);
  const tm = await api('GET', `/v1/spaces/${spaceY}/members`, owner);
  expect((await api('DELETE', `/v1/spaces/${spaceY}/members/${tm.body[0].id}`, owner)).status).toBe(204);
  await portal('privx', { access_level: 'private', teamspace_id: spaceX });
  await portal('privnone', { access_level: 'private' });
  await portal('regular', {});
  // A connection and one transfer per Package, written directly (delivery is tested elsewhere).
  connectionId = 'ccn_vis';
  const now = nowIso();
  await svc.ctx.db.insertInto('cloud_connections').values({
    id: connectionId, team_id: owner.teamId, name: 'vis', provider: 's3', direction: 'svc_to_cloud', credentials: '{}', target_directory_id: null,
    source_directory_ids: '[]', upload_transfer_manifest: 0, state: 'ok', last_error: null, deleted_at: null, created_at: now, updated_at: now,
    gateway_secret_hash: null, gateway_session: null, gateway_connected_at: null, gateway_info: null,
  }).execute();
  for (const [key, id] of Object.entries(ids)) {
    await svc.ctx.db.insertInto('cloud_transfers').values({
      id: `ctr_${key}`, team_id: owner.teamId, package_id: id, cloud_connection_id: connectionId, direction: 'svc_to_cloud', raised_by: 'manual',
      state: 'complete', error: null, notify_email: null, filter_rules: null, requested_files: null, planned: 1, files_total: 1, files_done: 1,
      bytes_total: 1, bytes_done: 1, files_filtered_out: 0, attempts: 1, destination: `bucket/${key}/`, manifest_key: null, created_at: now, updated_at: now,
    }).execute();
  }
});
afterAll(async () => svc?.close());

const ALL = ['inX', 'inY', 'noSpace', 'ownY', 'privx', 'privnone', 'regular'];
const SEES: Record<string, string[]> = {
  owner: ALL,
  admin: ALL,
  member: ['inX', 'noSpace', 'privx', 'regular'],
  outsider: ['noSpace', 'ownY', 'regular'],
};
const actor = (name: string) => ({ owner, admin, member, outsider })[name as 'owner']!;
const keysOf = (records: { id: string }[]) => records.map((r) => Object.keys(ids).find((k) => ids[k] === r.id)!).sort();

describe.each(Object.keys(SEES))('as %s', (name) => {
  it('the Team Package list shows exactly the Packages this role may see', async () => {
    const r = await api('GET', `/v1.1/teams/${owner.teamId}/packages?status=new,finalized`, actor(name));
    expect(r.status).toBe(200);
    expect(keysOf(r.body.records)).toEqual([...SEES[name]!].sort());
    expect(r.body.metadata.total).toBe(SEES[name]!.length);
  });

  it('the /v1.1 Portal Package lists show only visible Packages', async () => {
    for (const key of ['privx', 'privnone', 'regular']) {
      const r = await api('GET', `/v1.1/portals/${portals[key]}/packages`, actor(name));
      expect(r.status).toBe(200);
      expect(keysOf(r.body.records)).toEqual(SEES[name]!.includes(key) ? [key] : []);
    }
  });

  it("the connection's transfer list shows only transfers of visible Packages", async () => {
    const r = await api('GET', `/v1/cloud_connections/${connectionId}/transfers`, actor(name));
    expect(r.status).toBe(200);
    expect(keysOf(r.body.records.map((t: { package_id: string }) => ({ id: t.package_id })))).toEqual([...SEES[name]!].sort());
  });

  it.each(ALL)('Package %s: every read and write route answers by the same rule', async (key) => {
    const who = actor(name);
    const id = ids[key]!;
    const visible = SEES[name]!.includes(key);
    const before = await svc.ctx.db.selectFrom('packages').selectAll().where('id', '=', id).executeTakeFirstOrThrow();
    const reads: [string, string][] = [
      ['GET', `/v1/packages/${id}`],
      ['GET', `/v1/packages/${id}/files`],
      ['GET', `/v1/packages/${id}/links`],
      ['GET', `/v1/packages/${id}/transfers`],
      ['GET', `/v1/packages/${id}/transfers/ctr_${key}`],
    ];
    if (fileIds[key]) {
      reads.push(['GET', `/v1/packages/${id}/files/${fileIds[key]}/download`], ['GET', `/v1/packages/${id}/zip/zip_windows`]);
    }
    for (const [m, path] of reads) {
      const r = await api(m, path, who);
      expect(r.status, `${m} ${path}`).toBe(visible ? 200 : 404);
    }
    if (!visible) {
      const writes: [string, string, unknown][] = [
        ['PUT', `/v1/packages/${id}`, { name: 'stolen' }],
        ['PUT', `/v1/packages/${id}/expiry`, { expiry: '2099-01-01T00:00:00Z' }],
        ['POST', `/v1/packages/${id}/links`, {}],
        ['POST', `/v1/packages/${id}/transfer`, { cloud_connection_id: connectionId }],
        ['DELETE', `/v1/packages/${id}`, undefined],
        ['PUT', `/v1/packages/${id}/archive`, undefined],
      ];
      for (const [m, path, body] of writes) {
        const r = await api(m, path, who, body);
        expect(r.status, `${m} ${path}`).toBe(404);
        expect(r.body.code).toBe('not_found');
      }
      expect(await svc.ctx.db.selectFrom('packages').selectAll().where('id', '=', id).executeTakeFirstOrThrow()).toEqual(before);
      expect(await svc.ctx.db.selectFrom('links').select('id').where('package_id', '=', id).execute()).toEqual([]);
    }
  });
});

describe('Teamspaces and private Portals', () => {
  it('a private Portal\'s Package takes the Portal\'s Teamspace', async () => {
    const r = await api('GET', `/v1/packages/${ids.privx}`, owner);
    expect(r.body.teamspace).toEqual({ id: spaceX, name: 'X' });
    expect((await api('GET', `/v1/packages/${ids.privnone}`, owner)).body.teamspace).toBeNull();
  });

  it('the Teamspace Package list holds the Teamspace\'s visible Packages; a member outside it gets 404', async () => {
    const x = await api('GET', `/v1.1/spaces/${spaceX}/packages`, member);
    expect(keysOf(x.body)).toEqual(['inX', 'privx']);
    expect((await api('GET', `/v1.1/spaces/${spaceX}/packages`, outsider)).status).toBe(404);
    expect(keysOf((await api('GET', `/v1.1/spaces/${spaceY}/packages`, admin)).body)).toEqual(['inY', 'ownY']);
  });

  it('the teamspaces filter of the Team and Portal lists narrows within what the caller may see', async () => {
    expect(keysOf((await api('GET', `/v1.1/teams/${owner.teamId}/packages?teamspaces=${spaceX},${spaceY}`, owner)).body.records)).toEqual(['inX', 'inY', 'ownY', 'privx']);
    expect(keysOf((await api('GET', `/v1.1/teams/${owner.teamId}/packages?teamspaces=${spaceX},${spaceY}`, member)).body.records)).toEqual(['inX', 'privx']);
    expect(keysOf((await api('GET', `/v1.1/portals/${portals.privx}/packages?teamspaces=${spaceY}`, owner)).body.records)).toEqual([]);
    expect(keysOf((await api('GET', `/v1.1/portals/${portals.privx}/packages?teamspaces=${spaceX}`, member)).body.records)).toEqual(['privx']);
  });

  it('adding a member to a Teamspace opens its Packages to them at once; making a Portal private closes its Packages', async () => {
    expect((await api('GET', `/v1/packages/${ids.inX}`, outsider)).status).toBe(404);
    const add = await api('POST', `/v1/spaces/${spaceX}/members`, admin, { member_ids: [await membershipId(outsider)] });
    expect(add.status).toBe(201);
    expect((await api('GET', `/v1/packages/${ids.inX}`, outsider)).status).toBe(200);
    expect((await api('GET', `/v1/packages/${ids.privx}`, outsider)).status).toBe(200);
    await api('DELETE', `/v1/spaces/${spaceX}/members/${add.body[0].id}`, admin);
    expect((await api('GET', `/v1/packages/${ids.inX}`, outsider)).status).toBe(404);

    expect((await api('GET', `/v1/packages/${ids.regular}`, member)).status).toBe(200);
    const put = await api('PUT', `/v1/portals/${portals.regular}`, admin, { name: 'regular', subdomain: 'vis-regular', access_level: 'private' });
    expect(put.status).toBe(200);
    expect((await api('GET', `/v1/packages/${ids.regular}`, member)).status).toBe(404);
    expect((await api('GET', `/v1/packages/${ids.regular}`, admin)).status).toBe(200);
    await api('PUT', `/v1/portals/${portals.regular}`, admin, { name: 'regular', subdomain: 'vis-regular', access_level: 'regular' });
  });

  it('a package token is its own grant: the Teamspace rule does not narrow it', async () => {
    const p = await createPackage(svc, owner, { name: 'token', teamspace_id: spaceY });
    expect((await api('GET', `/v1/packages/${p.id}`, member)).status).toBe(404);
    expect((await call(svc.url, 'GET', `/v1/packages/${p.id}`, { headers: p.h })).status).toBe(200);
  });

  // Last: it deletes the private Portals.
  it("deleting a private Portal keeps its Packages private: Owners, Admins and the Package's Teamspace only", async () => {
    for (const key of ['privnone', 'privx']) expect((await api('DELETE', `/v1/portals/${portals[key]}`, admin)).status).toBe(204);
    const status = async (key: string, who: Actor) => (await api('GET', `/v1/packages/${ids[key]}`, who)).status;
    expect([await status('privnone', admin), await status('privnone', member), await status('privnone', outsider)]).toEqual([200, 404, 404]);
    expect([await status('privx', owner), await status('privx', member), await status('privx', outsider)]).toEqual([200, 200, 404]);
    const listed = await api('GET', `/v1.1/teams/${owner.teamId}/packages`, member);
    expect(keysOf(listed.body.records)).toEqual(['inX', 'noSpace', 'privx', 'regular']);
  });
});
