// Webhook delivery through the jobs table, against real HTTP receivers on
// 127.0.0.1: retried with back-off until a 2xx (each attempt recorded with its
// status, the same event_id every time), given up after 5 attempts, errors
// without a status recorded as such, and carried on after a restart.
import fs from 'node:fs/promises';
import { afterAll, beforeAll, expect, test } from 'vitest';
import { call, openServiceDatabase, startTestService, type TestService } from '../../helpers/hosted.js';
import { ownerActor, type Actor } from '../../helpers/auth.js';
import { startReceiver, type Receiver } from '../../helpers/receiver.js';
import { waitFor } from '../../helpers/downloads.js';

// Fast back-off (50, 100, 200, 400 ms) and a short timeout so these run in seconds. The receivers are on
// 127.0.0.1 on purpose: the outbound guard allows that address here (outbound-guard.test.ts tests it on).
const FLAGS = { 'webhook-retry-base-ms': '50', 'webhook-timeout-ms': '300', 'jobs-poll-ms': '50', 'allow-private-targets': '127.0.0.1/32' };

let svc: TestService;
let owner: Actor;
const receivers: Receiver[] = [];

beforeAll(async () => {
  svc = await startTestService(FLAGS);
  owner = await ownerActor(svc);
});
afterAll(async () => {
  await svc?.close();
  for (const r of receivers) await r.close();
});

async function receiver(answer: Parameters<typeof startReceiver>[0]) {
  const r = await startReceiver(answer);
  receivers.push(r);
  return r;
}

/** A webhook on package.created at `url`, active, in a Team of its own so that only it receives the test's events. */
async function hookedTeam(s: TestService, url: string): Promise<{ actor: Actor; hookId: string }> {
  const actor = await ownerActor(s);
  // Any other active webhook of the owner's Team would get the same events: deactivate them.
  const others = await call(s.url, 'GET', `/v1/teams/${actor.teamId}/custom_webhooks`, { headers: actor.h });
  for (const h of others.body) {
    await call(s.url, 'PUT', `/v1/custom_webhooks/${h.id}`, { headers: actor.h, body: { active: false, events: h.events, method: h.method, url: h.url } });
  }
  const r = await call(s.url, 'POST', `/v1/teams/${actor.teamId}/custom_webhooks`, {
    headers: actor.h,
    body: { active: true, events: ['package.created'], method: 'POST', url, name: 'delivery test' },
  });
  expect(r.status, JSON.stringify(r.body)).toBe(201);
  return { actor, hookId: r.body.id };
}

async function createTeamPackage(s: TestService, actor: Actor): Promise<string> {
  const r = await call(s.url, 'POST', `/v1/teams/${actor.teamId}/packages`, { headers: actor.h, body: { name: 'Rushes', description: '', recipients: [] } });
  expect(r.status, JSON.stringify(r.body)).toBe(201);
  return r.body.id;
}

const events = async (s: TestService, actor: Actor, hookId: string) => {
  const r = await call(s.url, 'GET', `/v1/custom_webhooks/${hookId}/events`, { headers: actor.h });
  expect(r.status, JSON.stringify(r.body)).toBe(200);
  return r.body.records as any[];
};

/** The only event of the webhook, once it is `state`. */
const settled = (s: TestService, actor: Actor, hookId: string, state: string) =>
  waitFor(`the event to be ${state}`, async () => {
    const [e] = await events(s, actor, hookId);
    return e?.state === state ? e : undefined;
  });

test('a receiver that fails 3 times then answers 200: 4 attempts recorded, delivered once, the same event_id each time', async () => {
  const rx = await receiver((n) => (n <= 3 ? 500 : 200));
  const { actor, hookId } = await hookedTeam(svc, rx.url);
  const packageId = await createTeamPackage(svc, actor);

  const event = await settled(svc, actor, hookId, 'delivered');
  expect(event.attempts.map((a: any) => [a.attempt, a.status, a.error])).toEqual([
    [1, 500, null],
    [2, 500, null],
    [3, 500, null],
    [4, 200, null],
  ]);
  for (const a of event.attempts) expect(a.finished_at >= a.started_at).toBe(true);
  expect(rx.requests).toHaveLength(4);
  expect(new Set(rx.requests.map((r) => r.body.event_id))).toEqual(new Set([event.event_id]));
  // Every attempt sends the same bytes.
  expect(new Set(rx.requests.map((r) => JSON.stringify(r.body))).size).toBe(1);
  expect(rx.requests[0]!.body).toMatchObject({ event_type: 'package.created', custom_webhook_id: hookId, object: { id: packageId } });
  // Delivered: nothing left in the jobs table for it.
  expect(await svc.ctx.db.selectFrom('jobs').selectAll().where('payload', 'like', `%${event.event_id}%`).execute()).toEqual([]);
});

