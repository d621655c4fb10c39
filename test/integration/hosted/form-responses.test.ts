// Form responses and Portal terms of service, end to end: the form as uploaders
// see it (GET Portal, public view), responses checked field by field, Portal
// Packages that need form_data_id and terms_accepted, the metadata files and
// e-mail answers delivered at finalize, and GET /v1/packages/{id}/metadata.
import fs from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { call, startTestService, type TestService } from '../../helpers/hosted.js';
import { teamActors, type Actor } from '../../helpers/auth.js';
import { fetchBytes, finalizePackage, makeLink, readZip, uploadFile, type Pkg } from '../../helpers/flow.js';
import { sweepUnusedResponses, UNUSED_RESPONSE_TTL_MS } from '../../../src/hosted/services/formResponses.js';

let svc: TestService;
let owner: Actor;
let member: Actor;
let stranger: Actor;

beforeAll(async () => {
  svc = await startTestService();
  ({ owner, member, stranger } = await teamActors(svc, 'answers'));
});
afterAll(async () => svc?.close());

const CODE = 'let me in/ü%';
const withCode = (c = CODE) => ({ 'x-access-code': encodeURIComponent(c) });
const FIELDS = [
  { name: 'title', label: 'Title', type: 'package_name', visibility: 'required', position: 0 },
  { name: 'summary', label: 'Summary', type: 'package_description', visibility: 'optional', position: 1 },
  { name: 'from', label: 'Your e-mail', type: 'sender_email', visibility: 'required', position: 2 },
  { name: 'shot_on', label: 'Shot on', type: 'date', visibility: 'optional', position: 3 },
  { name: 'reels', label: 'Reels', type: 'number', visibility: 'optional', position: 4 },
  { name: 'site', label: 'Website', type: 'url', visibility: 'optional', position: 5 },
  { name: 'contact', label: 'Contact', type: 'email', visibility: 'optional', position: 6 },
  { name: 'format', label: 'Format', type: 'radio', visibility: 'required', options: ['HD', '4K'], position: 7 },
  { name: 'camera', label: 'Camera', type: 'dropdown', visibility: 'optional', options: ['A', 'B'], position: 8 },
  { name: 'extras', label: 'Extras', type: 'checkbox', visibility: 'optional', options: ['LUT', 'Sound', 'Stills'], position: 9 },
  { name: 'studio', label: 'Studio', type: 'short_text', visibility: 'readonly', default_value: 'North', position: 10 },
  { name: 'cost_center', label: 'Cost center', type: 'short_text', visibility: 'hidden', default_value: 'CC-7', position: 11 },
  { name: 'notes', label: 'Notes', type: 'long_text', visibility: 'optional', position: 12 },
];

let seq = 0;
async function portal(body: Record<string, unknown> = {}, form: Record<string, unknown> | null = { name: 'Delivery sheet', delivery_formats: ['json', 'csv', 'xml', 'email_body'], fields: FIELDS }) {
  const r = await call(svc.url, 'POST', `/v1/teams/${owner.teamId}/portals`, {
    headers: owner.h,
    body: { name: 'Inbox', subdomain: `answers-${++seq}`, active: true, access_code: CODE, recipients: ['editor@example.com'], ...body },
  });
  expect(r.status, JSON.stringify(r.body)).toBe(201);
  let formId: string | undefined;
  if (form) {
    const f = await call(svc.url, 'POST', `/v1/portals/${r.body.id}/form`, { headers: owner.h, body: form });
    expect(f.status, JSON.stringify(f.body)).toBe(201);
    formId = f.body.id;
  }
  return { id: r.body.id as string, subdomain: r.body.subdomain as string, formId: formId! };
}
const GOOD = {
  title: { value: 'Reel 12' }, summary: { value: 'Dailies\nday 3' }, from: { value: 'Cam@Example.com' }, shot_on: { value: '2024-05-01' },
  reels: { value: '3' }, site: { value: 'https://example.com/p' }, contact: { value: 'dp@example.com' }, format: { value: '4K' },
  camera: { value: 'B' }, extras: { value: ['Sound', 'LUT'] }, notes: { value: '=SUM(A1) "quoted", <b>&' },
};
const respond = (portalId: string, body: unknown, headers: Record<string, string> = withCode()) =>
  call(svc.url, 'POST', `/v1/portals/${portalId}/form/responses`, { headers, body });
