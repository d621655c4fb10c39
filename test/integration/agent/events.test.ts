// GET /events: Server-Sent Events of the agent's change feed, read by a real HTTP client.
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { call, startTestService, type TestService } from '../../helpers/hosted.js';
import { openEventStream, startTestAgent, type TestAgent } from '../../helpers/agent.js';
import { AgentErrorCode } from '../../../src/api/agent/errors.js';

let svc: TestService;
let a: TestAgent;

beforeAll(async () => {
  svc = await startTestService();
  a = await startTestAgent(svc);
});
afterAll(async () => {
  await a?.close();
  await svc?.close();
});

/** How many listeners the agent's event bus has (to see that a stream let go of its subscription). */
const listeners = (t: TestAgent) => (t.agent.ctx.events as unknown as { listeners: Set<unknown> }).listeners.size;

async function until(cond: () => boolean, what: string): Promise<void> {
  for (let i = 0; i < 200 && !cond(); i++) await new Promise((r) => setTimeout(r, 25));
  expect(cond(), what).toBe(true);
}

describe('GET /events', () => {
  test('answers text/event-stream and delivers a published event with id, event and JSON data', async () => {
    const s = await openEventStream(a.url);
    try {
      expect(s.status).toBe(200);
      expect(s.headers.get('content-type')).toMatch(/^text\/event-stream/);
      expect(s.headers.get('cache-control')).toMatch(/no-cache/);
      const totals = { progress: 5, size: 10, file_count: 1, files_done: 0, updated_at: '2026-01-01T00:00:00.000Z' };
      a.agent.ctx.events.publish('upload', { change: 'progress', upload_id: 'u1', ...totals });
      const m = await s.next((x) => x.json?.upload_id === 'u1');
      expect(m.event).toBe('upload');
      expect(Number(m.id)).toBeGreaterThan(0);
      expect(m.json).toEqual({ change: 'progress', upload_id: 'u1', ...totals });
    } finally {
      s.close();
    }
  });

  test('several clients each get every event, in order', async () => {
    const [s1, s2] = await Promise.all([openEventStream(a.url), openEventStream(a.url)]);
    try {
      for (let i = 0; i < 3; i++) a.agent.ctx.events.publish('download', { change: 'removed', download_id: `d${i}` });
      for (const s of [s1, s2]) {
        const got = [];
        for (let i = 0; i < 3; i++) got.push((await s.next((x) => x.event === 'download')).json.download_id);
        expect(got).toEqual(['d0', 'd1', 'd2']);
      }
    } finally {
      s1.close();
      s2.close();
    }
  });

  test('a sign-in publishes a session event', async () => {
    const s = await openEventStream(a.url, { query: 'types=session' });
    try {
      const r = await call(a.url, 'POST', '/login', { body: svc.owner });
      expect(r.status).toBe(200);
      const m = await s.next();
      expect(m.event).toBe('session');
      expect(m.json.user.email).toBe(svc.owner.email);
    } finally {
      s.close();
    }
  });

  test('?types= filters the event types', async () => {
    const s = await openEventStream(a.url, { query: 'types=download' });
    try {
      a.agent.ctx.events.publish('upload', { change: 'removed', upload_id: 'filtered-out' });
      a.agent.ctx.events.publish('download', { change: 'removed', download_id: 'kept' });
      const m = await s.next();
      expect(m.json).toEqual({ change: 'removed', download_id: 'kept' });
      expect(s.received.some((x) => x.event === 'upload')).toBe(false);
    } finally {
      s.close();
    }
  });
});

