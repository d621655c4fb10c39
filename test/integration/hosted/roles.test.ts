// The Roles table of docs/hosted-api-notes/roles.md, row by row: what Owners and
// Admins may create and manage and a member may not (403, nothing written), and
// what every member may do.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, startTestService, type TestService } from '../../helpers/hosted.js';
import { newActor, teamActors, type Actor } from '../../helpers/auth.js';

let svc: TestService;
let owner: Actor;
let admin: Actor;
let member: Actor;
let memberMid: string;
/** A member in no Teamspace, whom the add-members row adds. */
let extraMid: string;
let n = 0;

beforeAll(async () => {
  // A webhook is written at 127.0.0.1 on purpose (never sent to): the outbound guard allows that address here.
  svc = await startTestService({ 'allow-private-targets': '127.0.0.1/32' });
  ({ owner, admin, member } = await teamActors(svc, 'roles'));
  const mid = async (a: Actor) => (await svc.ctx.db.selectFrom('memberships').select('id').where('user_id', '=', a.userId).executeTakeFirstOrThrow()).id;
  memberMid = await mid(member);
  extraMid = await mid(await newActor(svc, 'roles-extra@example.com', { teamId: owner.teamId, role: 'member' }));
});
afterAll(async () => svc?.close());

type Who = 'owner' | 'admin' | 'member';
const actor = (w: Who) => ({ owner, admin, member })[w];
const T = () => owner.teamId;
const uniq = () => `r${++n}`;

/** Makes the object a row acts on, as the owner, before the snapshot. */
const make = {
  portal: async () => (await call(svc.url, 'POST', `/v1/teams/${T()}/portals`, { headers: owner.h, body: { name: 'p', subdomain: `roles-${uniq()}` } })).body.id as string,
  /** A Teamspace the member is in (so that they see it and the refusal is about the role). */
  space: async () => (await call(svc.url, 'POST', `/v1/teams/${T()}/spaces`, { headers: owner.h, body: { name: uniq(), membership_ids: [memberMid] } })).body as { id: string; members: { id: string }[] },
  tag: async () => (await call(svc.url, 'POST', `/v1/teams/${T()}/tags`, { headers: owner.h, body: { name: uniq() } })).body.id as string,
  /** A Portal's custom metadata form (forms.md). */
  form: async () => (await call(svc.url, 'POST', `/v1/portals/${await make.portal()}/form`, { headers: owner.h, body: SHEET })).body.id as string,
  template: async () => (await call(svc.url, 'POST', `/v1/teams/${T()}/forms/templates`, { headers: owner.h, body: SHEET })).body.id as string,
  /** A Package that expired on 1 January 2000, for the bulk archive's range. */
  expired: async () => {
    const id = (await call(svc.url, 'POST', `/v1/teams/${T()}/packages`, { headers: owner.h, body: { name: 'old', description: '', recipients: [] } })).body.id as string;
    await svc.ctx.db.updateTable('packages').set({ state: 'expired', expiry: '2000-01-01T12:00:00.000Z' }).where('id', '=', id).execute();
    return id;
  },
};
const SHEET = { name: 'Sheet', delivery_formats: ['json'] };

interface Row { action: string; allowed: Who[]; ok: number; setup?: () => Promise<string>; send: (who: Actor, target: string) => Promise<{ status: number; body: any }> }
const req = (method: string, path: string, body?: unknown) => (who: Actor) => call(svc.url, method, path, { headers: who.h, ...(body === undefined ? {} : { body }) });
const OWNER_ADMIN: Who[] = ['owner', 'admin'];
const EVERYONE: Who[] = ['owner', 'admin', 'member'];