const createIn = (portalId: string, body: Record<string, unknown>, headers: Record<string, string> = withCode()) =>
  call(svc.url, 'POST', `/v1/portals/${portalId}/packages`, { headers, body });
const responseCount = async () => Number((await svc.ctx.db.selectFrom('form_responses').select((eb) => eb.fn.countAll().as('n')).executeTakeFirstOrThrow()).n);
const packageCount = async () => Number((await svc.ctx.db.selectFrom('packages').select((eb) => eb.fn.countAll().as('n')).executeTakeFirstOrThrow()).n);
const asPkg = (b: any): Pkg => ({ id: b.id, token: b.access_token, h: { 'x-package-token': b.access_token }, body: b });

describe('the form as uploaders see it', () => {
  it('GET /v1/portals/{id} and the public view carry the enabled form\'s fields by position, without hidden ones', async () => {
    const p = await portal();
    const get = await call(svc.url, 'GET', `/v1/portals/${p.id}`, { headers: withCode() });
    expect(get.status).toBe(200);
    expect(get.body.custom_metadata_required).toBe(true);
    expect(get.body.custom_metadata.map((f: any) => f.name)).toEqual(FIELDS.filter((f) => f.visibility !== 'hidden').map((f) => f.name));
    expect(get.body.custom_metadata[7]).toEqual({ name: 'format', label: 'Format', type: 'radio', visibility: 'required', default_value: '', position: 7, options: ['HD', '4K'] });
    const pub = await call(svc.url, 'GET', `/v1/subdomains/portals/${p.subdomain}`);
    expect(pub.status).toBe(200);
    expect(pub.body.custom_metadata).toEqual(get.body.custom_metadata);
    expect(pub.body).toMatchObject({ id: p.id, custom_metadata_required: true, terms_of_service_enabled: false, terms_of_service: null });
    const list = await call(svc.url, 'GET', `/v1.1/teams/${owner.teamId}/portals?subdomain=${p.subdomain}`, { headers: member.h });
    expect(list.body.records[0].custom_metadata).toEqual(get.body.custom_metadata);
  });

  it('a disabled form, or none, shows no fields and requires no response', async () => {
    const p = await portal();
    await call(svc.url, 'PUT', `/v1/metadata/forms/${p.formId}`, { headers: owner.h, body: { name: 'Off', delivery_formats: ['json'], disabled: true } });
    const pub = await call(svc.url, 'GET', `/v1/subdomains/portals/${p.subdomain}`);
    expect(pub.body).toMatchObject({ custom_metadata: [], custom_metadata_required: false });
    const bare = await portal({}, null);
    expect((await call(svc.url, 'GET', `/v1/portals/${bare.id}`, { headers: owner.h })).body).toMatchObject({ custom_metadata: [], custom_metadata_required: false });
  });
});

