// One credential holds at most --events-max-streams event streams open at once
// (here 3): the next answers 429 with Retry-After, a stream closed frees its
// place, and another credential is not affected. Anonymous Portal uploaders
// are the case: one token once held 300.
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { call, startTestService, type TestService } from '../../helpers/hosted.js';
import { newActor, type Actor } from '../../helpers/auth.js';
import { createPackage, type Pkg } from '../../helpers/flow.js';
import { openEventStream, type EventStream } from '../../helpers/agent.js';

let svc: TestService;
let owner: Actor;
let other: Actor;
const open: EventStream[] = [];

beforeAll(async () => {
  svc = await startTestService({ 'events-max-streams': '3' });
  owner = await newActor(svc, 'cap-owner@example.com');
  other = await newActor(svc, 'cap-other@example.com', { teamId: owner.teamId, role: 'member' });
});
afterAll(async () => {
  for (const s of open) s.close();
  await svc?.close();
});

async function stream(path: string, headers: Record<string, string>): Promise<EventStream> {
  const s = await openEventStream(svc.url + path, { headers });
  open.push(s);
  return s;
}

describe('open event streams per credential', () => {
  it('a package token: the fourth stream answers 429 too_many_streams with Retry-After; closing one frees its place', async () => {
    const pkg: Pkg = await createPackage(svc, owner);
    const held = [];
    for (let i = 0; i < 3; i++) held.push(await stream(`/v1/packages/${pkg.id}`, pkg.h));
    expect(held.map((s) => s.status)).toEqual([200, 200, 200]);
    const refused = await call(svc.url, 'GET', `/v1/packages/${pkg.id}/events`, { headers: pkg.h });
    expect([refused.status, refused.body.code]).toEqual([429, 'too_many_streams']);
    expect(Number(refused.headers.get('retry-after'))).toBeGreaterThan(0);
    // Another credential for the same Package is counted on its own.
    expect((await stream(`/v1/packages/${pkg.id}`, owner.h)).status).toBe(200);
    held[0]!.close();
    await vi.waitFor(async () => expect((await stream(`/v1/packages/${pkg.id}`, pkg.h)).status).toBe(200), { timeout: 10_000, interval: 50 });
  });

  it("an API key counts on its own; a user's tokens count together, whichever sign-in made them; another user has their own", async () => {
    const team = `/v1/teams/${owner.teamId}`;
    for (let i = 0; i < 2; i++) expect((await stream(team, owner.h)).status).toBe(200);
    expect((await call(svc.url, 'GET', `${team}/events`, { headers: owner.h })).status).toBe(429);
    // Four sign-ins (their auth_time differs): four tokens.
    const tokens = await Promise.all([0, 1, 2, 3].map((i) => svc.ctx.tokens.signUser(owner.userId, 0, Math.floor(Date.now() / 1000) - i)));
    expect(new Set(tokens).size).toBe(4);
    for (const t of tokens.slice(0, 3)) expect((await stream(team, { 'x-user-token': t })).status).toBe(200);
    const refused = await call(svc.url, 'GET', `${team}/events`, { headers: { 'x-user-token': tokens[3]! } });
    expect([refused.status, refused.body.code]).toEqual([429, 'too_many_streams']);
    expect((await stream(team, other.h)).status).toBe(200);
  });

  it('HEAD holds no place', async () => {
    for (let i = 0; i < 5; i++) expect((await fetch(`${svc.url}/v1/teams/${owner.teamId}/events`, { method: 'HEAD', headers: other.h })).status).toBe(200);
  });
});