const ROWS: Row[] = [
  { action: 'create an API key', allowed: OWNER_ADMIN, ok: 201, send: (who) => call(svc.url, 'POST', `/v1/teams/${T()}/api_keys`, { headers: { 'x-user-token': who.userToken }, body: { name: 'k' } }) },
  { action: 'create a Portal', allowed: OWNER_ADMIN, ok: 201, send: (who) => req('POST', `/v1/teams/${T()}/portals`, { name: 'p', subdomain: `roles-${uniq()}` })(who) },
  { action: 'update a Portal', allowed: OWNER_ADMIN, ok: 200, setup: make.portal, send: (who, id) => req('PUT', `/v1/portals/${id}`, { name: 'q', subdomain: `roles-${uniq()}` })(who) },
  { action: 'delete a Portal', allowed: OWNER_ADMIN, ok: 204, setup: make.portal, send: (who, id) => req('DELETE', `/v1/portals/${id}`)(who) },
  { action: 'create a Teamspace', allowed: OWNER_ADMIN, ok: 201, send: (who) => req('POST', `/v1/teams/${T()}/spaces`, { name: uniq() })(who) },
  { action: 'rename a Teamspace', allowed: OWNER_ADMIN, ok: 200, setup: async () => (await make.space()).id, send: (who, id) => req('PUT', `/v1/spaces/${id}`, { name: uniq() })(who) },
  { action: 'delete a Teamspace', allowed: OWNER_ADMIN, ok: 204, setup: async () => (await make.space()).id, send: (who, id) => req('DELETE', `/v1/spaces/${id}`)(who) },
  { action: 'add Teamspace members', allowed: OWNER_ADMIN, ok: 201, setup: async () => (await make.space()).id, send: (who, id) => req('POST', `/v1/spaces/${id}/members`, { member_ids: [extraMid] })(who) },
  {
    action: 'remove a Teamspace member', allowed: OWNER_ADMIN, ok: 204,
    setup: async () => { const s = await make.space(); return `${s.id}/members/${s.members[0]!.id}`; },
    send: (who, path) => req('DELETE', `/v1/spaces/${path}`)(who),
  },
  { action: 'create a Tag', allowed: OWNER_ADMIN, ok: 201, send: (who) => req('POST', `/v1/teams/${T()}/tags`, { name: uniq() })(who) },
  { action: 'delete a Tag', allowed: OWNER_ADMIN, ok: 204, setup: make.tag, send: (who, id) => req('DELETE', `/v1/tags/${id}`)(who) },
  { action: 'create a filter', allowed: OWNER_ADMIN, ok: 201, send: (who) => req('POST', `/v1/teams/${T()}/filters`, { name: 'f', rules: [{ action: 'include', criterion: 'file_name', operator: 'regex_match', values: ['x'] }] })(who) },
  { action: 'create a custom webhook', allowed: OWNER_ADMIN, ok: 201, send: (who) => req('POST', `/v1/teams/${T()}/custom_webhooks`, { active: false, events: ['package.created'], method: 'POST', url: 'http://127.0.0.1:9/hook' })(who) },
  { action: 'bulk archive', allowed: OWNER_ADMIN, ok: 200, setup: make.expired, send: (who) => req('PUT', `/v1/teams/${T()}/archive`, { expiry_start: '2000-01-01T00:00:00Z', expiry_end: '2000-01-02T00:00:00Z' })(who) },
  { action: 'create a Package', allowed: EVERYONE, ok: 201, send: (who) => req('POST', `/v1/teams/${T()}/packages`, { name: 'p', description: '', recipients: [] })(who) },
  { action: 'read a Teamspace they are in', allowed: EVERYONE, ok: 200, setup: async () => (await make.space()).id, send: (who, id) => req('GET', `/v1/spaces/${id}`)(who) },
  { action: 'list Teamspaces', allowed: EVERYONE, ok: 200, send: (who) => req('GET', `/v1.1/teams/${T()}/spaces`)(who) },
  { action: 'list Tags', allowed: EVERYONE, ok: 200, send: (who) => req('GET', `/v1/teams/${T()}/tags`)(who) },
  { action: 'list Portals', allowed: EVERYONE, ok: 200, send: (who) => req('GET', `/v1.1/teams/${T()}/portals`)(who) },
  { action: 'create a metadata form', allowed: OWNER_ADMIN, ok: 201, setup: make.portal, send: (who, id) => req('POST', `/v1/portals/${id}/form`, SHEET)(who) },
  { action: 'update a metadata form', allowed: OWNER_ADMIN, ok: 200, setup: make.form, send: (who, id) => req('PUT', `/v1/metadata/forms/${id}`, { ...SHEET, disabled: true })(who) },
  { action: 'delete a metadata form', allowed: OWNER_ADMIN, ok: 204, setup: make.form, send: (who, id) => req('DELETE', `/v1/metadata/forms/${id}`)(who) },
  { action: 'create a form template', allowed: OWNER_ADMIN, ok: 201, send: (who) => req('POST', `/v1/teams/${T()}/forms/templates`, SHEET)(who) },
  { action: 'update a form template', allowed: OWNER_ADMIN, ok: 200, setup: make.template, send: (who, id) => req('PUT', `/v1/metadata/forms/templates/${id}`, { ...SHEET, name: 'Renamed' })(who) },
  { action: 'delete a form template', allowed: OWNER_ADMIN, ok: 204, setup: make.template, send: (who, id) => req('DELETE', `/v1/metadata/forms/templates/${id}`)(who) },
  { action: 'read a metadata form', allowed: EVERYONE, ok: 200, setup: make.form, send: (who, id) => req('GET', `/v1/metadata/forms/${id}`)(who) },
  { action: 'list form templates', allowed: EVERYONE, ok: 200, send: (who) => req('GET', `/v1/teams/${T()}/forms/templates`)(who) },
];

/** The tables a row could write. */
async function snapshot() {
  const db = svc.ctx.db;
  const all = async (t: 'api_keys' | 'portals' | 'teamspaces' | 'teamspace_members' | 'tags' | 'filters' | 'custom_webhooks' | 'metadata_forms' | 'packages') =>
    (await db.selectFrom(t).selectAll().execute()).map((r) => ({ ...r, last_request_at: undefined })).sort((a, b) => (a.id < b.id ? -1 : 1));
  return { keys: await all('api_keys'), portals: await all('portals'), spaces: await all('teamspaces'), members: await all('teamspace_members'), tags: await all('tags'), filters: await all('filters'), hooks: await all('custom_webhooks'), forms: await all('metadata_forms'), packages: await all('packages') };
}

/** Whether a row's request is meant to write (every row but the reads). */
const writes = (row: Row) => !/^(read|list) /.test(row.action);

describe.each(ROWS)('$action', (row) => {
  it.each(EVERYONE)('as %s', async (who) => {
    const target = (await row.setup?.()) ?? '';
    const before = await snapshot();
    const r = await row.send(actor(who), target);
    if (row.allowed.includes(who)) {
      expect(r.status, JSON.stringify(r.body)).toBe(row.ok);
      // The allowed request did what it says: a write changed a table, a read wrote nothing and answered something.
      if (writes(row)) expect(await snapshot()).not.toEqual(before);
      else {
        expect(await snapshot()).toEqual(before);
        expect(r.body).toBeTruthy();
      }
      return;
    }
    expect(r.status, JSON.stringify(r.body)).toBe(403);
    expect(r.body).toMatchObject({ code: 'forbidden', message: expect.any(String) });
    expect(await snapshot()).toEqual(before);
  });
});