describe('POST /v1/portals/{portal_id}/form/responses', () => {
  it('stores every answer in its type; omitted fields take their default; hidden ones are left out of an uploader\'s answer', async () => {
    const p = await portal();
    const r = await respond(p.id, GOOD);
    expect(r.status, JSON.stringify(r.body)).toBe(201);
    expect(r.body).toMatchObject({ portal_id: p.id, form_id: p.formId, package_id: null });
    expect(r.body.id).toMatch(/^fdr_/);
    const values = Object.fromEntries(Object.entries(r.body.data).map(([k, v]: [string, any]) => [k, v.value]));
    expect(values).toEqual({
      title: 'Reel 12', summary: 'Dailies\nday 3', from: 'cam@example.com', shot_on: '2024-05-01', reels: 3, site: 'https://example.com/p',
      contact: 'dp@example.com', format: '4K', camera: 'B', extras: ['LUT', 'Sound'], studio: 'North', notes: '=SUM(A1) "quoted", <b>&',
    });
    expect(r.body.data.format).toEqual({ value: '4K', label: 'Format', type: 'radio' });
    const stored = await svc.ctx.db.selectFrom('form_responses').selectAll().where('id', '=', r.body.id).executeTakeFirstOrThrow();
    expect(JSON.parse(stored.data)).toMatchObject({ cost_center: 'CC-7' });
  });

  it('a member may answer without the code, and sees hidden fields; a checkbox also takes a comma list; a number a JSON number', async () => {
    const p = await portal();
    const r = await respond(p.id, { ...GOOD, extras: { value: 'Stills, LUT' }, reels: { value: 2.5 }, studio: { value: 'North' } }, member.h);
    expect(r.status, JSON.stringify(r.body)).toBe(201);
    expect(r.body.data.extras.value).toEqual(['LUT', 'Stills']);
    expect(r.body.data.reels.value).toBe(2.5);
    expect(r.body.data.cost_center.value).toBe('CC-7');
  });

  it('a readonly or hidden field sent back with its default, or empty, is accepted and keeps its default', async () => {
    const p = await portal();
    const r = await respond(p.id, { ...GOOD, studio: { value: ' North ' }, cost_center: { value: '' } });
    expect(r.status, JSON.stringify(r.body)).toBe(201);
    expect(r.body.data.studio.value).toBe('North');
  });

  it('only required fields are enforced: a minimal response is enough', async () => {
    const p = await portal();
    const r = await respond(p.id, { title: { value: 'T' }, from: { value: 'a@example.com' }, format: { value: 'HD' } });
    expect(r.status, JSON.stringify(r.body)).toBe(201);
    expect(r.body.data.extras.value).toEqual([]);
    expect(r.body.data.reels.value).toBeNull();
    expect(r.body.data.notes.value).toBe('');
  });

  const bad: [string, Record<string, unknown>, string, string][] = [
    ['a missing required field', { ...GOOD, format: undefined }, 'field_required', 'format'],
    ['an empty required field', { ...GOOD, title: { value: '  ' } }, 'field_required', 'title'],
    ['an unknown field', { ...GOOD, colour: { value: 'red' } }, 'unknown_field', 'colour'],
    ['an invalid e-mail', { ...GOOD, contact: { value: 'not-an-address' } }, 'invalid_field_value', 'contact'],
    ['an invalid sender e-mail', { ...GOOD, from: { value: 'x@' } }, 'invalid_field_value', 'from'],
    ['a URL that is not http', { ...GOOD, site: { value: 'ftp://example.com' } }, 'invalid_field_value', 'site'],
    ['a number that is not one', { ...GOOD, reels: { value: 'three' } }, 'invalid_field_value', 'reels'],
    ['a date in another format', { ...GOOD, shot_on: { value: '05/01/2024' } }, 'invalid_field_value', 'shot_on'],
    ['an impossible date', { ...GOOD, shot_on: { value: '2024-13-01' } }, 'invalid_field_value', 'shot_on'],
    ['a radio value outside the options', { ...GOOD, format: { value: '8K' } }, 'invalid_field_value', 'format'],
    ['a dropdown value outside the options', { ...GOOD, camera: { value: 'Z' } }, 'invalid_field_value', 'camera'],
    ['a checkbox value outside the options', { ...GOOD, extras: { value: ['LUT', 'Coffee'] } }, 'invalid_field_value', 'extras'],
    ['a checkbox option twice', { ...GOOD, extras: { value: ['LUT', 'LUT'] } }, 'invalid_field_value', 'extras'],
    ['an array for a text field', { ...GOOD, notes: { value: ['a'] } }, 'invalid_field_value', 'notes'],
    ['a readonly field changed', { ...GOOD, studio: { value: 'South' } }, 'field_read_only', 'studio'],
    ['a hidden field set', { ...GOOD, cost_center: { value: 'CC-1' } }, 'field_read_only', 'cost_center'],
    ['a short text over two lines', { ...GOOD, title: { value: 'a\nb' } }, 'invalid_field_value', 'title'],
    ['a control character', { ...GOOD, notes: { value: 'a\u0001' } }, 'invalid_field_value', 'notes'],
    ['a value that is not {value}', { ...GOOD, notes: 'plain' }, 'validation_failed', ''],
  ];
  it.each(bad)('refuses %s with 400 naming the field, storing nothing', async (_label, body, code, field) => {
    const p = await portal();
    const before = await responseCount();
    const r = await respond(p.id, body);
    expect(r.status, JSON.stringify(r.body)).toBe(400);
    expect(r.body.code).toBe(code);
    expect(r.body.message).toContain(field);
    expect(await responseCount()).toBe(before);
  });

  it('needs the access code when the Portal has one (401); another Team\'s key does not replace it', async () => {
    const p = await portal();
    const before = await responseCount();
    const none = await respond(p.id, GOOD, {});
    expect(none.status).toBe(401);
    expect(none.body.code).toBe('access_code_required');
    expect((await respond(p.id, GOOD, withCode('wrong'))).body.code).toBe('invalid_access_code');
    expect((await respond(p.id, GOOD, stranger.h)).status).toBe(401);
    expect((await respond(p.id, GOOD, { 'x-api-key': 'fk_garbage' })).status).toBe(401);
    expect(await responseCount()).toBe(before);
    const open = await portal({ access_code: undefined });
    expect((await respond(open.id, GOOD, {})).status).toBe(201);
  });

  it('answers 404 for an unknown or inactive Portal or one without a form, 409 for a disabled form', async () => {
    expect((await respond('prt_nope', GOOD)).status).toBe(404);
    const inactive = await portal({ active: false });
    expect((await respond(inactive.id, GOOD)).status).toBe(404);
    const bare = await portal({}, null);
    expect((await respond(bare.id, GOOD)).status).toBe(404);
    const p = await portal();
    await call(svc.url, 'PUT', `/v1/metadata/forms/${p.formId}`, { headers: owner.h, body: { name: 'Off', delivery_formats: ['json'], disabled: true } });
    const off = await respond(p.id, GOOD);
    expect(off.status).toBe(409);
    expect(off.body.code).toBe('form_disabled');
  });
});

