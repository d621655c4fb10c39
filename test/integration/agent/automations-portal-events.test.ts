// Portal download automations following the service's Team event stream: with a
// poll interval far longer than the test, a Package finalized into a watched
// Portal is fetched anyway (its package.finalized event), once; a Portal made
// after the automation started is found through the event too (all Portals);
// and a Package of an unwatched Portal is left alone; signing out ends the
// streams. Against a service without
// the stream (404), the automation polls, and does not ask for the stream again.
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { getLocal, type Mockttp } from 'mockttp';
import { afterAll, beforeAll, describe, expect, test, vi } from 'vitest';
import { call, startTestService, type TestService } from '../../helpers/hosted.js';
import { ownerActor, type Actor } from '../../helpers/auth.js';
import { signInAgent, startTestAgent, type TestAgent } from '../../helpers/agent.js';
import { finalizePackage, uploadFile, type Pkg } from '../../helpers/flow.js';

const WAIT = { timeout: 20_000, interval: 100 };

let svc: TestService;
let owner: Actor;
let agent: TestAgent;
let tmp: string;
/** The agent reaches the service through this proxy, which can refuse the polls' Package lists. */
let front: Mockttp;
let pollsRefused = false;
/** Lists of a Team's Portals the service has answered: each poll of an all_portals_download asks one. */
let portalLists = 0;

async function portal(subdomain: string) {
  const r = await call(svc.url, 'POST', `/v1/teams/${owner.teamId}/portals`, { headers: owner.h, body: { name: subdomain, subdomain, active: true } });
  expect(r.status, JSON.stringify(r.body)).toBe(201);
  return r.body as { id: string };
}

async function arrive(portalId: string, name: string): Promise<string> {
  const r = await call(svc.url, 'POST', `/v1/portals/${portalId}/packages`, { body: { name, description: '', sender: 'sender@example.com' } });
  expect(r.status, JSON.stringify(r.body)).toBe(201);
  const pkg: Pkg = { id: r.body.id, token: r.body.access_token, h: { 'x-package-token': r.body.access_token }, body: r.body };
  await uploadFile(svc, pkg, `${name}.txt`, '', Buffer.from(`${name}\n`));
  await finalizePackage(svc, pkg);
  return pkg.id;
}

const records = async (id: string) => (await call(agent.url, 'GET', `/automations/${id}/packages`)).body as any[];

async function create(kind: string, body: Record<string, unknown>): Promise<string> {
  const r = await call(agent.url, 'POST', `/automations/${kind}`, { body: { effective_time: new Date().toISOString(), ...body } });
  expect(r.status, JSON.stringify(r.body)).toBe(201);
  return r.body.automation_id;
}

/** The agent's automations have `n` Team streams open on the service. */
const streamsOpen = (n: number) => vi.waitFor(() => expect(svc.ctx.events.listening()).toBe(n), WAIT);
/**
 * From now on a poll cannot see a Package (its list answers 503), whatever poll is under way:
 * what the agent fetches after this came by the event stream.
 */
const refusePolls = () => void (pollsRefused = true);

beforeAll(async () => {
  // Ten minutes: within this test only the event stream can make a fetch happen after the first poll.
  process.env.FERRY_AGENT_AUTOMATION_POLL_MS = '600000';
  svc = await startTestService();
  owner = await ownerActor(svc);
  front = getLocal();
  await front.start();
  // The event streams pass straight through (a rule with hooks would hold a response until it ends).
  await front.forGet(/\/events(\?|$)/).always().thenForwardTo(svc.url);
  await front.forAnyRequest().always().thenPassThrough({
    beforeRequest: (r) => {
      const at = new URL(r.url);
      if (pollsRefused && r.method === 'GET' && /^\/v1(\.1)?\/portals\/[^/]+\/packages/.test(at.pathname)) {
        return { response: { statusCode: 503, json: { code: 'unavailable', message: 'polls refused by the test' } } };
      }
      return { url: new URL(at.pathname + at.search, svc.url).toString() };
    },
    beforeResponse: (_res, r) => {
      if (r.method === 'GET' && /^\/v1(\.1)?\/teams\/[^/]+\/portals$/.test(new URL(r.url).pathname)) portalLists++;
    },
  });
  agent = await startTestAgent({ url: front.url.replace('localhost', '127.0.0.1') });
  await signInAgent(agent.url, svc);
  tmp = await fs.mkdtemp(path.join(os.tmpdir(), 'ferry-portal-events-'));
});

afterAll(async () => {
  await agent?.close();
  await front?.stop();
  await svc?.close();
  if (tmp) await fs.rm(tmp, { recursive: true, force: true });
  delete process.env.FERRY_AGENT_AUTOMATION_POLL_MS;
});

