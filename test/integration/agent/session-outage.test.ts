// A sign-in outlives an outage: the service is away when the agent's user token
// is due for renewal, and stays away past the token's expiry. Nobody signs in
// again: once the service answers, the agent renews the token and is signed in.
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, expect, test, vi } from 'vitest';
import { call, startTestService, type TestService } from '../../helpers/hosted.js';
import { openEventStream, startTestAgent, type TestAgent } from '../../helpers/agent.js';

vi.setConfig({ testTimeout: 90_000 });

const expOf = (token: string): number => (JSON.parse(Buffer.from(token.split('.')[1]!, 'base64url').toString()) as { exp: number }).exp;

let dataDir: string | undefined;
let svc: TestService | undefined;
let a: TestAgent | undefined;

afterAll(async () => {
  await a?.close();
  await svc?.close();
  if (dataDir) await fs.rm(dataDir, { recursive: true, force: true });
});

test('the service away while the token is renewed and past its expiry: once it is back the agent renews it, still signed in', async () => {
  dataDir = await fs.mkdtemp(path.join(os.tmpdir(), 'ferry-session-outage-'));
  // Tokens of 8 s: the renewal is due 4 s after sign-in, far more than the few milliseconds from
  // the sign-in to the service's close, even on a stalled machine; the expiry itself is the token's clock.
  const flags = { 'data-dir': dataDir, 'user-token-ttl': '8' };
  svc = await startTestService(flags);
  const where = { listen: `127.0.0.1:${new URL(svc.url).port}`, 's3-listen': `127.0.0.1:${new URL(svc.s3Url).port}` };
  const saved = process.env.FERRY_AGENT_RETRY_MAX_MS;
  process.env.FERRY_AGENT_RETRY_MAX_MS = '1000'; // probes at most 1 s apart
  try {
    a = await startTestAgent(svc);
  } finally {
    if (saved === undefined) delete process.env.FERRY_AGENT_RETRY_MAX_MS;
    else process.env.FERRY_AGENT_RETRY_MAX_MS = saved;
  }
  const events = await openEventStream(a.url, { query: 'types=session' });
  try {
    expect((await call(a.url, 'POST', '/login', { body: svc.owner })).status).toBe(200);
    const stored = () => a!.agent.ctx.db.prepare('SELECT secret FROM session').get() as { secret: string } | undefined;
    const first = stored()!.secret;

    // The service goes away (its data stays) before the renewal is due, and stays away past the token's expiry.
    await svc.close(); // the data dir given by flag stays: the same users and signing key come back
    svc = undefined;
    while (Date.now() / 1000 < expOf(first) + 1) await new Promise((r) => setTimeout(r, 200));
    const away = await call(a.url, 'GET', '/login');
    expect(away.status).toBe(502); // unreachable, not signed out
    expect(stored()!.secret).toBe(first);

    svc = await startTestService({ ...flags, ...where });
    await vi.waitFor(() => expect(stored()?.secret).not.toBe(first), { timeout: 30_000, interval: 50 });
    const renewed = stored()!.secret;
    expect(expOf(renewed)).toBeGreaterThan(expOf(first));
    const r = await call(a.url, 'GET', '/login');
    expect(r.status, JSON.stringify(r.body)).toBe(200);
    expect(events.received.some((m) => m.json?.user === null), 'never signed out').toBe(false);
  } finally {
    events.close();
  }
});
