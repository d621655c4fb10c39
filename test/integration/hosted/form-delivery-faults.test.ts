// Metadata delivery when the store fails mid-way: finalize answers 503, the
// Package stays new without any metadata file, and a finalize retried once the
// store is back delivers the whole set.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call } from '../../helpers/hosted.js';
import { ownerActor, type Actor } from '../../helpers/auth.js';
import { fetchBytes, uploadFile, type Pkg } from '../../helpers/flow.js';
import { startServiceBehindFaultProxy, type FaultProxy } from '../../helpers/faultProxy.js';
import type { Proxied } from '../../helpers/proxiedService.js';

let env: Proxied<FaultProxy>;
let owner: Actor;

beforeAll(async () => {
  env = await startServiceBehindFaultProxy();
  owner = await ownerActor(env.svc);
});
afterAll(async () => env?.close());

describe('finalize with a form response while the store fails', () => {
  it('writes no half set: 503, still new, no metadata rows; the retry delivers json, csv and xml', async () => {
    const { svc, proxy } = env;
    const portal = await call(svc.url, 'POST', `/v1/teams/${owner.teamId}/portals`, { headers: owner.h, body: { name: 'Inbox', subdomain: 'faulty', active: true } });
    const form = await call(svc.url, 'POST', `/v1/portals/${portal.body.id}/form`, {
      headers: owner.h,
      body: { name: 'Sheet', delivery_formats: ['json', 'csv', 'xml'], fields: [{ name: 'title', label: 'Title', type: 'package_name', visibility: 'required' }] },
    });
    expect(form.status, JSON.stringify(form.body)).toBe(201);
    const resp = await call(svc.url, 'POST', `/v1/portals/${portal.body.id}/form/responses`, { body: { title: { value: 'Night shoot' } } });
    expect(resp.status, JSON.stringify(resp.body)).toBe(201);
    const created = await call(svc.url, 'POST', `/v1/portals/${portal.body.id}/packages`, { headers: owner.h, body: { form_data_id: resp.body.id, description: '', sender: 'a@example.com' } });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    const pkg: Pkg = { id: created.body.id, token: created.body.access_token, h: { 'x-package-token': created.body.access_token }, body: created.body };
    await uploadFile(svc, pkg, 'clip.mov', '', Buffer.from('bytes'));

    // The second of the three objects cannot be written.
    await proxy.rules((s) => s.forPut(/form-metadata\.csv/).always().thenReply(500, '<Error><Code>InternalError</Code></Error>'));
    const failed = await call(svc.url, 'POST', `/v1/packages/${pkg.id}/finalize`, { headers: pkg.h });
    expect(failed.status).toBe(503);
    expect(failed.body.code).toBe('storage_unavailable');
    const row = await svc.ctx.db.selectFrom('packages').select(['state']).where('id', '=', pkg.id).executeTakeFirstOrThrow();
    expect(row.state).toBe('new');
    const names = async () => (await svc.ctx.db.selectFrom('files').select('name').where('package_id', '=', pkg.id).orderBy('name').execute()).map((f) => f.name);
    expect(await names()).toEqual(['clip.mov']);

    await proxy.rules();
    const retried = await call(svc.url, 'POST', `/v1/packages/${pkg.id}/finalize`, { headers: pkg.h });
    expect(retried.status, JSON.stringify(retried.body)).toBe(204);
    expect(await names()).toEqual(['clip.mov', 'metadata.csv', 'metadata.json', 'metadata.xml']);
    const files = await call(svc.url, 'GET', `/v1/packages/${pkg.id}/files`, { headers: pkg.h });
    const csv = files.body.find((f: any) => f.name === 'metadata.csv');
    const dl = await call(svc.url, 'GET', `/v1/packages/${pkg.id}/files/${csv.id}/download`, { headers: pkg.h });
    expect((await fetchBytes(dl.body.url)).data.toString('utf8')).toBe('"title"\r\n"Night shoot"\r\n');
  });
});
