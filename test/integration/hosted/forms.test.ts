// Custom metadata forms on Portals and the Team's form templates: create, read,
// full update, delete; every field rule answering 400 with nothing changed;
// who may do what (Owners and Admins write, members read, other Teams 404).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, startTestService, type TestService } from '../../helpers/hosted.js';
import { teamActors, type Actor } from '../../helpers/auth.js';

let svc: TestService;
let owner: Actor;
let admin: Actor;
let member: Actor;
let stranger: Actor;

beforeAll(async () => {
  svc = await startTestService();
  ({ owner, admin, member, stranger } = await teamActors(svc, 'forms'));
});
afterAll(async () => svc?.close());

let seq = 0;
async function portal(who: Actor = owner): Promise<string> {
  const r = await call(svc.url, 'POST', `/v1/teams/${who.teamId}/portals`, { headers: who.h, body: { name: 'Inbox', subdomain: `forms-${++seq}`, active: true } });
  expect(r.status, JSON.stringify(r.body)).toBe(201);
  return r.body.id;
}
const FIELDS = [
  { name: 'project', label: 'Project', type: 'dropdown', visibility: 'required', options: ['Alpha', 'Beta'], position: 2 },
  { name: 'title', label: 'Title', type: 'package_name', visibility: 'required', position: 1 },
  { name: 'notes', label: 'Notes', type: 'long_text', visibility: 'optional' },
];
const FORM = { name: 'Delivery sheet', delivery_formats: ['json', 'csv'], fields: FIELDS };
const createForm = (portalId: string, body: unknown = FORM, who: Actor = owner) => call(svc.url, 'POST', `/v1/portals/${portalId}/form`, { headers: who.h, body });
const formCount = async () => Number((await svc.ctx.db.selectFrom('metadata_forms').select((eb) => eb.fn.countAll().as('n')).executeTakeFirstOrThrow()).n);
const formRow = (id: string) => svc.ctx.db.selectFrom('metadata_forms').selectAll().where('id', '=', id).executeTakeFirstOrThrow();

