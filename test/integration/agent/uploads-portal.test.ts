// Portal uploads through the agent (POST /portals/uploads): no session needed,
// the Portal found by subdomain, the access code as the credential, the Portal's
// restrictions checked before anything is created.
import { createHash } from 'node:crypto';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, test, vi } from 'vitest';
import { call, startTestService, type TestService } from '../../helpers/hosted.js';
import { ownerActor, type Actor } from '../../helpers/auth.js';
import { startTestAgent, type TestAgent } from '../../helpers/agent.js';
import { downloadAll, MiB } from '../../helpers/flow.js';

const sha = (b: Buffer) => createHash('sha256').update(b).digest('hex');
const CODE = 'open sesame/ü';

let svc: TestService;
let owner: Actor;
let agent: TestAgent;
let tmp: string;

async function portal(subdomain: string, extra: Record<string, unknown> = {}) {
  const r = await call(svc.url, 'POST', `/v1/teams/${owner.teamId}/portals`, {
    headers: owner.h,
    body: { name: `Portal ${subdomain}`, subdomain, active: true, recipients: ['desk@example.com'], ...extra },
  });
  expect(r.status, JSON.stringify(r.body)).toBe(201);
  return r.body;
}

beforeAll(async () => {
  svc = await startTestService();
  owner = await ownerActor(svc);
  agent = await startTestAgent(svc, { 'chunk-size': String(5 * MiB) }); // never signed in
  tmp = await fs.mkdtemp(path.join(os.tmpdir(), 'ferry-portal-uploads-'));
});

afterAll(async () => {
  await agent?.close();
  await svc?.close();
  if (tmp) await fs.rm(tmp, { recursive: true, force: true });
});

const packageCount = async () => (await svc.ctx.db.selectFrom('packages').select('id').execute()).length;

