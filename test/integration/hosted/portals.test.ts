// Portal management (create, update, get, list, delete) and the public view by
// subdomain: each route's success, its refusals (no credential, another Team,
// a member on owner/admin routes, access codes, inactive Portals), and bad input
// that answers 400 and changes nothing.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, startTestService, type TestService } from '../../helpers/hosted.js';
import { newActor, teamActors, type Actor } from '../../helpers/auth.js';

let svc: TestService;
let owner: Actor;
let admin: Actor;
let member: Actor;
let stranger: Actor;

beforeAll(async () => {
  svc = await startTestService();
  ({ owner, admin, member, stranger } = await teamActors(svc, 'portal'));
});
afterAll(async () => svc?.close());

let seq = 0;
const sub = (p = 'portal') => `${p}-${++seq}`;
const create = (who: Actor, body: Record<string, unknown>) => call(svc.url, 'POST', `/v1/teams/${who.teamId}/portals`, { headers: who.h, body });
async function made(body: Record<string, unknown> = {}, who: Actor = owner) {
  const r = await create(who, { name: 'Dailies', subdomain: sub(), ...body });
  expect(r.status, JSON.stringify(r.body)).toBe(201);
  return r.body;
}
const row = (id: string) => svc.ctx.db.selectFrom('portals').selectAll().where('id', '=', id).executeTakeFirst();
const count = async () => Number((await svc.ctx.db.selectFrom('portals').select((eb) => eb.fn.countAll().as('n')).executeTakeFirstOrThrow()).n);
const tagCount = async () => Number((await svc.ctx.db.selectFrom('tags').select((eb) => eb.fn.countAll().as('n')).executeTakeFirstOrThrow()).n);
const code = (c: string) => ({ 'x-access-code': encodeURIComponent(c) });