describe('POST /v1/portals/{portal_id}/form', () => {
  it('creates the form: fields completed (default_value, position, options) and ordered by position', async () => {
    const p = await portal();
    const r = await createForm(p);
    expect(r.status, JSON.stringify(r.body)).toBe(201);
    expect(r.body).toMatchObject({ portal_id: p, team_id: owner.teamId, name: 'Delivery sheet', delivery_formats: ['json', 'csv'], disabled: false, form_template_id: null });
    expect(r.body.id).toMatch(/^frm_/);
    expect(r.body.fields).toEqual([
      { name: 'title', label: 'Title', type: 'package_name', visibility: 'required', default_value: '', position: 1, options: [] },
      { name: 'project', label: 'Project', type: 'dropdown', visibility: 'required', default_value: '', position: 2, options: ['Alpha', 'Beta'] },
      { name: 'notes', label: 'Notes', type: 'long_text', visibility: 'optional', default_value: '', position: 2, options: [] },
    ]);
  });

  it('a Portal has one form: a second POST answers 409 form_exists and changes nothing', async () => {
    const p = await portal();
    const first = await createForm(p);
    const second = await createForm(p, { name: 'Other', delivery_formats: ['xml'] });
    expect(second.status).toBe(409);
    expect(second.body.code).toBe('form_exists');
    expect((await formRow(first.body.id)).name).toBe('Delivery sheet');
  });

  it('accepts every field type with a valid default value', async () => {
    const p = await portal();
    const fields = [
      { name: 'c', label: 'C', type: 'checkbox', visibility: 'optional', options: ['x', 'y'], default_value: 'x,y' },
      { name: 'r', label: 'R', type: 'radio', visibility: 'optional', options: ['x', 'y'], default_value: 'y' },
      { name: 'd', label: 'D', type: 'dropdown', visibility: 'optional', options: ['x'] },
      { name: 'dt', label: 'Date', type: 'date', visibility: 'optional', default_value: '2024-02-29' },
      { name: 's', label: 'S', type: 'short_text', visibility: 'readonly', default_value: 'fixed' },
      { name: 'l', label: 'L', type: 'long_text', visibility: 'optional' },
      { name: 'n', label: 'N', type: 'number', visibility: 'optional', default_value: '-1.5e3' },
      { name: 'u', label: 'U', type: 'url', visibility: 'optional', default_value: 'https://example.com/x' },
      { name: 'e', label: 'E', type: 'email', visibility: 'hidden', default_value: 'ops@example.com' },
      { name: 'pn', label: 'PN', type: 'package_name', visibility: 'required' },
      { name: 'pd', label: 'PD', type: 'package_description', visibility: 'optional' },
      { name: 'se', label: 'SE', type: 'sender_email', visibility: 'required' },
    ];
    const r = await createForm(p, { name: 'All', delivery_formats: ['json', 'csv', 'xml', 'email_body', 'json'], fields });
    expect(r.status, JSON.stringify(r.body)).toBe(201);
    expect(r.body.fields.map((f: any) => f.type)).toEqual(fields.map((f) => f.type));
    expect(r.body.delivery_formats).toEqual(['json', 'csv', 'xml', 'email_body']);
  });

  const bad: [string, unknown, string][] = [
    ['a missing name', { delivery_formats: ['json'] }, 'validation_failed'],
    ['no delivery format', { name: 'F', delivery_formats: [] }, 'validation_failed'],
    ['an unknown delivery format', { name: 'F', delivery_formats: ['pdf'] }, 'validation_failed'],
    ['an unknown field type', { ...FORM, fields: [{ name: 'a', label: 'A', type: 'color', visibility: 'optional' }] }, 'validation_failed'],
    ['an unknown visibility', { ...FORM, fields: [{ name: 'a', label: 'A', type: 'short_text', visibility: 'secret' }] }, 'validation_failed'],
    ['a field name with spaces', { ...FORM, fields: [{ name: 'a b', label: 'A', type: 'short_text', visibility: 'optional' }] }, 'validation_failed'],
    ['an empty label', { ...FORM, fields: [{ name: 'a', label: '', type: 'short_text', visibility: 'optional' }] }, 'validation_failed'],
    ['a negative position', { ...FORM, fields: [{ name: 'a', label: 'A', type: 'short_text', visibility: 'optional', position: -1 }] }, 'validation_failed'],
    ['names equal but for letter case', { ...FORM, fields: [{ name: 'a', label: 'A', type: 'short_text', visibility: 'optional' }, { name: 'A', label: 'B', type: 'number', visibility: 'optional' }] }, 'duplicate_field_name'],
    ['two package_name fields', { ...FORM, fields: [{ name: 'a', label: 'A', type: 'package_name', visibility: 'optional' }, { name: 'b', label: 'B', type: 'package_name', visibility: 'optional' }] }, 'duplicate_package_field'],
    ['two sender_email fields', { ...FORM, fields: [{ name: 'a', label: 'A', type: 'sender_email', visibility: 'optional' }, { name: 'b', label: 'B', type: 'sender_email', visibility: 'optional' }] }, 'duplicate_package_field'],
    ['two package_description fields', { ...FORM, fields: [{ name: 'a', label: 'A', type: 'package_description', visibility: 'optional' }, { name: 'b', label: 'B', type: 'package_description', visibility: 'optional' }] }, 'duplicate_package_field'],
    ['a dropdown without options', { ...FORM, fields: [{ name: 'a', label: 'A', type: 'dropdown', visibility: 'optional' }] }, 'options_required'],
    ['a checkbox with empty options', { ...FORM, fields: [{ name: 'a', label: 'A', type: 'checkbox', visibility: 'optional', options: [] }] }, 'options_required'],
    ['options on a text field', { ...FORM, fields: [{ name: 'a', label: 'A', type: 'short_text', visibility: 'optional', options: ['x'] }] }, 'options_not_allowed'],
    ['duplicate options', { ...FORM, fields: [{ name: 'a', label: 'A', type: 'radio', visibility: 'optional', options: ['x', 'x'] }] }, 'invalid_options'],
    ['a comma in a checkbox option', { ...FORM, fields: [{ name: 'a', label: 'A', type: 'checkbox', visibility: 'optional', options: ['x,y'] }] }, 'invalid_options'],
    ['a default not among the options', { ...FORM, fields: [{ name: 'a', label: 'A', type: 'radio', visibility: 'optional', options: ['x'], default_value: 'z' }] }, 'invalid_field_value'],
    ['a default date in another format', { ...FORM, fields: [{ name: 'a', label: 'A', type: 'date', visibility: 'optional', default_value: '01/02/2024' }] }, 'invalid_field_value'],
    ['a default date that does not exist', { ...FORM, fields: [{ name: 'a', label: 'A', type: 'date', visibility: 'optional', default_value: '2023-02-29' }] }, 'invalid_field_value'],
    ['a default number that is not one', { ...FORM, fields: [{ name: 'a', label: 'A', type: 'number', visibility: 'optional', default_value: '12abc' }] }, 'invalid_field_value'],
    ['a default email that is not one', { ...FORM, fields: [{ name: 'a', label: 'A', type: 'email', visibility: 'optional', default_value: 'nobody' }] }, 'invalid_field_value'],
    ['a default URL that is not http', { ...FORM, fields: [{ name: 'a', label: 'A', type: 'url', visibility: 'optional', default_value: 'javascript:alert(1)' }] }, 'invalid_field_value'],
    ['an unknown template', { ...FORM, form_template_id: 'tpl_nope' }, 'unknown_form_template'],
  ];
  it.each(bad)('refuses %s with 400 {code, message} and creates nothing', async (_label, body, code) => {
    const p = await portal();
    const before = await formCount();
    const r = await createForm(p, body);
    expect(r.status, JSON.stringify(r.body)).toBe(400);
    expect(r.body).toMatchObject({ code, message: expect.stringMatching(/\S/) });
    expect(await formCount()).toBe(before);
  });

  it('copies the fields of a template of the Team when none are given; another Team\'s template is unknown', async () => {
    const t = await call(svc.url, 'POST', `/v1/teams/${owner.teamId}/forms/templates`, { headers: owner.h, body: FORM });
    expect(t.status, JSON.stringify(t.body)).toBe(201);
    const p = await portal();
    const r = await createForm(p, { name: 'From template', delivery_formats: ['xml'], form_template_id: t.body.id });
    expect(r.status, JSON.stringify(r.body)).toBe(201);
    expect(r.body).toMatchObject({ form_template_id: t.body.id, delivery_formats: ['xml'] });
    expect(r.body.fields).toEqual(t.body.fields);
    const theirs = await portal(stranger);
    const refused = await createForm(theirs, { name: 'X', delivery_formats: ['xml'], form_template_id: t.body.id }, stranger);
    expect(refused.status).toBe(400);
    expect(refused.body.code).toBe('unknown_form_template');
  });

  it('Owners and Admins only: a member 403, another Team 404, no credential 401; nothing created', async () => {
    const p = await portal();
    const before = await formCount();
    expect((await createForm(p, FORM, member)).status).toBe(403);
    expect((await createForm(p, FORM, stranger)).status).toBe(404);
    expect((await call(svc.url, 'POST', `/v1/portals/${p}/form`, { body: FORM })).status).toBe(401);
    expect((await createForm('prt_nope')).status).toBe(404);
    expect(await formCount()).toBe(before);
    expect((await createForm(p, FORM, admin)).status).toBe(201);
  });
});