describe('responses no Package took', () => {
  it('are swept once older than the TTL; taken ones stay', async () => {
    const p = await portal();
    const unused = (await respond(p.id, GOOD)).body.id;
    const taken = (await respond(p.id, GOOD)).body.id;
    expect((await createIn(p.id, { form_data_id: taken })).status).toBe(201);
    const old = new Date(Date.now() - UNUSED_RESPONSE_TTL_MS - 60_000).toISOString();
    await svc.ctx.db.updateTable('form_responses').set({ created_at: old }).where('id', 'in', [unused, taken]).execute();
    const fresh = (await respond(p.id, GOOD)).body.id;
    expect(await sweepUnusedResponses(svc.ctx)).toBeGreaterThanOrEqual(1);
    const left = (await svc.ctx.db.selectFrom('form_responses').select('id').where('id', 'in', [unused, taken, fresh]).execute()).map((r) => r.id).sort();
    expect(left).toEqual([taken, fresh].sort());
  });
});

describe('Portal Packages with a form', () => {
  it('need form_data_id (400), a response to this Portal\'s form (400), used once (409); nothing created on refusal', async () => {
    const p = await portal();
    const other = await portal();
    const mine = (await respond(p.id, GOOD)).body.id;
    const theirs = (await respond(other.id, GOOD)).body.id;
    const before = await packageCount();
    const body = { name: 'x', description: '', sender: 'a@example.com' };
    const missing = await createIn(p.id, body);
    expect([missing.status, missing.body.code]).toEqual([400, 'form_data_required']);
    const foreign = await createIn(p.id, { ...body, form_data_id: theirs });
    expect([foreign.status, foreign.body.code]).toEqual([400, 'invalid_form_data_id']);
    const unknown = await createIn(p.id, { ...body, form_data_id: 'fdr_nope' });
    expect([unknown.status, unknown.body.code]).toEqual([400, 'invalid_form_data_id']);
    expect(await packageCount()).toBe(before);
    expect((await createIn(p.id, { form_data_id: mine })).status).toBe(201);
    const again = await createIn(p.id, { form_data_id: mine });
    expect([again.status, again.body.code]).toEqual([409, 'form_data_used']);
    expect(await packageCount()).toBe(before + 1);
  });

  it('take name, description and sender from the response (its answers win over the body)', async () => {
    const p = await portal();
    const resp = (await respond(p.id, GOOD)).body;
    const r = await createIn(p.id, { name: 'ignored', description: 'ignored', sender: 'ignored@example.com', form_data_id: resp.id });
    expect(r.status, JSON.stringify(r.body)).toBe(201);
    expect(r.body).toMatchObject({ name: 'Reel 12', description: 'Dailies\nday 3', sender: 'cam@example.com', custom_metadata_id: resp.id, terms_accepted_at: null });
    const stored = await svc.ctx.db.selectFrom('form_responses').select('package_id').where('id', '=', resp.id).executeTakeFirstOrThrow();
    expect(stored.package_id).toBe(r.body.id);
  });

  it('still need name, description and sender from the body when the form does not answer them', async () => {
    const p = await portal({}, { name: 'Short', delivery_formats: ['json'], fields: [{ name: 'n', label: 'N', type: 'number', visibility: 'optional' }] });
    const resp = (await respond(p.id, {})).body.id;
    const r = await createIn(p.id, { form_data_id: resp });
    expect(r.status).toBe(400);
    expect(r.body.message).toMatch(/name, description, sender/);
    expect((await createIn(p.id, { name: 'N', description: '', sender: 'a@example.com', form_data_id: resp })).status).toBe(201);
  });

  it('a form answer for the name must match the Portal\'s package_name_format', async () => {
    const p = await portal({ package_name_format: '^PRJ-\\d+$' });
    const resp = (await respond(p.id, GOOD)).body.id;
    const r = await createIn(p.id, { form_data_id: resp });
    expect([r.status, r.body.code]).toEqual([400, 'package_name_format']);
  });
});

