// Filters over HTTP: create, get, update (rules overwrite), delete and the
// Team's list; every refusal of the rules (0 or 21 rules, a criterion used
// twice, a bad regex, a pattern RE2 refuses to build); roles; and a stored
// filter applied with filterMatches().
import { afterAll, beforeAll, expect, it } from 'vitest';
import { call, startTestService, type TestService } from '../../helpers/hosted.js';
import { teamActors, type TeamActors } from '../../helpers/auth.js';
import { filterMatches } from '../../../src/hosted/services/filterMatch.js';

let svc: TestService;
let t: TeamActors;
beforeAll(async () => {
  svc = await startTestService();
  t = await teamActors(svc, 'filters');
});
afterAll(() => svc?.close());

const movOnly = { action: 'include', criterion: 'file_name', operator: 'regex_match', values: ['\\.mov$'] };
const noProxies = { action: 'exclude', criterion: 'file_path', operator: 'regex_match', values: ['(^|/)proxies/'] };
const create = (body: unknown, h = t.owner.h) => call(svc.url, 'POST', `/v1/teams/${t.owner.teamId}/filters`, { headers: h, body });

it('create answers 201; get, list, update (rules replaced whole, name kept when omitted) and delete', async () => {
  const r = await create({ name: 'Camera originals', rules: [movOnly] });
  expect(r.status, JSON.stringify(r.body)).toBe(201);
  expect(r.body).toEqual({ id: expect.stringMatching(/^flt_/), name: 'Camera originals', rules: [movOnly], created_at: expect.any(String), updated_at: expect.any(String) });
  const id = r.body.id;
  expect((await call(svc.url, 'GET', `/v1/filters/${id}`, { headers: t.member.h })).body).toEqual(r.body);

  const put = await call(svc.url, 'PUT', `/v1/filters/${id}`, { headers: t.admin.h, body: { rules: [noProxies, movOnly] } });
  expect(put.status, JSON.stringify(put.body)).toBe(200);
  expect(put.body).toMatchObject({ id, name: 'Camera originals', rules: [noProxies, movOnly] });
  const renamed = await call(svc.url, 'PUT', `/v1/filters/${id}`, { headers: t.owner.h, body: { name: 'Originals', rules: [noProxies] } });
  expect(renamed.body).toMatchObject({ name: 'Originals', rules: [noProxies] });
  expect((await call(svc.url, 'GET', `/v1/filters/${id}`, { headers: t.owner.h })).body.rules).toEqual([noProxies]);
  expect((await call(svc.url, 'GET', `/v1/teams/${t.owner.teamId}/filters`, { headers: t.member.h })).body.map((f: any) => f.id)).toContain(id);

  expect((await call(svc.url, 'DELETE', `/v1/filters/${id}`, { headers: t.owner.h })).status).toBe(204);
  expect((await call(svc.url, 'GET', `/v1/filters/${id}`, { headers: t.owner.h })).status).toBe(404);
  expect((await call(svc.url, 'DELETE', `/v1/filters/${id}`, { headers: t.owner.h })).status).toBe(404);
});

it('refuses rules that break the spec with 400 and {code, message}: on create and on update alike', async () => {
  const ok = await create({ name: 'ok', rules: [movOnly] });
  const rx = (v: string) => ({ ...movOnly, values: ['\\.wav$', v] });
  const cases: [unknown[], string, RegExp?][] = [
    [[], 'validation_failed'],
    [Array.from({ length: 21 }, () => movOnly), 'validation_failed'],
    [[movOnly, { ...movOnly, action: 'exclude', values: ['x'] }], 'duplicate_criterion', /file_name is used twice/],
    [[rx('(unclosed')], 'invalid_regex', /rules\[0\]\.values\[1\].*missing closing \)/],
    [[rx('(a)\\1')], 'invalid_regex', /invalid escape/],
    [[rx('x(?!y)')], 'invalid_regex'],
    // Catastrophic in size: a program of a million states is refused when written.
    [[rx('((a{100}){100}){100}')], 'invalid_regex', /invalid repeat count/],
    [[{ ...movOnly, criterion: 'file_size' }], 'validation_failed'],
    [[{ ...movOnly, operator: 'equals' }], 'validation_failed'],
    [[{ ...movOnly, values: [] }], 'validation_failed'],
    [[{ ...movOnly, action: 'keep' }], 'validation_failed'],
  ];
  for (const [rules, code, message] of cases) {
    for (const r of [await create({ name: 'bad', rules }), await call(svc.url, 'PUT', `/v1/filters/${ok.body.id}`, { headers: t.owner.h, body: { rules } })]) {
      expect([r.status, r.body.code], JSON.stringify(rules).slice(0, 200)).toEqual([400, code]);
      if (message) expect(r.body.message).toMatch(message);
    }
  }
  expect((await create({ rules: [movOnly] })).body.code).toBe('validation_failed'); // name is required on create
  // The refused updates changed nothing.
  expect((await call(svc.url, 'GET', `/v1/filters/${ok.body.id}`, { headers: t.owner.h })).body.rules).toEqual([movOnly]);
});

it('a pattern that would backtrack catastrophically in JavaScript is accepted: the service matches with RE2, in linear time', async () => {
  const r = await create({ name: 'nested', rules: [{ ...movOnly, values: ['^(a+)+$'] }] });
  expect(r.status, JSON.stringify(r.body)).toBe(201);
  expect(filterMatches(r.body, { path: '', name: 'a'.repeat(4000) + '!' })).toBe(false);
});

it('Owners and Admins write filters, members read them; another Team gets 404', async () => {
  const r = await create({ name: 'mine', rules: [movOnly] });
  expect((await create({ name: 'x', rules: [movOnly] }, t.member.h)).status).toBe(403);
  expect((await call(svc.url, 'PUT', `/v1/filters/${r.body.id}`, { headers: t.member.h, body: { rules: [movOnly] } })).status).toBe(403);
  expect((await call(svc.url, 'DELETE', `/v1/filters/${r.body.id}`, { headers: t.member.h })).status).toBe(403);
  for (const [m, body] of [['GET'], ['PUT', { rules: [movOnly] }], ['DELETE']] as const) {
    expect((await call(svc.url, m, `/v1/filters/${r.body.id}`, { headers: t.stranger.h, ...(body ? { body } : {}) })).status).toBe(404);
  }
  expect((await create({ name: 'x', rules: [movOnly] }, t.stranger.h)).status).toBe(404);
  expect((await call(svc.url, 'GET', `/v1/filters/${r.body.id}`)).status).toBe(401);
});

it('a stored filter narrows files with AND semantics', async () => {
  const r = await create({ name: 'originals', rules: [movOnly, noProxies] });
  const stored = (await call(svc.url, 'GET', `/v1/filters/${r.body.id}`, { headers: t.owner.h })).body;
  const files = [
    { path: 'day1/cam-a', name: 'A001.mov' },
    { path: 'day1/proxies', name: 'A001.mov' },
    { path: 'day1/cam-a', name: 'A001.wav' },
    { path: '', name: 'B.mov' },
  ];
  expect(files.filter((f) => filterMatches(stored, f))).toEqual([files[0], files[3]]);
});