describe('GET, PUT and DELETE of a form', () => {
  it('reads the form by Portal and by id (any member), 404 to other Teams', async () => {
    const p = await portal();
    const made = (await createForm(p)).body;
    const byPortal = await call(svc.url, 'GET', `/v1/portals/${p}/form`, { headers: member.h });
    expect(byPortal.status).toBe(200);
    expect(byPortal.body).toEqual(made);
    const byId = await call(svc.url, 'GET', `/v1/metadata/forms/${made.id}`, { headers: { 'x-user-token': member.userToken } });
    expect(byId.body).toEqual(made);
    expect((await call(svc.url, 'GET', `/v1/metadata/forms/${made.id}`, { headers: stranger.h })).status).toBe(404);
    expect((await call(svc.url, 'GET', `/v1/portals/${p}/form`, { headers: stranger.h })).status).toBe(404);
    expect((await call(svc.url, 'GET', `/v1/portals/${await portal()}/form`, { headers: owner.h })).status).toBe(404);
  });

  it('PUT replaces name, formats, disabled and fields; omitted disabled and fields keep their value', async () => {
    const p = await portal();
    const made = (await createForm(p)).body;
    const put = await call(svc.url, 'PUT', `/v1/metadata/forms/${made.id}`, {
      headers: admin.h,
      body: { name: 'Renamed', delivery_formats: ['xml', 'email_body'], disabled: true, fields: [{ name: 'only', label: 'Only', type: 'email', visibility: 'required' }] },
    });
    expect(put.status, JSON.stringify(put.body)).toBe(200);
    expect(put.body).toMatchObject({ id: made.id, name: 'Renamed', delivery_formats: ['xml', 'email_body'], disabled: true });
    expect(put.body.fields).toEqual([{ name: 'only', label: 'Only', type: 'email', visibility: 'required', default_value: '', position: 0, options: [] }]);
    const again = await call(svc.url, 'PUT', `/v1/metadata/forms/${made.id}`, { headers: owner.h, body: { name: 'Again', delivery_formats: ['json'] } });
    expect(again.body).toMatchObject({ name: 'Again', disabled: true, fields: put.body.fields });
    const on = await call(svc.url, 'PUT', `/v1/metadata/forms/${made.id}`, { headers: owner.h, body: { name: 'Again', delivery_formats: ['json'], disabled: false } });
    expect(on.body.disabled).toBe(false);
  });

  it('PUT refuses bad fields (400), members (403) and other Teams (404), changing nothing', async () => {
    const p = await portal();
    const made = (await createForm(p)).body;
    const before = await formRow(made.id);
    const dup = await call(svc.url, 'PUT', `/v1/metadata/forms/${made.id}`, {
      headers: owner.h,
      body: { name: 'X', delivery_formats: ['json'], fields: [{ name: 'a', label: 'A', type: 'url', visibility: 'optional' }, { name: 'a', label: 'B', type: 'url', visibility: 'optional' }] },
    });
    expect(dup.status).toBe(400);
    expect(dup.body.code).toBe('duplicate_field_name');
    expect((await call(svc.url, 'PUT', `/v1/metadata/forms/${made.id}`, { headers: owner.h, body: { delivery_formats: ['json'] } })).status).toBe(400);
    expect((await call(svc.url, 'PUT', `/v1/metadata/forms/${made.id}`, { headers: member.h, body: { name: 'X', delivery_formats: ['json'] } })).status).toBe(403);
    expect((await call(svc.url, 'PUT', `/v1/metadata/forms/${made.id}`, { headers: stranger.h, body: { name: 'X', delivery_formats: ['json'] } })).status).toBe(404);
    expect(await formRow(made.id)).toEqual(before);
  });

  it('DELETE answers 204 (Owners and Admins); the Portal can have a new form then', async () => {
    const p = await portal();
    const made = (await createForm(p)).body;
    expect((await call(svc.url, 'DELETE', `/v1/metadata/forms/${made.id}`, { headers: member.h })).status).toBe(403);
    expect((await call(svc.url, 'DELETE', `/v1/metadata/forms/${made.id}`, { headers: stranger.h })).status).toBe(404);
    const del = await call(svc.url, 'DELETE', `/v1/metadata/forms/${made.id}`, { headers: admin.h });
    expect(del.status).toBe(204);
    expect((await call(svc.url, 'GET', `/v1/metadata/forms/${made.id}`, { headers: owner.h })).status).toBe(404);
    expect((await call(svc.url, 'DELETE', `/v1/metadata/forms/${made.id}`, { headers: owner.h })).status).toBe(404);
    expect((await createForm(p)).status).toBe(201);
  });

  it('a form id is not a template id and the other way round', async () => {
    const made = (await createForm(await portal())).body;
    const t = (await call(svc.url, 'POST', `/v1/teams/${owner.teamId}/forms/templates`, { headers: owner.h, body: FORM })).body;
    expect((await call(svc.url, 'GET', `/v1/metadata/forms/templates/${made.id}`, { headers: owner.h })).status).toBe(404);
    expect((await call(svc.url, 'GET', `/v1/metadata/forms/${t.id}`, { headers: owner.h })).status).toBe(404);
    expect((await call(svc.url, 'DELETE', `/v1/metadata/forms/${t.id}`, { headers: owner.h })).status).toBe(404);
  });

  it('deleting the Portal deletes its form', async () => {
    const p = await portal();
    const made = (await createForm(p)).body;
    expect((await call(svc.url, 'DELETE', `/v1/portals/${p}`, { headers: owner.h })).status).toBe(204);
    expect(await svc.ctx.db.selectFrom('metadata_forms').select('id').where('id', '=', made.id).executeTakeFirst()).toBeUndefined();
  });
});