describe('replay', () => {
  test('Last-Event-ID replays the held events after that id, then follows new ones', async () => {
    const first = await openEventStream(a.url);
    a.agent.ctx.events.publish('upload', { change: 'removed', upload_id: 'r1' });
    const m1 = await first.next((x) => x.json?.upload_id === 'r1');
    first.close();
    a.agent.ctx.events.publish('upload', { change: 'removed', upload_id: 'r2' });
    a.agent.ctx.events.publish('upload', { change: 'removed', upload_id: 'r3' });

    const again = await openEventStream(a.url, { headers: { 'last-event-id': m1.id! } });
    try {
      a.agent.ctx.events.publish('upload', { change: 'removed', upload_id: 'r4' });
      const ids = [];
      for (let i = 0; i < 3; i++) ids.push((await again.next()).json.upload_id);
      expect(ids).toEqual(['r2', 'r3', 'r4']);
      expect(again.received.some((x) => x.json?.upload_id === 'r1')).toBe(false);
    } finally {
      again.close();
    }
  });

  test('?since= does the same for clients that cannot set headers', async () => {
    const s0 = await openEventStream(a.url);
    a.agent.ctx.events.publish('download', { change: 'removed', download_id: 'q1' });
    const m = await s0.next((x) => x.json?.download_id === 'q1');
    s0.close();
    a.agent.ctx.events.publish('download', { change: 'removed', download_id: 'q2' });
    const s = await openEventStream(a.url, { query: `since=${m.id}` });
    try {
      expect((await s.next()).json).toEqual({ change: 'removed', download_id: 'q2' });
    } finally {
      s.close();
    }
  });

  test('without Last-Event-ID nothing old is replayed', async () => {
    a.agent.ctx.events.publish('upload', { change: 'removed', upload_id: 'old' });
    const s = await openEventStream(a.url);
    try {
      a.agent.ctx.events.publish('upload', { change: 'removed', upload_id: 'new' });
      expect((await s.next()).json).toEqual({ change: 'removed', upload_id: 'new' });
    } finally {
      s.close();
    }
  });
});

describe('bad input', () => {
  test.each<[string, { headers?: Record<string, string>; query?: string }]>([
    ['a Last-Event-ID that is not a number', { headers: { 'last-event-id': 'abc' } }],
    ['a negative ?since=', { query: 'since=-1' }],
    ['an unknown type in ?types=', { query: 'types=upload,bogus' }],
  ])('%s: 400 {code, message}', async (_what, opts) => {
    const r = await call(a.url, 'GET', `/events${opts.query ? `?${opts.query}` : ''}`, { headers: opts.headers });
    expect(r.status).toBe(400);
    expect(r.body).toMatchObject({ code: AgentErrorCode.badRequest, message: expect.any(String) });
  });
});

describe('the end of a stream', () => {
  test('a client that leaves is unsubscribed', async () => {
    const before = listeners(a);
    const s = await openEventStream(a.url);
    await until(() => listeners(a) === before + 1, 'the stream subscribed');
    s.close();
    await until(() => listeners(a) === before, 'the stream unsubscribed after the client left');
    // The agent still publishes and serves normally.
    a.agent.ctx.events.publish('upload', { change: 'removed', upload_id: 'after-leave' });
    expect((await call(a.url, 'GET', '/health')).status).toBe(200);
  });

  test('closing the agent ends open streams cleanly and does not hang', async () => {
    const b = await startTestAgent(svc);
    const streams = await Promise.all([openEventStream(b.url), openEventStream(b.url)]);
    b.agent.ctx.events.publish('upload', { change: 'removed', upload_id: 'last' });
    await streams[0]!.next();
    await b.close();
    expect(await Promise.all(streams.map((s) => s.ended))).toEqual([true, true]);
    expect(listeners(b)).toBe(0);
  });

  test('POST /shutdown also ends open streams', async () => {
    const b = await startTestAgent(svc);
    try {
      const s = await openEventStream(b.url);
      expect((await call(b.url, 'POST', '/shutdown')).body).toEqual({ code: 0 });
      await b.agent.stopped;
      expect(await s.ended).toBe(true);
      await expect(s.next(undefined, 1000)).rejects.toThrow(/ended/);
    } finally {
      await b.close();
    }
  });
});