describe('Portal downloads follow the Team event stream', () => {
  test('a Package finalized into a watched Portal is fetched through the stream, once; another Portal\'s is not', async () => {
    const watched = await portal('evt-watched');
    const other = await portal('evt-other');
    const id = await create('portal_download', { name: 'Watched', portal_subdomain: 'evt-watched', dst_folder: path.join(tmp, 'watched') });
    await streamsOpen(1);
    refusePolls();

    const arrived = await arrive(watched.id, 'first');
    await arrive(other.id, 'elsewhere');
    await vi.waitFor(async () => expect((await records(id)).filter((p) => p.state === 'complete').map((p) => p.package_id)).toEqual([arrived]), WAIT);
    expect(await fs.readFile(path.join(tmp, 'watched', 'first', 'first.txt'), 'utf8')).toBe('first\n');

    // A second one too; the first is not fetched again.
    const second = await arrive(watched.id, 'second');
    await vi.waitFor(async () => expect((await records(id)).filter((p) => p.state === 'complete')).toHaveLength(2), WAIT);
    expect((await records(id)).map((p) => p.package_id).sort()).toEqual([arrived, second].sort());
  });

  test('all_portals_download: a Portal made after the automation started is watched from its first Package on', async () => {
    pollsRefused = false;
    const before = portalLists;
    const id = await create('all_portals_download', { name: 'Everything', team_id: owner.teamId, dst_folder: path.join(tmp, 'all') });
    await streamsOpen(2);
    // Its first poll and the one its opening stream asks for have their lists of Portals, made before
    // the Portal below exists; the next poll is ten minutes away: only the event can make one sooner.
    await vi.waitFor(() => expect(portalLists).toBeGreaterThanOrEqual(before + 2), WAIT);
    const late = await portal('evt-late');
    const arrived = await arrive(late.id, 'late');
    await vi.waitFor(async () => expect((await records(id)).filter((p) => p.state === 'complete' && p.package_id === arrived)).toHaveLength(1), WAIT);
  });
});

describe('signing out', () => {
  test("ends the automations' streams (a stream never outlives the session it was opened with); signing in opens them again", async () => {
    await streamsOpen(2);
    expect((await call(agent.url, 'DELETE', '/login')).status).toBe(200);
    await vi.waitFor(() => expect(svc.ctx.events.listening()).toBe(0), { timeout: 30_000, interval: 200 });
    await signInAgent(agent.url, svc);
    await streamsOpen(2);
  }, 60_000);
});

describe('the session revoked on the service', () => {
  test('the service ends the stream, the reconnect is refused (401): the session ends, not a retry loop', async () => {
    // Its own service, which looks at the streams' tokens every 200 ms, and its own agent.
    const own = await startTestService({ 'events-heartbeat-ms': '200' });
    const a = await startTestAgent(own);
    try {
      await signInAgent(a.url, own);
      await call(own.url, 'POST', `/v1/teams/${(await ownerActor(own)).teamId}/portals`, {
        headers: (await ownerActor(own)).h,
        body: { name: 'revoked', subdomain: 'evt-revoked', active: true },
      });
      const r = await call(a.url, 'POST', '/automations/portal_download', {
        body: { name: 'Revoked', portal_subdomain: 'evt-revoked', dst_folder: path.join(tmp, 'revoked'), effective_time: new Date().toISOString() },
      });
      expect(r.status, JSON.stringify(r.body)).toBe(201);
      await vi.waitFor(() => expect(own.ctx.events.listening()).toBe(1), WAIT);
      // The agent's token, ended from elsewhere; its next poll is ten minutes away, its renewal hours.
      const token = (a.agent.ctx.db.prepare('SELECT secret FROM session').get() as { secret: string }).secret;
      expect((await call(own.url, 'POST', '/v1/auth/sign_out_everywhere', { headers: { 'x-user-token': token } })).status).toBe(204);
      // Watched in the agent's store, not by a route (which would meet the revoked token itself).
      await vi.waitFor(() => expect(a.agent.ctx.db.prepare('SELECT secret FROM session').get()).toBeUndefined(), WAIT);
      // The service lets go of the stream once its connection has closed, a moment after the agent forgot the session.
      await vi.waitFor(() => expect(own.ctx.events.listening()).toBe(0), WAIT);
      expect((await call(a.url, 'GET', '/login')).body).toEqual({ code: 262146, message: 'session is nil' });
    } finally {
      await a.close();
      await own.close();
    }
  }, 60_000);
});

describe('a service without the Team event stream', () => {
  test('answers 404: the automation polls at its interval, and asks for the stream no more', async () => {
    // An older service: the same one, behind a proxy that knows no events route.
    const older = getLocal();
    await older.start();
    const asked: string[] = [];
    await older.forGet(/\/v1\/teams\/[^/]+\/events/).thenCallback((r) => {
      asked.push(r.path);
      return { statusCode: 404, json: { code: 'not_found', message: `no route GET ${r.path}` } };
    });
    await older.forAnyRequest().thenForwardTo(svc.url);
    process.env.FERRY_AGENT_AUTOMATION_POLL_MS = '200';
    const polling = await startTestAgent({ url: older.url });
    try {
      await signInAgent(polling.url, svc);
      const watched = await portal('evt-older');
      const r = await call(polling.url, 'POST', '/automations/portal_download', {
        body: { name: 'Older', portal_subdomain: 'evt-older', dst_folder: path.join(tmp, 'older'), effective_time: new Date().toISOString() },
      });
      expect(r.status, JSON.stringify(r.body)).toBe(201);
      await vi.waitFor(() => expect(asked).toHaveLength(1), WAIT);
      const arrived = await arrive(watched.id, 'polled');
      await vi.waitFor(async () => {
        const list = (await call(polling.url, 'GET', `/automations/${r.body.automation_id}/packages`)).body as any[];
        expect(list.filter((p) => p.state === 'complete').map((p) => p.package_id)).toEqual([arrived]);
      }, WAIT);
      expect(asked).toHaveLength(1);
    } finally {
      process.env.FERRY_AGENT_AUTOMATION_POLL_MS = '600000';
      await polling.close();
      await older.stop();
    }
  });
});