describe('POST /portals/uploads', () => {
  test('without a session, with the access code: the Portal Package arrives complete and byte-identical', async () => {
    const p = await portal('rushes', { access_code: CODE });
    const dir = path.join(tmp, 'day1');
    await fs.mkdir(dir);
    const data = Buffer.concat([Buffer.alloc(6 * MiB, 1), Buffer.from('end')]);
    await fs.writeFile(path.join(dir, 'clip.mov'), data);
    const r = await call(agent.url, 'POST', '/portals/uploads', {
      body: { subdomain: 'RUSHES', sender_email: 'Shooter@Example.com', paths: [dir], access_code: CODE, package_name: 'Day 1' },
    });
    expect(r.status, JSON.stringify(r.body)).toBe(201);
    expect(r.body).toMatchObject({ type: 'portal', package_name: 'Day 1', state: 'transferring', size: data.length });
    await vi.waitFor(
      async () => {
        const u = (await call(agent.url, 'GET', `/uploads/${r.body.upload_id}`)).body;
        expect(u.error).toBeUndefined();
        expect(u.state).toBe('complete');
      },
      { timeout: 30_000, interval: 50 },
    );
    const pkg = await call(svc.url, 'GET', `/v1/packages/${r.body.package_id}`, { headers: owner.h });
    expect(pkg.body).toMatchObject({ state: 'finalized', sender: 'shooter@example.com', total_files: 1, size: data.length });
    const row = await svc.ctx.db.selectFrom('packages').select('portal_id').where('id', '=', r.body.package_id).executeTakeFirstOrThrow();
    expect(row.portal_id).toBe(p.id);

    // Links are for Team uploads only.
    const link = await call(agent.url, 'POST', `/uploads/${r.body.upload_id}/link`, { body: {} });
    expect(link.status).toBe(409);
    const made = await call(svc.url, 'POST', `/v1/packages/${r.body.package_id}/links`, { headers: owner.h, body: {} });
    const got = await downloadAll(svc, made.body);
    expect(sha(got.get('day1/clip.mov')!)).toBe(sha(data));
  });

  test('a wrong access code answers 403 and leaves no upload behind', async () => {
    await portal('locked', { access_code: CODE });
    const file = path.join(tmp, 'x.txt');
    await fs.writeFile(file, 'x');
    const before = await packageCount();
    const r = await call(agent.url, 'POST', '/portals/uploads', { body: { subdomain: 'locked', sender_email: 'a@example.com', paths: [file], access_code: 'nope' } });
    expect(r.status).toBe(403);
    expect(r.body).toEqual({ code: 262148, message: expect.stringContaining('access code') });
    expect(await packageCount()).toBe(before);
    expect((await call(agent.url, 'GET', '/uploads')).body.filter((u: any) => u.package_name === 'x.txt')).toEqual([]);
  });

  test('paths that break the Portal\'s restrictions, an unknown Portal and bad bodies: refused, nothing created', async () => {
    await portal('strict', { package_size_restriction_enabled: true, max_file_size: 1000, file_type_restriction_enabled: true, file_types: ['.txt'] });
    const big = path.join(tmp, 'big.txt');
    await fs.writeFile(big, Buffer.alloc(2000, 1));
    const wrongType = path.join(tmp, 'small.jpg');
    await fs.writeFile(wrongType, 'jpg');
    const before = await packageCount();
    const listBefore = (await call(agent.url, 'GET', '/uploads')).body.length;
    const cases: [number, unknown][] = [
      [400, { subdomain: 'strict', sender_email: 'a@example.com', paths: [big] }],
      [400, { subdomain: 'strict', sender_email: 'a@example.com', paths: [wrongType] }],
      [404, { subdomain: 'no-such-portal', sender_email: 'a@example.com', paths: [big] }],
      [400, { subdomain: 'strict', paths: [big] }],
      [400, { subdomain: 'strict', sender_email: 'not-an-email', paths: [big] }],
      [400, { subdomain: 'strict', sender_email: 'a@example.com', paths: ['relative.txt'] }],
      [400, { sender_email: 'a@example.com', paths: [big] }],
    ];
    for (const [status, body] of cases) {
      const r = await call(agent.url, 'POST', '/portals/uploads', { body });
      expect(r.status, `${JSON.stringify(body)}: ${JSON.stringify(r.body)}`).toBe(status);
      expect(r.body).toMatchObject({ code: expect.any(Number), message: expect.any(String) });
    }
    expect(await packageCount()).toBe(before);
    expect((await call(agent.url, 'GET', '/uploads')).body).toHaveLength(listBefore);
  });

  test('a Portal with terms of service: refused (400, nothing created) until the sender accepts them, and then the acceptance is kept', async () => {
    await portal('with-terms', { terms_of_service_enabled: true, terms_of_service: { title: 'Delivery terms', text: 'Kept 30 days.' } });
    const dir = path.join(tmp, 'terms');
    await fs.mkdir(dir);
    await fs.writeFile(path.join(dir, 'a.txt'), 'terms accepted');
    const before = await packageCount();
    const body = { subdomain: 'with-terms', sender_email: 'a@example.com', paths: [dir] };
    const refused = await call(agent.url, 'POST', '/portals/uploads', { body });
    expect(refused.status).toBe(400);
    expect(refused.body.message).toContain('accept its terms of service ("Delivery terms"');
    expect(await packageCount()).toBe(before);

    const r = await call(agent.url, 'POST', '/portals/uploads', { body: { ...body, accept_terms: true } });
    expect(r.status, JSON.stringify(r.body)).toBe(201);
    await vi.waitFor(async () => expect((await call(agent.url, 'GET', `/uploads/${r.body.upload_id}`)).body.state).toBe('complete'), { timeout: 30_000, interval: 50 });
    const pkg = await call(svc.url, 'GET', `/v1/packages/${r.body.package_id}`, { headers: owner.h });
    expect(pkg.body.terms_accepted_at).toEqual(expect.any(String));
  });

  test('a Portal with an enabled metadata form (even one of hidden fields only) is refused with 400, nothing created', async () => {
    const p = await portal('with-form');
    const form = await call(svc.url, 'POST', `/v1/portals/${p.id}/form`, {
      headers: owner.h,
      body: { name: 'Sheet', delivery_formats: ['json'], fields: [{ name: 'cc', label: 'Cost center', type: 'short_text', visibility: 'hidden', default_value: 'CC-1' }] },
    });
    expect(form.status, JSON.stringify(form.body)).toBe(201);
    const file = path.join(tmp, 'form.txt');
    await fs.writeFile(file, 'x');
    const before = await packageCount();
    const r = await call(agent.url, 'POST', '/portals/uploads', { body: { subdomain: 'with-form', sender_email: 'a@example.com', paths: [file] } });
    expect(r.status, JSON.stringify(r.body)).toBe(400);
    expect(r.body.message).toMatch(/metadata form/);
    expect(await packageCount()).toBe(before);
  });
});
