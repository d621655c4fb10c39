// Tags: create, list, delete, and the three rules of a tag reference on a Package.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, startTestService, type TestService } from '../../helpers/hosted.js';
import { teamActors, type Actor } from '../../helpers/auth.js';

let svc: TestService;
let owner: Actor;
let member: Actor;
let stranger: Actor;

beforeAll(async () => {
  svc = await startTestService();
  ({ owner, member, stranger } = await teamActors(svc, 'tag'));
});
afterAll(async () => svc?.close());

const createTag = (name: unknown, who: Actor = owner) => call(svc.url, 'POST', `/v1/teams/${who.teamId}/tags`, { headers: who.h, body: { name } });
const createPkg = (tag: unknown) =>
  call(svc.url, 'POST', `/v1/teams/${owner.teamId}/packages`, { headers: owner.h, body: { name: 'P', description: '', recipients: [], ...(tag === undefined ? {} : { tag }) } });
const tagCount = async (teamId: string) =>
  Number((await svc.ctx.db.selectFrom('tags').select((eb) => eb.fn.countAll().as('n')).where('team_id', '=', teamId).executeTakeFirstOrThrow()).n);

describe('Tag routes', () => {
  it('creates a tag (201) with every Tag field and lists it', async () => {
    const res = await createTag('Review');
    expect(res.status).toBe(201);
    expect(res.body).toMatchObject({ name: 'Review', team_id: owner.teamId, active: true });
    expect(res.body.id).toMatch(/^tag_/);
    expect(typeof res.body.created_at).toBe('string');
    const list = await call(svc.url, 'GET', `/v1/teams/${owner.teamId}/tags`, { headers: { 'x-user-token': member.userToken } });
    expect(list.status).toBe(200);
    expect(list.body.map((t: { name: string }) => t.name)).toContain('Review');
  });

  it('answers 409 for a duplicate name in the same Team, but allows it in another Team', async () => {
    expect((await createTag('Dup')).status).toBe(201);
    expect((await createTag('Dup')).status).toBe(409);
    expect((await createTag('Dup', stranger)).status).toBe(201);
  });

  it('answers 400 for a bad name and creates nothing', async () => {
    const before = await tagCount(owner.teamId);
    for (const name of ['', 'a\u0000b', 7, 'x'.repeat(101)]) expect((await createTag(name)).status, String(name)).toBe(400);
    expect((await call(svc.url, 'POST', `/v1/teams/${owner.teamId}/tags`, { headers: owner.h, body: {} })).status).toBe(400);
    expect(await tagCount(owner.teamId)).toBe(before);
  });

  it('hides other Teams: list and create answer 404', async () => {
    expect((await call(svc.url, 'GET', `/v1/teams/${owner.teamId}/tags`, { headers: stranger.h })).status).toBe(404);
    expect((await call(svc.url, 'POST', `/v1/teams/${owner.teamId}/tags`, { headers: stranger.h, body: { name: 'x' } })).status).toBe(404);
  });

  it('deletes a tag (204); its Packages lose it', async () => {
    const tag = (await createTag('Doomed')).body;
    const p = (await createPkg({ id: tag.id })).body;
    expect(p.tag).toEqual({ id: tag.id, name: 'Doomed' });
    const res = await call(svc.url, 'DELETE', `/v1/tags/${tag.id}`, { headers: owner.h });
    expect(res.status).toBe(204);
    expect(res.body).toBe('');
    const after = await call(svc.url, 'GET', `/v1/packages/${p.id}`, { headers: owner.h });
    expect(after.body.tag).toBeNull();
    expect((await call(svc.url, 'DELETE', `/v1/tags/${tag.id}`, { headers: owner.h })).status).toBe(404);
  });

  it("answers 404 for another Team's tag and 403 to a plain member", async () => {
    const tag = (await createTag('Guarded')).body;
    expect((await call(svc.url, 'DELETE', `/v1/tags/${tag.id}`, { headers: stranger.h })).status).toBe(404);
    expect((await call(svc.url, 'DELETE', `/v1/tags/${tag.id}`, { headers: member.h })).status).toBe(403);
    const list = await call(svc.url, 'GET', `/v1/teams/${owner.teamId}/tags`, { headers: owner.h });
    expect(list.body.map((t: { id: string }) => t.id)).toContain(tag.id);
  });
});

describe('tag references on Packages', () => {
  it('rule 1: a known id names the tag, even when a different name is given', async () => {
    const tag = (await createTag('ById')).body;
    const p = (await createPkg({ id: tag.id, name: 'Ignored' })).body;
    expect(p.tag).toEqual({ id: tag.id, name: 'ById' });
    const ignored = await svc.ctx.db.selectFrom('tags').select('id').where('name', '=', 'Ignored').executeTakeFirst();
    expect(ignored).toBeUndefined();
  });

  it('rule 2: an unknown id with a name uses the tag of that name, creating it when missing', async () => {
    const existing = (await createTag('ByName')).body;
    const a = (await createPkg({ id: 'tag_unknown', name: 'ByName' })).body;
    expect(a.tag).toEqual({ id: existing.id, name: 'ByName' });
    const before = await tagCount(owner.teamId);
    const b = (await createPkg({ name: 'Fresh' })).body;
    expect(b.tag.name).toBe('Fresh');
    expect(await tagCount(owner.teamId)).toBe(before + 1);
    const c = (await createPkg({ name: 'Fresh' })).body;
    expect(c.tag.id).toBe(b.tag.id);
  });

  it("rule 3: an unknown id alone attaches no tag and is not an error; another Team's id counts as unknown", async () => {
    const a = await createPkg({ id: 'tag_unknown' });
    expect(a.status).toBe(201);
    expect(a.body.tag).toBeNull();
    const foreign = (await createTag('Foreign', stranger)).body;
    const b = await createPkg({ id: foreign.id });
    expect(b.status).toBe(201);
    expect(b.body.tag).toBeNull();
  });

  it('applies the same rules on update', async () => {
    const p = (await createPkg(undefined)).body;
    const tag = (await createTag('OnUpdate')).body;
    const put = (t: unknown) => call(svc.url, 'PUT', `/v1/packages/${p.id}`, { headers: owner.h, body: { ...p, tag: t } });
    expect((await put({ id: tag.id })).body.tag).toEqual({ id: tag.id, name: 'OnUpdate' });
    expect((await put({ id: 'tag_nope', name: 'MadeOnUpdate' })).body.tag.name).toBe('MadeOnUpdate');
    expect((await put({ id: 'tag_nope' })).body.tag).toBeNull();
  });
});
