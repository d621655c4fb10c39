// The agent's local security: Host allow-list (DNS rebinding), no foreign
// Origin (CSRF), and the API key when started with --api-key.
import http from 'node:http';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { call, startTestService, type TestService } from '../../helpers/hosted.js';
import { openEventStream, startTestAgent, type TestAgent } from '../../helpers/agent.js';
import { ownerActor, type Actor } from '../../helpers/auth.js';
import { allowedHost, allowedOrigin } from '../../../src/agent/server/security.js';
import { AgentErrorCode } from '../../../src/api/agent/errors.js';

/** A request with exactly these headers (fetch will not send a Host of our choosing). */
function raw(url: string, method: string, headers: Record<string, string>, body?: string): Promise<{ status: number; body: any }> {
  const u = new URL(url);
  return new Promise((resolve, reject) => {
    const req = http.request({ host: u.hostname, port: u.port, path: u.pathname + u.search, method, headers, setHost: false }, (res) => {
      let text = '';
      res.setEncoding('utf8').on('data', (d: string) => (text += d));
      res.on('end', () => resolve({ status: res.statusCode!, body: text ? JSON.parse(text) : undefined }));
    });
    req.on('error', reject);
    req.end(body);
  });
}

let svc: TestService;
let owner: Actor;
let open: TestAgent;
let keyed: TestAgent;

beforeAll(async () => {
  svc = await startTestService();
  owner = await ownerActor(svc);
  open = await startTestAgent(svc);
  keyed = await startTestAgent(svc, { 'api-key': owner.apiKey });
});
afterAll(async () => {
  await open?.close();
  await keyed?.close();
  await svc?.close();
});

const port = (t: TestAgent) => new URL(t.url).port;

describe('Host (DNS rebinding)', () => {
  test.each(['127.0.0.1', 'localhost', 'LOCALHOST', '[::1]'])('Host %s:PORT is served', async (name) => {
    const r = await raw(`${open.url}/health`, 'GET', { host: `${name}:${port(open)}` });
    expect(r.status).toBe(200);
  });

  test.each(['evil.example', 'evil.example:8080', '127.0.0.1.evil.example', '10.0.0.5'])('Host %s answers 403', async (host) => {
    const r = await raw(`${open.url}/health`, 'GET', { host });
    expect(r.status).toBe(403);
    expect(r.body).toEqual({ code: AgentErrorCode.forbidden, message: expect.any(String) });
  });

  test('a foreign Host is refused before anything runs: POST /shutdown does not stop the agent', async () => {
    const r = await raw(`${open.url}/shutdown`, 'POST', { host: 'evil.example' });
    expect(r.status).toBe(403);
    expect((await call(open.url, 'GET', '/health')).status).toBe(200);
  });

  test('the configured listen host is allowed besides loopback names', () => {
    expect(allowedHost('agent.lan:8080', 'agent.lan')).toBe(true);
    expect(allowedHost('other.lan:8080', 'agent.lan')).toBe(false);
    expect(allowedHost('[fe80::1]:8080', 'fe80::1')).toBe(true);
    expect(allowedHost(undefined, '127.0.0.1')).toBe(false);
  });
});

describe('Origin (CSRF)', () => {
  test('a foreign Origin answers 403, also on POST /shutdown', async () => {
    for (const [method, p] of [['GET', '/health'], ['POST', '/shutdown'], ['POST', '/login']] as const) {
      const r = await raw(`${open.url}${p}`, method, { host: `127.0.0.1:${port(open)}`, origin: 'https://evil.example' });
      expect(r.status, `${method} ${p}`).toBe(403);
      expect(r.body.code).toBe(AgentErrorCode.forbidden);
    }
    expect((await call(open.url, 'GET', '/health')).status).toBe(200);
  });

  test.each(['null', 'http://localhost:1', 'file://', 'chrome-extension://abc'])('Origin %s answers 403', async (origin) => {
    const r = await raw(`${open.url}/about`, 'GET', { host: `127.0.0.1:${port(open)}`, origin });
    expect(r.status).toBe(403);
  });

  test('the agent\'s own origin is allowed', async () => {
    const r = await raw(`${open.url}/about`, 'GET', { host: `127.0.0.1:${port(open)}`, origin: `http://127.0.0.1:${port(open)}` });
    expect(r.status).toBe(200);
    expect(allowedOrigin(undefined, '127.0.0.1:1')).toBe(true);
  });

  test('GET /events refuses a foreign Origin too', async () => {
    const r = await raw(`${open.url}/events`, 'GET', { host: `127.0.0.1:${port(open)}`, origin: 'https://evil.example' });
    expect(r.status).toBe(403);
  });
});

describe('X-API-Key (started with --api-key)', () => {
  test.each([
    ['missing', (): Record<string, string> => ({})],
    ['wrong', () => ({ 'x-api-key': 'fk_wrong' })],
    ['empty', () => ({ 'x-api-key': '' })],
    ['the right key with one more character', () => ({ 'x-api-key': `${owner.apiKey}x` })],
  ])('%s: 401 with an integer code', async (_what, headers) => {
    for (const p of ['/about', '/health', '/login', '/events']) {
      const r = await call(keyed.url, 'GET', p, { headers: headers() });
      expect(r.status, p).toBe(401);
      expect(r.body).toEqual({ code: AgentErrorCode.apiKey, message: expect.any(String) });
    }
  });

  test('a wrong key cannot shut the agent down', async () => {
    const r = await call(keyed.url, 'POST', '/shutdown', { headers: { 'x-api-key': 'nope' } });
    expect(r.status).toBe(401);
    expect((await call(keyed.url, 'GET', '/health', { headers: { 'x-api-key': owner.apiKey } })).status).toBe(200);
  });

  test('the right key works, for the REST routes and the event stream', async () => {
    const h = { 'x-api-key': owner.apiKey };
    expect((await call(keyed.url, 'GET', '/about', { headers: h })).status).toBe(200);
    const s = await call(keyed.url, 'GET', '/login', { headers: h });
    expect(s.status).toBe(200);
    expect(s.body.user.id).toBe(owner.userId);
    const ev = await openEventStream(keyed.url, { headers: h });
    try {
      expect(ev.status).toBe(200);
      keyed.agent.ctx.events.publish('upload', { change: 'removed', upload_id: 'keyed' });
      expect((await ev.next()).json).toEqual({ change: 'removed', upload_id: 'keyed' });
    } finally {
      ev.close();
    }
  });

  test('the right key does not excuse a foreign Host', async () => {
    const r = await raw(`${keyed.url}/about`, 'GET', { host: 'evil.example', 'x-api-key': owner.apiKey });
    expect(r.status).toBe(403);
  });

  test('an agent without --api-key needs no key', async () => {
    expect((await call(open.url, 'GET', '/about')).status).toBe(200);
  });
});