describe('delivery at finalize', () => {
  async function delivered(formats: string[], extra?: (pkg: Pkg) => Promise<void>) {
    const p = await portal({}, { name: 'Delivery sheet', delivery_formats: formats, fields: FIELDS });
    const resp = (await respond(p.id, GOOD)).body;
    const pkg = asPkg((await createIn(p.id, { form_data_id: resp.id }, member.h)).body);
    await uploadFile(svc, pkg, 'clip.mov', '', Buffer.from('movie bytes'));
    if (extra) await extra(pkg);
    await finalizePackage(svc, pkg);
    return { p, resp, pkg };
  }

  it('writes metadata.json, .csv and .xml to the Package root: listed, downloadable, in the ZIP, counted', async () => {
    const { pkg, resp } = await delivered(['json', 'csv', 'xml']);
    const files = await call(svc.url, 'GET', `/v1/packages/${pkg.id}/files`, { headers: pkg.h });
    const names = files.body.filter((f: any) => f.kind === 'file').map((f: any) => f.name).sort();
    expect(names).toEqual(['clip.mov', 'metadata.csv', 'metadata.json', 'metadata.xml']);
    const get = async (name: string) => {
      const f = files.body.find((x: any) => x.name === name);
      const dl = await call(svc.url, 'GET', `/v1/packages/${pkg.id}/files/${f.id}/download`, { headers: pkg.h });
      const got = await fetchBytes(dl.body.url);
      expect(got.status).toBe(200);
      expect(got.data.length).toBe(f.size);
      return got.data.toString('utf8');
    };
    const json = JSON.parse(await get('metadata.json'));
    expect(json).toMatchObject({ response_id: resp.id, form_name: 'Delivery sheet', package_id: pkg.id, package_name: 'Reel 12', sender: 'cam@example.com' });
    expect(json.fields.find((f: any) => f.name === 'extras')).toEqual({ name: 'extras', label: 'Extras', type: 'checkbox', value: ['LUT', 'Sound'] });
    expect(json.fields.find((f: any) => f.name === 'cost_center').value).toBe('CC-7');
    const csv = await get('metadata.csv');
    const [head, row] = csv.split('\r\n');
    expect(head).toBe(FIELDS.map((f) => `"${f.name}"`).join(','));
    expect(row).toContain('"3","https://example.com/p"');
    expect(row).toContain('"LUT, Sound"');
    expect(row).toContain(`"'=SUM(A1) ""quoted"", <b>&"`); // no formula; quotes doubled
    const xml = await get('metadata.xml');
    expect(xml).toMatch(/^<\?xml version="1.0" encoding="UTF-8"\?>\n<metadata response_id="fdr_/);
    expect(xml).toContain('<field name="extras" label="Extras" type="checkbox"><value>LUT</value><value>Sound</value></field>');
    expect(xml).toContain('<field name="notes" label="Notes" type="long_text">=SUM(A1) &quot;quoted&quot;, &lt;b&gt;&amp;</field>');
    const got = await call(svc.url, 'GET', `/v1/packages/${pkg.id}`, { headers: pkg.h });
    expect(got.body.total_files).toBe(4);
    const zipEntry = files.body.find((f: any) => f.kind === 'zip_mac');
    const zipUrl = await call(svc.url, 'GET', `/v1/packages/${pkg.id}/files/${zipEntry.id}/download`, { headers: pkg.h });
    const zip = await readZip((await fetchBytes(zipUrl.body.url)).data);
    expect([...zip.keys()].sort()).toEqual(['clip.mov', 'metadata.csv', 'metadata.json', 'metadata.xml']);
    expect(zip.get('metadata.json')!.toString('utf8')).toBe(await get('metadata.json'));
  });

  it('writes only the formats asked for, and none without a response', async () => {
    const { pkg } = await delivered(['xml']);
    const files = await call(svc.url, 'GET', `/v1/packages/${pkg.id}/files`, { headers: pkg.h });
    expect(files.body.filter((f: any) => f.name.startsWith('metadata')).map((f: any) => f.name)).toEqual(['metadata.xml']);
    const bare = await portal({}, null);
    const plain = asPkg((await createIn(bare.id, { name: 'n', description: '', sender: 'a@example.com' }, member.h)).body);
    await uploadFile(svc, plain, 'a.txt', '', Buffer.from('a'));
    await finalizePackage(svc, plain);
    const list = await call(svc.url, 'GET', `/v1/packages/${plain.id}/files`, { headers: plain.h });
    expect(list.body.filter((f: any) => f.kind === 'file').map((f: any) => f.name)).toEqual(['a.txt']);
  });

  it('an uploaded metadata.json keeps its name; the delivered files take a suffix', async () => {
    const { pkg } = await delivered(['json', 'csv'], async (p) => {
      await uploadFile(svc, p, 'metadata.json', '', Buffer.from('{"mine":true}'));
    });
    const files = await call(svc.url, 'GET', `/v1/packages/${pkg.id}/files`, { headers: pkg.h });
    expect(files.body.filter((f: any) => f.kind === 'file').map((f: any) => f.name).sort()).toEqual(['clip.mov', 'metadata (1).csv', 'metadata (1).json', 'metadata.json']);
  });

  it('email_body puts the answers into the recipients\' e-mail', async () => {
    const { pkg } = await delivered(['email_body']);
    const dir = path.join(svc.dataDir, 'outbox');
    const mail = await vi.waitFor(
      async () => {
        const names = (await fs.readdir(dir).catch(() => [] as string[])).filter((f) => f.endsWith('.eml'));
        const all = await Promise.all(names.map((n) => fs.readFile(path.join(dir, n), 'utf8')));
        const mine = all.filter((m) => m.includes('secret=') && /^To: editor@example\.com$/m.test(m) && m.includes('Form answers:') && m.includes('Format: 4K'));
        expect(mine.length).toBeGreaterThan(0);
        return mine[0]!;
      },
      { timeout: 20_000 },
    );
    const text = mail.replace(/=\r?\n/g, '').replace(/=([0-9A-F]{2})/g, (_, h: string) => String.fromCharCode(parseInt(h, 16)));
    expect(text).toContain('Extras: LUT, Sound');
    expect(text).toContain('Cost center: CC-7');
    const files = await call(svc.url, 'GET', `/v1/packages/${pkg.id}/files`, { headers: pkg.h });
    expect(files.body.some((f: any) => f.name.startsWith('metadata'))).toBe(false);
  });

  it('GET /v1/packages/{id}/metadata answers the response with every field (full-access token or member)', async () => {
    const { pkg, resp } = await delivered(['json']);
    const r = await call(svc.url, 'GET', `/v1/packages/${pkg.id}/metadata`, { headers: pkg.h });
    expect(r.status).toBe(200);
    expect(r.body).toMatchObject({ id: resp.id, package_id: pkg.id, form_id: resp.form_id });
    expect(r.body.data.cost_center).toEqual({ value: 'CC-7', label: 'Cost center', type: 'short_text' });
    expect((await call(svc.url, 'GET', `/v1/packages/${pkg.id}/metadata`, { headers: owner.h })).body).toEqual(r.body);
    expect((await call(svc.url, 'GET', `/v1/packages/${pkg.id}/metadata`, { headers: stranger.h })).status).toBe(404);
    expect((await call(svc.url, 'GET', `/v1/packages/${pkg.id}/metadata`)).status).toBe(401);
    const link = await makeLink(svc, pkg);
    const read = (await call(svc.url, 'GET', `/v1/links/${link.id}?secret=${link.secret}`)).body.package_token;
    expect((await call(svc.url, 'GET', `/v1/packages/${pkg.id}/metadata`, { headers: { 'x-package-token': read } })).status).toBe(403);
  });

  it('an anonymous uploader\'s token may not read the metadata (403); a Package without a response answers 404', async () => {
    const p = await portal();
    const resp = (await respond(p.id, GOOD)).body.id;
    const anon = (await createIn(p.id, { form_data_id: resp })).body;
    expect((await call(svc.url, 'GET', `/v1/packages/${anon.id}/metadata`, { headers: { 'x-package-token': anon.access_token } })).status).toBe(403);
    const bare = await portal({}, null);
    const plain = (await createIn(bare.id, { name: 'n', description: '', sender: 'a@example.com' }, member.h)).body;
    const none = await call(svc.url, 'GET', `/v1/packages/${plain.id}/metadata`, { headers: { 'x-package-token': plain.access_token } });
    expect(none.status).toBe(404);
    expect(none.body).toMatchObject({ code: 'not_found', message: expect.stringMatching(/metadata/) });
  });

  it('deleting the Package deletes its response and metadata files', async () => {
    const { pkg, resp } = await delivered(['json']);
    const keys = (await svc.ctx.db.selectFrom('files').select('object_key').where('package_id', '=', pkg.id).execute()).map((f) => f.object_key!);
    expect((await call(svc.url, 'DELETE', `/v1/packages/${pkg.id}`, { headers: pkg.h })).status).toBe(204);
    expect(await svc.ctx.db.selectFrom('form_responses').select('id').where('id', '=', resp.id).executeTakeFirst()).toBeUndefined();
    for (const k of keys) expect(await svc.ctx.storage.objectInfo(k)).toBeNull();
    expect((await call(svc.url, 'GET', `/v1/packages/${pkg.id}`, { headers: pkg.h })).body.custom_metadata_id).toBeNull();
  });
});

describe('Portal terms of service', () => {
  const TERMS = { title: 'Upload terms', text: 'You own what you send.\nWe keep it 30 days.' };

  it('are set, shown in GET and in the public view, and kept when omitted', async () => {
    const p = await portal({ terms_of_service_enabled: true, terms_of_service: TERMS }, null);
    const get = await call(svc.url, 'GET', `/v1/portals/${p.id}`, { headers: owner.h });
    expect(get.body).toMatchObject({ terms_of_service_enabled: true, terms_of_service: TERMS });
    const pub = await call(svc.url, 'GET', `/v1/subdomains/portals/${p.subdomain}`);
    expect(pub.body).toMatchObject({ terms_of_service_enabled: true, terms_of_service: TERMS });
    const put = await call(svc.url, 'PUT', `/v1/portals/${p.id}`, { headers: owner.h, body: { name: 'Inbox', subdomain: p.subdomain } });
    expect(put.body).toMatchObject({ terms_of_service_enabled: true, terms_of_service: TERMS });
    const off = await call(svc.url, 'PUT', `/v1/portals/${p.id}`, { headers: owner.h, body: { name: 'Inbox', subdomain: p.subdomain, terms_of_service_enabled: false } });
    expect(off.body).toMatchObject({ terms_of_service_enabled: false, terms_of_service: TERMS });
    expect((await call(svc.url, 'GET', `/v1/subdomains/portals/${p.subdomain}`)).body).toMatchObject({ terms_of_service_enabled: false, terms_of_service: null });
  });

  it('refuses enabled terms without a title and a text, and over-long ones (400), changing nothing', async () => {
    const p = await portal({}, null);
    const before = await svc.ctx.db.selectFrom('portals').selectAll().where('id', '=', p.id).executeTakeFirstOrThrow();
    const put = (extra: Record<string, unknown>) => call(svc.url, 'PUT', `/v1/portals/${p.id}`, { headers: owner.h, body: { name: 'Inbox', subdomain: p.subdomain, ...extra } });
    const none = await put({ terms_of_service_enabled: true });
    expect([none.status, none.body.code]).toEqual([400, 'terms_required']);
    expect((await put({ terms_of_service_enabled: true, terms_of_service: null })).status).toBe(400);
    for (const t of [{ title: '', text: 'x' }, { title: 'x', text: '' }, { title: 'x'.repeat(256), text: 'x' }, { title: 'x', text: 'x'.repeat(100_001) }, { text: 'x' }]) {
      const r = await put({ terms_of_service_enabled: true, terms_of_service: t });
      expect(r.status, JSON.stringify(t)).toBe(400);
      expect(r.body).toMatchObject({ code: expect.stringMatching(/\S/), message: expect.stringMatching(/\S/) });
    }
    expect(await svc.ctx.db.selectFrom('portals').selectAll().where('id', '=', p.id).executeTakeFirstOrThrow()).toEqual(before);
    const create = await call(svc.url, 'POST', `/v1/teams/${owner.teamId}/portals`, { headers: owner.h, body: { name: 'T', subdomain: `answers-${++seq}`, terms_of_service_enabled: true } });
    expect(create.status).toBe(400);
  });

  it('a Portal Package needs terms_accepted: true (400 terms_not_accepted); the acceptance time is kept on the Package', async () => {
    const p = await portal({ terms_of_service_enabled: true, terms_of_service: TERMS }, null);
    const body = { name: 'n', description: '', sender: 'a@example.com' };
    const before = await packageCount();
    for (const extra of [{}, { terms_accepted: false }]) {
      const r = await createIn(p.id, { ...body, ...extra });
      expect([r.status, r.body.code]).toEqual([400, 'terms_not_accepted']);
    }
    expect((await createIn(p.id, { ...body, terms_accepted: true }, {})).status).toBe(401); // the access code comes first
    expect(await packageCount()).toBe(before);
    const ok = await createIn(p.id, { ...body, terms_accepted: true });
    expect(ok.status).toBe(201);
    expect(ok.body.terms_accepted_at).toMatch(/^\d{4}-\d{2}-\d{2}T/);
    const got = await call(svc.url, 'GET', `/v1/packages/${ok.body.id}`, { headers: owner.h });
    expect(got.body.terms_accepted_at).toBe(ok.body.terms_accepted_at);
    const noTerms = await portal({}, null);
    expect((await createIn(noTerms.id, body)).body.terms_accepted_at).toBeNull();
  });
});
