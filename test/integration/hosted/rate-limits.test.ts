// Rate limits (429 with Retry-After, per credential or per address, counted in
// the database) and the lockout after wrong Link passwords and Portal access codes.
// Each service here sets low limits of its own; the other suites' are out of reach.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, startTestService, type TestService } from '../../helpers/hosted.js';
import { newActor, type Actor } from '../../helpers/auth.js';
import { createPackage, finalizePackage, makeLink } from '../../helpers/flow.js';

const expectRetryAfter = (headers: Headers, max: number) => {
  const s = Number(headers.get('retry-after'));
  expect(Number.isInteger(s)).toBe(true);
  expect(s).toBeGreaterThanOrEqual(1);
  expect(s).toBeLessThanOrEqual(max);
  return s;
};

/** Repeats `attempt` while it answers 429 (a wait of the lockout), and returns the first other answer. */
async function afterTheWait<T extends { status: number }>(attempt: () => Promise<T>): Promise<T> {
  for (;;) {
    const r = await attempt();
    if (r.status !== 429) return r;
    await new Promise((res) => setTimeout(res, 100));
  }
}

describe('rate limits', () => {
  let svc: TestService;
  let a: Actor;
  let b: Actor;

  beforeAll(async () => {
    svc = await startTestService({ 'rate-limit-sign-in': '3', 'rate-limit-public': '5', 'rate-limit-api': '6', 'rate-limit-package': '4' });
    a = await newActor(svc, 'a@example.com');
    b = await newActor(svc, 'b@example.com');
  });
  afterAll(async () => svc?.close());

  it('sign-in: past the limit per address, 429 rate_limited with Retry-After, whatever the password', async () => {
    const signIn = (password: string) => call(svc.url, 'POST', '/v1/auth', { body: { email: svc.owner.email, password } });
    expect((await signIn('wrong')).status).toBe(401);
    expect((await signIn(svc.owner.password)).status).toBe(200);
    expect((await signIn('wrong again')).status).toBe(401);
    const over = await signIn(svc.owner.password);
    expect(over.status).toBe(429);
    expect(over.body).toEqual({ code: 'rate_limited', message: expect.stringMatching(/too many requests/) });
    expectRetryAfter(over.headers, 60);
    // Other classes of the same address are counted apart.
    expect((await call(svc.url, 'GET', '/v1/me', { headers: a.h })).status).toBe(200);
  });

  it('routes without a credential are limited per address; a forged X-Forwarded-For does not escape (no --trust-proxy)', async () => {
    const probe = (ip: string) => call(svc.url, 'GET', '/v1/links/lnk_nothing?secret=x', { headers: { 'x-forwarded-for': ip } });
    for (let i = 1; i <= 5; i++) expect((await probe(`198.51.100.${i}`)).status).toBe(404);
    const over = await probe('198.51.100.99');
    expect(over.status).toBe(429);
    expect(over.body.code).toBe('rate_limited');
    expectRetryAfter(over.headers, 60);
    // A credential that does not verify is no way around it either.
    expect((await call(svc.url, 'GET', '/v1/me', { headers: { 'x-api-key': 'not-a-key' } })).status).toBe(429);
    // Files served as they are (the update feed, page scripts) are not counted.
    expect((await call(svc.url, 'GET', '/updates/latest.yml')).status).toBe(404);
  });

  it('API keys and user tokens are limited per key and per user, not per address', async () => {
    // a's key was used once in the sign-in test: five more make six.
    for (let i = 0; i < 5; i++) expect((await call(svc.url, 'GET', '/v1/me', { headers: a.h })).status).toBe(200);
    const over = await call(svc.url, 'GET', `/v1.1/teams/${a.teamId}/packages`, { headers: a.h });
    expect(over.status).toBe(429);
    expect(over.body.code).toBe('rate_limited');
    expect(over.headers.get('x-ratelimit-limit')).toBe('6');
    // Another key, and the same user's token, have counters of their own.
    expect((await call(svc.url, 'GET', '/v1/me', { headers: b.h })).status).toBe(200);
    expect((await call(svc.url, 'GET', '/v1/me', { headers: { 'x-user-token': a.userToken } })).status).toBe(200);
  });

  it('package tokens are limited per Package', async () => {
    const one = await createPackage(svc, b);
    const two = await createPackage(svc, b);
    for (let i = 0; i < 4; i++) expect((await call(svc.url, 'GET', `/v1/packages/${one.id}`, { headers: one.h })).status).toBe(200);
    const over = await call(svc.url, 'GET', `/v1/packages/${one.id}/files`, { headers: one.h });
    expect(over.status).toBe(429);
    expectRetryAfter(over.headers, 60);
    expect((await call(svc.url, 'GET', `/v1/packages/${two.id}`, { headers: two.h })).status).toBe(200);
  });

  it('the counters live in the database: a restarted service still refuses', async () => {
    const rows = await svc.ctx.db.selectFrom('rate_limits').select(['key', 'count']).where('key', '=', 'signin:127.0.0.1').execute();
    expect(rows).toEqual([{ key: 'signin:127.0.0.1', count: 4 }]);
    await svc.stop();
    svc = await startTestService({ 'rate-limit-sign-in': '3', 'rate-limit-public': '5', 'rate-limit-api': '6', 'rate-limit-package': '4' }, svc.dataDir);
    const r = await call(svc.url, 'POST', '/v1/auth', { body: { email: svc.owner.email, password: svc.owner.password } });
    expect(r.status).toBe(429);
  });

  it('the download page shows a 429 as a page, not JSON', async () => {
    const r = await fetch(`${svc.url}/l/lnk_nothing?secret=x`);
    expect(r.status).toBe(429);
    expect(r.headers.get('content-type')).toMatch(/text\/html/);
    expect(Number(r.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
    expect(await r.text()).toMatch(/Too many requests came from your address\. Try again in \d+ seconds?\./);
  });
});

describe('rate limit windows', () => {
  let svc: TestService;
  beforeAll(async () => {
    // A window of 5 s: the two sign-ins that must fall in one window are sent back to back, and a
    // stalled machine cannot stretch that gap to 5 s; the test then waits for the window to end.
    svc = await startTestService({ 'rate-limit-sign-in': '1', 'rate-limit-window-ms': '5000', 'sweep-interval-ms': '200' });
  });
  afterAll(async () => svc?.close());

  it('a new window counts from zero again, and the sweeper drops ended windows', async () => {
    const signIn = () => call(svc.url, 'POST', '/v1/auth', { body: { email: svc.owner.email, password: svc.owner.password } });
    expect((await signIn()).status).toBe(200);
    expect((await signIn()).status).toBe(429);
    const later = await afterTheWait(signIn);
    expect(later.status).toBe(200);
    await expect.poll(async () => (await svc.ctx.db.selectFrom('rate_limits').selectAll().execute()).length, { timeout: 20_000 }).toBe(0);
  });
});

describe('--trust-proxy with the proxy\'s address', () => {
  let svc: TestService;
  beforeAll(async () => {
    // The test client at 127.0.0.1 plays the proxy.
    svc = await startTestService({ 'trust-proxy': '127.0.0.1', 'rate-limit-public': '2' });
  });
  afterAll(async () => svc?.close());

  it('counts the address the trusted proxy saw, not what the client wrote before it', async () => {
    const probe = (xff: string) => call(svc.url, 'GET', '/v1/links/lnk_nothing?secret=x', { headers: { 'x-forwarded-for': xff } });
    expect((await probe('198.51.100.1, 203.0.113.9')).status).toBe(404);
    expect((await probe('198.51.100.2, 203.0.113.9')).status).toBe(404);
    expect((await probe('198.51.100.3, 203.0.113.9')).status).toBe(429);
    expect((await probe('198.51.100.1, 203.0.113.10')).status).toBe(404);
  });
});

describe('a limit of 0 turns its class off', () => {
  let svc: TestService;
  beforeAll(async () => {
    svc = await startTestService({ 'rate-limit-public': '0' });
  });
  afterAll(async () => svc?.close());

  it('no 429 and no counter', async () => {
    for (let i = 0; i < 5; i++) expect((await call(svc.url, 'GET', '/v1/links/lnk_nothing?secret=x')).status).toBe(404);
    expect(await svc.ctx.db.selectFrom('rate_limits').selectAll().where('key', 'like', 'public:%').execute()).toEqual([]);
  });
});

describe('wrong Link passwords and Portal access codes', () => {
  let svc: TestService;
  let owner: Actor;
  // Behind a proxy: each X-Forwarded-For is a client address of its own.
  beforeAll(async () => {
    // The first wait is 30 s, so a try made at once is always held, however slow the machine; the
    // test ends each wait by moving the last wrong try back in the table (afterTheWait).
    svc = await startTestService({ 'trust-proxy': 'true', 'lockout-free': '2', 'lockout-delay-ms': '30000', 'lockout-after': '5', 'lockout-ms': '600000' });
    owner = await newActor(svc, 'lock-owner@example.com');
  });
  afterAll(async () => svc?.close());

  /** Repeats `attempt` while it is held by a wait, ending each wait by moving the wrong tries back by its Retry-After. */
  async function afterTheWait<T extends { status: number; headers: Headers; body?: any }>(attempt: () => Promise<T>): Promise<T> {
    for (let i = 0; i < 20; i++) {
      const r = await attempt();
      if (r.status !== 429 || r.body?.code !== 'too_many_attempts') return r;
      const ms = Number(r.headers.get('retry-after')) * 1000;
      await svc.ctx.db.updateTable('secret_failures').set((eb) => ({ last_failure_at: eb('last_failure_at', '-', ms) })).where('locked_until', 'is', null).execute();
    }
    throw new Error('still held after 20 waits');
  }

  async function lockedLink() {
    const pkg = await createPackage(svc, owner);
    await finalizePackage(svc, pkg);
    return makeLink(svc, pkg, { password: 'right one' });
  }
  const open = (l: { id: string; secret: string }, password: string, ip: string) =>
    call(svc.url, 'GET', `/v1/links/${l.id}?secret=${l.secret}`, { headers: { 'x-link-password': password, 'x-forwarded-for': ip } });

  it('after the free tries each try waits (429, Retry-After, unchecked); a right password after the wait opens and forgets', async () => {
    const l = await lockedLink();
    expect((await open(l, 'guess 1', '203.0.113.1')).status).toBe(401);
    expect((await open(l, 'guess 2', '203.0.113.1')).status).toBe(401);
    const early = await open(l, 'right one', '203.0.113.1');
    expect(early.status).toBe(429);
    expect(early.body).toEqual({ code: 'too_many_attempts', message: expect.stringMatching(/wait \d+ s/) });
    expectRetryAfter(early.headers, 30);
    // Another address is not held back.
    expect((await open(l, 'right one', '203.0.113.2')).status).toBe(200);
    const later = await afterTheWait(() => open(l, 'right one', '203.0.113.1'));
    expect(later.status).toBe(200);
    expect(await svc.ctx.db.selectFrom('secret_failures').selectAll().where('subject', '=', `link:${l.id}`).execute()).toEqual([]);
  });

  it('the waits grow, and after N wrong tries the Link is locked for that address: even the right password answers 429', async () => {
    const l = await lockedLink();
    const ip = '203.0.113.3';
    for (let i = 1; i <= 5; i++) expect((await afterTheWait(() => open(l, `guess ${i}`, ip))).status).toBe(401);
    const row = await svc.ctx.db.selectFrom('secret_failures').selectAll().where('subject', '=', `link:${l.id}`).executeTakeFirstOrThrow();
    expect(row).toMatchObject({ address: ip, failures: 5 });
    expect(row.locked_until).not.toBeNull();
    const locked = await open(l, 'right one', ip);
    expect(locked.status).toBe(429);
    expect(locked.body.code).toBe('locked_out');
    expect(locked.body.message).toMatch(/locked for your address for 10 min/);
    expectRetryAfter(locked.headers, 600);
    expect(Number(locked.headers.get('retry-after'))).toBeGreaterThan(60);
    // The other addresses, and the Link's other recipients, still open it.
    expect((await open(l, 'right one', '203.0.113.4')).status).toBe(200);
    // Once the lock has run out the count starts over.
    await svc.ctx.db.updateTable('secret_failures').set({ locked_until: Date.now() - 1 }).where('subject', '=', `link:${l.id}`).execute();
    expect((await open(l, 'right one', ip)).status).toBe(200);
  });

  it('a request without a password is not a wrong try; wrong tries on one Link do not hold another back', async () => {
    const l = await lockedLink();
    const other = await lockedLink();
    const ip = '203.0.113.5';
    for (let i = 0; i < 4; i++) {
      const none = await call(svc.url, 'GET', `/v1/links/${l.id}?secret=${l.secret}`, { headers: { 'x-forwarded-for': ip } });
      expect(none.status).toBe(401);
    }
    expect(await svc.ctx.db.selectFrom('secret_failures').selectAll().where('subject', '=', `link:${l.id}`).execute()).toEqual([]);
    for (let i = 1; i <= 2; i++) expect((await open(l, `guess ${i}`, ip)).status).toBe(401);
    expect((await open(l, 'guess 3', ip)).status).toBe(429);
    expect((await open(other, 'right one', ip)).status).toBe(200);
  });

  it('concurrent guesses cannot all slip through one look at the count: at most the lock count are checked', async () => {
    const l = await lockedLink();
    const answers = await Promise.all(Array.from({ length: 20 }, (_, i) => open(l, `burst ${i}`, '203.0.113.8')));
    const checked = answers.filter((r) => r.status === 401).length;
    expect(checked).toBeGreaterThanOrEqual(1);
    expect(checked).toBeLessThanOrEqual(5);
    expect(answers.every((r) => r.status === 401 || r.status === 429)).toBe(true);
    expect(answers.filter((r) => r.status === 429).length).toBe(20 - checked);
  });

  it('the download page counts the same tries and answers a readable page', async () => {
    const l = await lockedLink();
    const post = (password: string) =>
      fetch(`${svc.url}/l/${l.id}?secret=${l.secret}`, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded', 'x-forwarded-for': '203.0.113.6' },
        body: new URLSearchParams({ password }).toString(),
      });
    expect((await post('guess 1')).status).toBe(401);
    expect((await open(l, 'guess 2', '203.0.113.6')).status).toBe(401);
    const held = await post('right one');
    expect(held.status).toBe(429);
    expect(held.headers.get('content-type')).toMatch(/text\/html/);
    expect(held.headers.get('retry-after')).toBe('30');
    expect(await held.text()).toMatch(/Too many wrong passwords were tried from your address\. Try again in 30 seconds\./);
  });

  it('Portal access codes: GET and Package creation share one count per Portal and address', async () => {
    const created = await call(svc.url, 'POST', `/v1/teams/${owner.teamId}/portals`, {
      headers: owner.h,
      body: { name: 'Inbox', subdomain: 'lock-inbox', access_code: 'open sesame', active: true },
    });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    const id = created.body.id as string;
    const ip = '203.0.113.7';
    const get = (code: string) => call(svc.url, 'GET', `/v1/portals/${id}`, { headers: { 'x-access-code': encodeURIComponent(code), 'x-forwarded-for': ip } });
    const upload = (code: string) =>
      call(svc.url, 'POST', `/v1/portals/${id}/packages`, {
        headers: { 'x-access-code': encodeURIComponent(code), 'x-forwarded-for': ip },
        body: { name: 'Rushes', description: '', sender: 'sender@example.com' },
      });
    expect((await get('guess 1')).body.code).toBe('invalid_access_code');
    expect((await upload('guess 2')).body.code).toBe('invalid_access_code');
    const held = await upload('open sesame');
    expect(held.status).toBe(429);
    expect(held.body.code).toBe('too_many_attempts');
    for (let i = 3; i <= 5; i++) expect((await afterTheWait(() => get(`guess ${i}`))).status).toBe(401);
    // The fifth wrong code locked the Portal for this address: the right one is refused at once.
    const locked = await upload('open sesame');
    expect(locked.status).toBe(429);
    expect(locked.body.code).toBe('locked_out');
    expectRetryAfter(locked.headers, 600);
    expect((await get('open sesame')).body.code).toBe('locked_out');
    // A Team member needs no code and is not held back.
    const member = await call(svc.url, 'POST', `/v1/portals/${id}/packages`, { headers: { ...owner.h, 'x-forwarded-for': ip }, body: { name: 'Rushes', description: '', sender: 'sender@example.com' } });
    expect(member.status, JSON.stringify(member.body)).toBe(201);
  });
});