describe('form templates', () => {
  const tpl = (who: Actor, body: unknown = FORM, team = owner.teamId) => call(svc.url, 'POST', `/v1/teams/${team}/forms/templates`, { headers: who.h, body });

  it('create, list, get, update and delete', async () => {
    const made = await tpl(admin, { ...FORM, name: 'Sheet A' });
    expect(made.status, JSON.stringify(made.body)).toBe(201);
    expect(made.body).toMatchObject({ team_id: owner.teamId, name: 'Sheet A', delivery_formats: ['json', 'csv'], disabled: false });
    expect(made.body.id).toMatch(/^tpl_/);
    expect(made.body.fields.map((f: any) => f.name)).toEqual(['title', 'project', 'notes']);
    const list = await call(svc.url, 'GET', `/v1/teams/${owner.teamId}/forms/templates`, { headers: member.h });
    expect(list.status).toBe(200);
    expect(list.body.map((t: any) => t.id)).toContain(made.body.id);
    expect(list.body.every((t: any) => !('portal_id' in t))).toBe(true);
    const got = await call(svc.url, 'GET', `/v1/metadata/forms/templates/${made.body.id}`, { headers: member.h });
    expect(got.body).toEqual(made.body);
    const put = await call(svc.url, 'PUT', `/v1/metadata/forms/templates/${made.body.id}`, { headers: owner.h, body: { name: 'Sheet B', delivery_formats: ['xml'], disabled: true } });
    expect(put.status).toBe(200);
    expect(put.body).toMatchObject({ name: 'Sheet B', delivery_formats: ['xml'], disabled: true, fields: made.body.fields });
    expect((await call(svc.url, 'DELETE', `/v1/metadata/forms/templates/${made.body.id}`, { headers: owner.h })).status).toBe(204);
    expect((await call(svc.url, 'GET', `/v1/metadata/forms/templates/${made.body.id}`, { headers: owner.h })).status).toBe(404);
  });

  it('refuses bad input with 400 and creates nothing', async () => {
    const before = await formCount();
    for (const body of [{ name: 'T' }, { name: 'T', delivery_formats: ['json'], fields: [{ name: 'a', label: 'A', type: 'checkbox', visibility: 'optional' }] }]) {
      const r = await tpl(owner, body);
      expect(r.status).toBe(400);
      expect(r.body).toMatchObject({ code: expect.stringMatching(/\S/), message: expect.stringMatching(/\S/) });
    }
    expect(await formCount()).toBe(before);
  });

  it('Owners and Admins write, members read; other Teams 404; no credential 401', async () => {
    const made = (await tpl(owner)).body;
    const before = await formCount();
    expect((await tpl(member)).status).toBe(403);
    expect((await tpl(stranger)).status).toBe(404);
    expect((await call(svc.url, 'POST', `/v1/teams/${owner.teamId}/forms/templates`, { body: FORM })).status).toBe(401);
    expect(await formCount()).toBe(before);
    const path = `/v1/metadata/forms/templates/${made.id}`;
    expect((await call(svc.url, 'PUT', path, { headers: member.h, body: FORM })).status).toBe(403);
    expect((await call(svc.url, 'PUT', path, { headers: stranger.h, body: FORM })).status).toBe(404);
    expect((await call(svc.url, 'DELETE', path, { headers: member.h })).status).toBe(403);
    expect((await call(svc.url, 'DELETE', path, { headers: stranger.h })).status).toBe(404);
    expect((await call(svc.url, 'GET', path, { headers: stranger.h })).status).toBe(404);
    expect((await call(svc.url, 'GET', `/v1/teams/${owner.teamId}/forms/templates`, { headers: stranger.h })).status).toBe(404);
    expect((await call(svc.url, 'GET', path)).status).toBe(401);
    expect((await formRow(made.id)).name).toBe('Delivery sheet');
  });
});