describe('POST /v1/teams/{team_id}/portals', () => {
  it('creates the full Portal; the access code and download password are stored hashed and never returned', async () => {
    const r = await create(owner, {
      name: 'Client uploads', subdomain: 'Acme-Uploads', message: 'Drop your rushes here', access_code: 'open sesame',
      active: true, recipients: ['Ann@Example.com', 'ann@example.com', 'bob@example.com'], download_password: 'dl-secret',
      custom_expiry_days: 14, tag: { name: 'clients' }, access_level: 'private', package_size_restriction_enabled: true,
      max_package_size: 1000, max_file_size: 500, max_file_count: 3, file_type_restriction_enabled: true, file_types: ['.MOV', '.mov', '.wav'],
      expiry_enabled: true, expiry: '2099-01-01T00:00:00Z', package_name_format: '^PRJ-\\d+', user_authentication_required: false,
    });
    expect(r.status, JSON.stringify(r.body)).toBe(201);
    expect(r.body).toMatchObject({
      team_id: owner.teamId, name: 'Client uploads', subdomain: 'acme-uploads', message: 'Drop your rushes here', has_access_code: true,
      active: true, recipients: ['ann@example.com', 'bob@example.com'], has_download_password: true, custom_expiry_days: 14,
      tag: { name: 'clients' }, access_level: 'private', package_size_restriction_enabled: true, max_package_size: 1000, max_file_size: 500,
      max_file_count: 3, file_type_restriction_enabled: true, file_types: ['.mov', '.wav'], expiry_enabled: true,
      expiry: '2099-01-01T00:00:00.000Z', package_name_format: '^PRJ-\\d+', user_authentication_required: false,
    });
    expect(r.body.id).toMatch(/^prt_/);
    expect(r.body).not.toHaveProperty('access_code');
    expect(r.body).not.toHaveProperty('download_password');
    const stored = (await row(r.body.id))!;
    expect(stored.access_code_hash).toMatch(/^scrypt\$/);
    expect(stored.access_code_hash).not.toContain('open sesame');
    expect(stored.download_password_hash).toMatch(/^scrypt\$/);
  });

  it('defaults: inactive, regular access, no code, no limits', async () => {
    const p = await made();
    expect(p).toMatchObject({
      message: '', has_access_code: false, active: false, recipients: [], has_download_password: false, custom_expiry_days: 0, tag: null,
      access_level: 'regular', package_size_restriction_enabled: false, max_package_size: null, file_types: [], expiry: null,
      package_name_format: '', user_authentication_required: false,
    });
  });

  it('admins may create, with an API key or a user token', async () => {
    expect((await create(admin, { name: 'A', subdomain: sub() })).status).toBe(201);
    const r = await call(svc.url, 'POST', `/v1/teams/${owner.teamId}/portals`, { headers: { 'x-user-token': admin.userToken }, body: { name: 'B', subdomain: sub() } });
    expect(r.status).toBe(201);
  });

  it('refuses members (403), other Teams (404) and missing credentials (401), creating nothing', async () => {
    const before = await count();
    expect((await create(member, { name: 'M', subdomain: sub() })).status).toBe(403);
    const other = await call(svc.url, 'POST', `/v1/teams/${owner.teamId}/portals`, { headers: stranger.h, body: { name: 'S', subdomain: sub() } });
    expect(other.status).toBe(404);
    expect((await call(svc.url, 'POST', `/v1/teams/${owner.teamId}/portals`, { body: { name: 'N', subdomain: sub() } })).status).toBe(401);
    expect(await count()).toBe(before);
  });

  it('answers 409 for a subdomain already taken, in any letter case, and by another Team', async () => {
    await made({ subdomain: 'taken-one' });
    const before = await count();
    for (const [who, s] of [[owner, 'taken-one'], [owner, 'TAKEN-ONE'], [stranger, 'taken-one']] as const) {
      const r = await create(who, { name: 'X', subdomain: s });
      expect(r.status).toBe(409);
      expect(r.body).toMatchObject({ code: 'subdomain_taken' });
    }
    expect(await count()).toBe(before);
  });

  const bad: [string, Record<string, unknown>][] = [
    ['no name', { name: undefined }],
    ['no subdomain', { subdomain: undefined }],
    ['empty name', { name: '' }],
    ['a NUL byte in the name', { name: 'a\u0000b' }],
    ['a subdomain with a dot', { subdomain: 'a.b' }],
    ['a subdomain with an underscore', { subdomain: 'a_b' }],
    ['a subdomain starting with a hyphen', { subdomain: '-ab' }],
    ['a subdomain of 64 characters', { subdomain: 'a'.repeat(64) }],
    ['custom_expiry_days below -1', { custom_expiry_days: -2 }],
    ['custom_expiry_days above 65535', { custom_expiry_days: 65536 }],
    ['a malformed recipient', { recipients: ['not-an-email'] }],
    ['more recipients than the Team allows', { recipients: Array.from({ length: 51 }, (_, i) => `r${i}@example.com`) }],
    ['an invalid package_name_format', { package_name_format: '(unclosed' }],
    ['a file type without its dot', { file_types: ['mov'] }],
    ['file types enabled with none listed', { file_type_restriction_enabled: true, file_types: [] }],
    ['expiry enabled without an expiry', { expiry_enabled: true }],
    ['a malformed expiry', { expiry: 'tomorrow' }],
    ['has_access_code without a code', { has_access_code: true }],
    ['an empty access code', { access_code: '' }],
    ['an unknown access_level', { access_level: 'public' }],
    ['a zero max_file_size', { max_file_size: 0 }],
    ['a string for active', { active: 'yes' }],
  ];
  it.each(bad)('answers 400 for %s and creates nothing, not even the tag', async (_what, patch) => {
    const before = [await count(), await tagCount()];
    const body = { name: 'Bad', subdomain: sub(), tag: { name: `never-${seq}` }, ...patch };
    const r = await create(owner, body);
    expect(r.status, JSON.stringify(r.body)).toBe(400);
    expect(r.body).toHaveProperty('code');
    expect(r.body).toHaveProperty('message');
    expect([await count(), await tagCount()]).toEqual(before);
  });
});

describe('PUT /v1/portals/{id}', () => {
  it('a GET-modify-PUT round trip changes what was modified and keeps the access code', async () => {
    const p = await made({ access_code: 'k3y/ü', active: true, tag: { name: 'keep-me' }, recipients: ['x@example.com'] });
    const got = (await call(svc.url, 'GET', `/v1/portals/${p.id}`, { headers: owner.h })).body;
    const r = await call(svc.url, 'PUT', `/v1/portals/${p.id}`, { headers: admin.h, body: { ...got, name: 'Renamed', message: 'hi' } });
    expect(r.status, JSON.stringify(r.body)).toBe(200);
    expect(r.body).toMatchObject({ ...got, name: 'Renamed', message: 'hi', updated_at: r.body.updated_at });
    expect(r.body.tag).toMatchObject({ name: 'keep-me' });
    expect((await call(svc.url, 'GET', `/v1/portals/${p.id}`, { headers: code('k3y/ü') })).status).toBe(200);
  });

  it('sets a new access code, clears it with has_access_code false, and removes the tag when it is omitted', async () => {
    const p = await made({ access_code: 'first', active: true, tag: { name: 'gone-soon' } });
    const put = (body: Record<string, unknown>) => call(svc.url, 'PUT', `/v1/portals/${p.id}`, { headers: owner.h, body: { name: p.name, subdomain: p.subdomain, ...body } });
    expect((await put({ access_code: 'second' })).body).toMatchObject({ has_access_code: true, tag: null });
    expect((await call(svc.url, 'GET', `/v1/portals/${p.id}`, { headers: code('first') })).status).toBe(401);
    expect((await call(svc.url, 'GET', `/v1/portals/${p.id}`, { headers: code('second') })).status).toBe(200);
    expect((await put({ has_access_code: false })).body).toMatchObject({ has_access_code: false });
    expect((await row(p.id))!.access_code_hash).toBeNull();
  });

  it('refuses members (403), other Teams and unknown ids (404), a taken subdomain (409) and bad input (400), changing nothing', async () => {
    const p = await made();
    const other = await made();
    const before = await row(p.id);
    const put = (who: Actor, body: Record<string, unknown>, id = p.id) => call(svc.url, 'PUT', `/v1/portals/${id}`, { headers: who.h, body });
    expect((await put(member, { name: 'M', subdomain: p.subdomain })).status).toBe(403);
    expect((await put(stranger, { name: 'S', subdomain: p.subdomain })).status).toBe(404);
    expect((await put(owner, { name: 'U', subdomain: 'nowhere' }, 'prt_unknown')).status).toBe(404);
    expect((await put(owner, { name: 'T', subdomain: other.subdomain })).status).toBe(409);
    expect((await put(owner, { name: 'B', subdomain: p.subdomain, custom_expiry_days: -5 })).status).toBe(400);
    expect((await put(owner, { subdomain: p.subdomain })).status).toBe(400);
    expect(await row(p.id)).toEqual(before);
  });
});

