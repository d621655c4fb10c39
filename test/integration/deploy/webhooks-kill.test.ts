// The deployment of docs/deploy.md (test/helpers/deployment.ts): 1,000 webhook
// events raised through nginx, delivered by the jobs workers of both instances to
// a receiver on 127.0.0.1, while one instance is killed with SIGKILL in the middle.
// Every event_id arrives; an event_id arrives twice only when its first attempt
// had begun before the kill (an attempt in flight in the killed instance, whose
// lease ran out and which the survivor made again), so at most as many as that
// instance ran at once. Runs in the PostgreSQL pass of `npm test` only.
import { performance } from 'node:perf_hooks';
import { afterAll, beforeAll, describe, expect, test, vi } from 'vitest';
import { call } from '../../helpers/hosted.js';
import { deployOwner as owner, startDeployment, type Deployment } from '../../helpers/deployment.js';
import { startReceiver, type Receiver } from '../../helpers/receiver.js';
import { onPostgres } from '../../helpers/postgres.js';
import { onlyIf, POSTGRES_ONLY } from '../../helpers/skip.js';

vi.setConfig({ testTimeout: 300_000, hookTimeout: 180_000 });

const EVENTS = 1000;
const CONCURRENCY = 4; // --jobs-concurrency of each instance
const FLAGS = {
  'jobs-concurrency': String(CONCURRENCY),
  'jobs-poll-ms': '100',
  // A killed instance's jobs are taken over once their lease runs out: 2 s, not a minute.
  'jobs-lease-ms': '2000',
  // Attempts held by the receiver's gate must not time out meanwhile.
  'webhook-timeout-ms': '120000',
  'webhook-retry-base-ms': '200',
  // The receiver is on 127.0.0.1 on purpose: the outbound guard allows that address here.
  'allow-private-targets': '127.0.0.1/32',
};

let dep: Deployment | undefined;
let rx: Receiver | undefined;

describe('webhooks from two instances behind nginx, one killed mid-way', onlyIf(onPostgres(), POSTGRES_ONLY), () => {
  beforeAll(async () => {
    dep = await startDeployment(FLAGS);
  });
  afterAll(async () => {
    await dep?.close();
    await rx?.close();
  });

  test('1,000 events: every event_id delivered; a second delivery only for an attempt in flight at the kill', async () => {
    // The receiver answers 200 after 20 ms, once the gate is open; it notes when each attempt arrived.
    const arrivals: { id: string; at: number }[] = [];
    let openGate!: () => void;
    const gate = new Promise<void>((resolve) => (openGate = resolve));
    rx = await startReceiver(async (_n, req) => {
      arrivals.push({ id: req.body.event_id, at: performance.now() });
      await gate;
      await new Promise((r) => setTimeout(r, 20));
      return 200;
    });

    const auth = await call(dep!.url, 'POST', '/v1/auth', { body: owner });
    expect(auth.status).toBe(200);
    const h = { 'x-user-token': auth.body.token };
    const teamId = (await call(dep!.url, 'GET', '/v1/teams', { headers: h })).body[0].id as string;
    const hook = await call(dep!.url, 'POST', `/v1/teams/${teamId}/custom_webhooks`, {
      headers: h,
      body: { active: true, events: ['package.created'], method: 'POST', url: rx.url, name: 'deploy test' },
    });
    expect(hook.status, JSON.stringify(hook.body)).toBe(201);

    // 1,000 Packages through nginx, 10 at a time: one package.created event each. The
    // receiver holds its first answers meanwhile, so the deliveries are still to come.
    let next = 0;
    const created = new Set<string>();
    await Promise.all(
      Array.from({ length: 10 }, async () => {
        while (next < EVENTS) {
          const i = next++;
          const r = await call(dep!.url, 'POST', `/v1/teams/${teamId}/packages`, { headers: h, body: { name: `Event ${i}`, description: '', recipients: [] } });
          expect(r.status, JSON.stringify(r.body)).toBe(201);
          created.add(r.body.id);
        }
      }),
    );
    const delivered = () => new Set(arrivals.map((a) => a.id)).size;
    // Both instances' workers hold attempts at the gate.
    await vi.waitFor(() => expect(arrivals.length).toBe(2 * CONCURRENCY), { timeout: 30_000, interval: 20 });

    openGate();
    await vi.waitFor(() => expect(delivered()).toBeGreaterThanOrEqual(300), { timeout: 120_000, interval: 10 });
    await dep!.instances[0].stop('SIGKILL');
    // Anything that arrived before this moment was sent before the instance died.
    const killedAt = performance.now();
    const atKill = delivered();
    expect(atKill).toBeLessThan(EVENTS);

    await vi.waitFor(() => expect(delivered()).toBe(EVENTS), { timeout: 180_000, interval: 100 });
    // Late duplicates would show by now: a taken-over lease runs out within 2 s, and polls are 100 ms apart.
    await new Promise((r) => setTimeout(r, 3000));

    const byId = new Map<string, number[]>();
    for (const a of arrivals) byId.set(a.id, [...(byId.get(a.id) ?? []), a.at]);
    expect(byId.size).toBe(EVENTS);
    // One event per Package made, each about its Package.
    expect(rx.requests.every((r) => r.body.event_type === 'package.created')).toBe(true);
    expect(new Set(rx.requests.map((r) => r.body.object.id))).toEqual(created);
    // The same event_id always carries the same event.
    for (const r of rx.requests) expect(rx.requests.find((o) => o.body.event_id === r.body.event_id)!.body.object.id).toBe(r.body.object.id);
    const twice = [...byId].filter(([, at]) => at.length > 1);
    for (const [id, at] of twice) {
      // Twice at most, the first attempt begun before the kill, the second made after it.
      expect(at, id).toHaveLength(2);
      expect(at[0]!, id).toBeLessThan(killedAt);
      expect(at[1]!, id).toBeGreaterThan(killedAt);
    }
    // No more than the killed instance had in flight.
    expect(twice.length).toBeLessThanOrEqual(CONCURRENCY);
  });
});
