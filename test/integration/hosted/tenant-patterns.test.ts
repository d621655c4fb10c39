// A tenant's regular expression (a Portal's package_name_format) runs on RE2:
// a pattern that backtracks catastrophically in JavaScript's engine answers an
// anonymous visitor at once, and the service stays free for everyone else.
// Patterns RE2 cannot run (lookaround, backreferences) are refused when set.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, startTestService, type TestService } from '../../helpers/hosted.js';
import { ownerActor, type Actor } from '../../helpers/auth.js';

let svc: TestService;
let owner: Actor;

beforeAll(async () => {
  svc = await startTestService();
  owner = await ownerActor(svc);
});
afterAll(async () => svc?.close());

let seq = 0;
const portal = (body: Record<string, unknown>) =>
  call(svc.url, 'POST', `/v1/teams/${owner.teamId}/portals`, { headers: owner.h, body: { name: 'Inbox', subdomain: `re-${++seq}`, active: true, ...body } });
const visit = (portalId: string, name: string) =>
  call(svc.url, 'POST', `/v1/portals/${portalId}/packages`, { body: { name, description: '', sender: 'visitor@example.com' } });

describe('package_name_format', () => {
  it('a catastrophic pattern answers a visitor at once, while /healthz answers beside it', async () => {
    const p = await portal({ package_name_format: '^(a+)+$' });
    expect(p.status, JSON.stringify(p.body)).toBe(201);
    // On JavaScript's engine each added "a" doubles the time: 24 take 0.13 s here, 34 two minutes, past the
    // test's timeout, with the service (in this process) frozen meanwhile. RE2 answers in microseconds.
    const name = `${'a'.repeat(34)}!`;
    const [refused, health] = await Promise.all([visit(p.body.id, name), call(svc.url, 'GET', '/healthz')]);
    expect([refused.status, refused.body.code]).toEqual([400, 'package_name_format']);
    expect(health.status).toBe(200);
    expect((await visit(p.body.id, 'a'.repeat(34))).status).toBe(201);
  });

  it.each([
    ['a lookahead', '^(?=PRJ)\\w+$', /Perl syntax/],
    ['a backreference', '^(a)\\1$', /invalid escape/],
    ['an exploding repeat count', '((a{100}){100}){100}', /invalid repeat count/],
    ['bad syntax', '(unclosed', /missing closing \)/],
  ])('%s is refused when set (400 invalid_package_name_format, saying why)', async (_what, format, why) => {
    const r = await portal({ package_name_format: format });
    expect([r.status, r.body.code]).toEqual([400, 'invalid_package_name_format']);
    expect(r.body.message).toMatch(why);
  });

  it('a format stored before formats ran on RE2 refuses Packages with 409 rather than guessing', async () => {
    const p = await portal({});
    await svc.ctx.db.updateTable('portals').set({ package_name_format: '^(?!tmp)' }).where('id', '=', p.body.id).execute();
    const r = await visit(p.body.id, 'anything');
    expect([r.status, r.body.code]).toEqual([409, 'invalid_package_name_format']);
  });
});