describe('GET /v1/portals/{id}', () => {
  it('answers any member of the Team with the full Portal, and anyone with the access code of an active Portal with its public view', async () => {
    const p = await made({ access_code: 'sésame 42% & co', active: true, recipients: ['staff@example.com'], tag: { name: 'inbound' } });
    for (const who of [owner, admin, member]) expect((await call(svc.url, 'GET', `/v1/portals/${p.id}`, { headers: who.h })).body).toEqual(p);
    const byCode = await call(svc.url, 'GET', `/v1/portals/${p.id}`, { headers: code('sésame 42% & co') });
    expect(byCode.status).toBe(200);
    // The code opens uploads, not the Team's settings: no recipients, Team, tag, webhooks or connections.
    expect(byCode.body).toEqual((await call(svc.url, 'GET', `/v1/subdomains/portals/${p.subdomain}`)).body);
    for (const key of ['team_id', 'recipients', 'tag', 'custom_webhooks', 'cloud_connections', 'teamspace_id', 'active']) expect(byCode.body).not.toHaveProperty(key);
    // A Team credential wins over the code.
    expect((await call(svc.url, 'GET', `/v1/portals/${p.id}`, { headers: { ...owner.h, ...code('sésame 42% & co') } })).body).toEqual(p);
  });

  it('answers 401 for a wrong or missing code, 404 for another Team and for an inactive Portal', async () => {
    const p = await made({ access_code: 'right', active: true });
    const wrong = await call(svc.url, 'GET', `/v1/portals/${p.id}`, { headers: code('wrong') });
    expect(wrong.status).toBe(401);
    expect(wrong.body.code).toBe('invalid_access_code');
    expect((await call(svc.url, 'GET', `/v1/portals/${p.id}`)).status).toBe(401);
    expect((await call(svc.url, 'GET', `/v1/portals/${p.id}`, { headers: stranger.h })).status).toBe(404);
    const off = await made({ access_code: 'right', active: false });
    expect((await call(svc.url, 'GET', `/v1/portals/${off.id}`, { headers: code('right') })).status).toBe(404);
    const open = await made({ active: true });
    expect((await call(svc.url, 'GET', `/v1/portals/${open.id}`, { headers: code('anything') })).status).toBe(401);
  });
});