test('a receiver that always fails: 5 attempts, then given up', async () => {
  const rx = await receiver(() => 503);
  const { actor, hookId } = await hookedTeam(svc, rx.url);
  await createTeamPackage(svc, actor);

  const event = await settled(svc, actor, hookId, 'failed');
  expect(event.attempts.map((a: any) => a.status)).toEqual([503, 503, 503, 503, 503]);
  expect(rx.requests).toHaveLength(5);
  expect(new Set(rx.requests.map((r) => r.body.event_id)).size).toBe(1);
  const job = await svc.ctx.db.selectFrom('jobs').selectAll().where('payload', 'like', `%${event.event_id}%`).executeTakeFirstOrThrow();
  expect(job).toMatchObject({ state: 'failed', attempts: 5, max_attempts: 5, last_error: 'the receiver answered 503' });
  // Given up means given up: no sixth request comes.
  await new Promise((r) => setTimeout(r, 300));
  expect(rx.requests).toHaveLength(5);
});

test('attempts that get no status record why: a refused connection, and no answer within the timeout', async () => {
  const closed = await startReceiver();
  await closed.close(); // its port now refuses connections
  const refused = await hookedTeam(svc, closed.url);
  await createTeamPackage(svc, refused.actor);
  const e1 = await settled(svc, refused.actor, refused.hookId, 'failed');
  expect(e1.attempts).toHaveLength(5);
  for (const a of e1.attempts) {
    expect(a.status).toBeNull();
    // The tenant reads that it was unreachable, not the socket error (its address and port).
    expect(a.error).toBe('unreachable');
  }

  const silent = await receiver((n) => (n === 1 ? 0 : 204));
  const slow = await hookedTeam(svc, silent.url);
  await createTeamPackage(svc, slow.actor);
  const e2 = await settled(svc, slow.actor, slow.hookId, 'delivered');
  expect(e2.attempts.map((a: any) => [a.status, a.error])).toEqual([
    [null, 'no answer within 300 ms'],
    [204, null],
  ]);
});

test('the service restarted between two attempts carries the delivery on', async () => {
  // A service of its own, whose data dir survives the restart; a back-off long enough to stop it in between.
  let first: TestService | undefined = await startTestService({ ...FLAGS, 'webhook-retry-base-ms': '400' });
  let second: TestService | undefined;
  try {
    const rx = await receiver(() => 500);
    const { actor, hookId } = await hookedTeam(first, rx.url);
    await createTeamPackage(first, actor);
    await waitFor('a first failed attempt', async () => ((await events(first!, actor, hookId))[0]?.attempts[0]?.finished_at ? true : undefined));
    await first.stop();
    const before = rx.requests.length;
    const dataDir = first.dataDir;
    first = undefined;
    expect(before).toBeGreaterThanOrEqual(1);

    rx.answer = () => 200;
    second = await startTestService(FLAGS, dataDir);
    const event = await settled(second, actor, hookId, 'delivered');
    expect(rx.requests).toHaveLength(before + 1);
    expect(event.attempts.map((a: any) => a.status)).toEqual([...Array(before).fill(500), 200]);
    expect(new Set(rx.requests.map((r) => r.body.event_id))).toEqual(new Set([event.event_id]));
  } finally {
    await first?.close();
    await second?.close();
  }
});

test("the service's close() within a grace waits for the delivery in flight, which is recorded before the database closes", async () => {
  const s = await startTestService({ ...FLAGS, 'webhook-timeout-ms': '20000' });
  let release!: () => void;
  const released = new Promise<void>((r) => (release = r));
  const rx = await receiver(async () => (await released, 200));
  try {
    const { actor, hookId } = await hookedTeam(s, rx.url);
    await createTeamPackage(s, actor);
    await waitFor('the attempt to reach the receiver', () => (rx.requests.length === 1 ? true : undefined));
    let closed = false;
    const closing = s.stop({ graceMs: 20_000 }).then(() => (closed = true));
    for (let i = 0; i < 20; i++) await new Promise((r) => setTimeout(r, 10));
    expect(closed).toBe(false);
    release();
    await closing;
    // Read the data dir the stopped service left: the attempt was recorded whole.
    const { db, close } = await openServiceDatabase(s.dataDir);
    try {
      const event = await db.selectFrom('webhook_events').selectAll().where('custom_webhook_id', '=', hookId).executeTakeFirstOrThrow();
      expect(event).toMatchObject({ state: 'delivered', attempts: 1 });
      expect(await db.selectFrom('webhook_attempts').select(['attempt', 'status', 'error']).where('event_id', '=', event.id).execute()).toEqual([{ attempt: 1, status: 200, error: null }]);
      expect(await db.selectFrom('jobs').selectAll().execute()).toEqual([]);
    } finally {
      await close();
    }
  } finally {
    release();
    await fs.rm(s.dataDir, { recursive: true, force: true });
  }
});