describe('GET /v1.1/teams/{team_id}/portals', () => {
  let team: Actor;
  beforeAll(async () => {
    team = await newActor(svc, 'portal-lister@example.com');
    const tag = (await call(svc.url, 'POST', `/v1/teams/${team.teamId}/tags`, { headers: team.h, body: { name: 'music' } })).body;
    const specs = [['bravo', 'list-bravo', true, false], ['Alpha', 'list-alpha', false, true], ['charlie', 'list-x-charlie', true, true]] as const;
    for (const [i, [name, s, active, withTag]] of specs.entries()) {
      const p = await made({ name, subdomain: s, active, ...(withTag ? { tag: { id: tag.id } } : {}) }, team);
      // Distinct creation times, so the created_at order cannot hinge on the clock's resolution.
      await svc.ctx.db.updateTable('portals').set({ created_at: `2024-01-0${i + 1}T00:00:00.000Z` }).where('id', '=', p.id).execute();
    }
  });
  const list = (q: string, who: Actor = team) => call(svc.url, 'GET', `/v1.1/teams/${team.teamId}/portals${q}`, { headers: who.h });
  const names = (r: { body: { records: { name: string }[] } }) => r.body.records.map((x) => x.name);

  it('lists the Team\'s Portals by name (case-insensitive) by default, with the total', async () => {
    const r = await list('');
    expect(r.status).toBe(200);
    expect(r.body.metadata).toEqual({ total: 3, page: 1, limit: 50 });
    expect(names(r)).toEqual(['Alpha', 'bravo', 'charlie']);
  });

  it('sorts by name, created_at and active, ascending or descending, and pages', async () => {
    expect(names(await list('?sort=-name'))).toEqual(['charlie', 'bravo', 'Alpha']);
    expect(names(await list('?sort=created_at'))).toEqual(['bravo', 'Alpha', 'charlie']);
    expect(names(await list('?sort=active'))[0]).toBe('Alpha');
    expect(names(await list('?sort=-active')).at(-1)).toBe('Alpha');
    const p2 = await list('?sort=name&limit=2&page=2');
    expect(p2.body.metadata.total).toBe(3);
    expect(names(p2)).toEqual(['charlie']);
  });

  it('filters by name and subdomain substrings and by tags', async () => {
    expect(names(await list('?name=ALP'))).toEqual(['Alpha']);
    expect(names(await list('?subdomain=x-ch'))).toEqual(['charlie']);
    const tagId = (await list('?name=alpha')).body.records[0].tag.id;
    expect(names(await list(`?tags=${tagId}`))).toEqual(['Alpha', 'charlie']);
    expect((await list('?name=%25')).body.metadata.total).toBe(0);
  });

  it('is open to members, 404 to other Teams, 400 for a bad page size or sort field', async () => {
    expect((await list('', member)).status).toBe(404);
    expect((await list('', stranger)).status).toBe(404);
    expect((await call(svc.url, 'GET', `/v1.1/teams/${owner.teamId}/portals`, { headers: member.h })).status).toBe(200);
    for (const q of ['?limit=0', '?limit=51', '?page=0', '?sort=size', '?sort=name,active']) expect((await list(q)).status).toBe(400);
  });
});

describe('DELETE /v1/portals/{id}', () => {
  it('deletes for owners and admins (204) and frees the subdomain; members 403, other Teams 404', async () => {
    const p = await made({ active: true });
    expect((await call(svc.url, 'DELETE', `/v1/portals/${p.id}`, { headers: member.h })).status).toBe(403);
    expect((await call(svc.url, 'DELETE', `/v1/portals/${p.id}`, { headers: stranger.h })).status).toBe(404);
    expect(await row(p.id)).toBeDefined();
    const r = await call(svc.url, 'DELETE', `/v1/portals/${p.id}`, { headers: admin.h });
    expect(r.status).toBe(204);
    expect((await call(svc.url, 'GET', `/v1/portals/${p.id}`, { headers: owner.h })).status).toBe(404);
    expect((await call(svc.url, 'DELETE', `/v1/portals/${p.id}`, { headers: owner.h })).status).toBe(404);
    expect((await call(svc.url, 'GET', `/v1/subdomains/portals/${p.subdomain}`)).status).toBe(404);
    expect((await create(owner, { name: 'Again', subdomain: p.subdomain })).status).toBe(201);
  });
});

describe('GET /v1/subdomains/portals/{subdomain}', () => {
  it('answers the public part of an active Portal without credentials, and nothing private', async () => {
    const p = await made({
      name: 'Public', subdomain: 'pub-view', message: 'Welcome', access_code: 'c', active: true, recipients: ['hidden@example.com'],
      package_size_restriction_enabled: true, max_file_size: 100, file_type_restriction_enabled: true, file_types: ['.txt'],
    });
    const r = await call(svc.url, 'GET', '/v1/subdomains/portals/PUB-VIEW');
    expect(r.status).toBe(200);
    expect(r.body).toEqual({
      id: p.id, name: 'Public', subdomain: 'pub-view', message: 'Welcome', has_access_code: true, user_authentication_required: false,
      custom_metadata: [], custom_metadata_required: false, terms_of_service_enabled: false, terms_of_service: null,
      restrictions: { max_file_size: 100, file_types: ['.txt'] },
    });
  });

  it('answers 404 for an inactive or unknown Portal and 410 for an expired one', async () => {
    await made({ subdomain: 'pub-off', active: false });
    expect((await call(svc.url, 'GET', '/v1/subdomains/portals/pub-off')).status).toBe(404);
    expect((await call(svc.url, 'GET', '/v1/subdomains/portals/no-such-portal')).status).toBe(404);
    await made({ subdomain: 'pub-old', active: true, expiry_enabled: true, expiry: '2001-01-01T00:00:00Z' });
    expect((await call(svc.url, 'GET', '/v1/subdomains/portals/pub-old')).status).toBe(410);
  });
});
