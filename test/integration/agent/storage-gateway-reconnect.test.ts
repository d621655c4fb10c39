// A gateway whose service goes away waits and tries again with a bounded
// back-off (its record says waiting, why, and when it tries next, on /events),
// and connects by itself once the service is back at the same address: the
// connection is disconnected meanwhile and ok again after.
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { startTestService, type TestService } from '../../helpers/hosted.js';
import { ownerActor, type Actor } from '../../helpers/auth.js';
import { openEventStream, startTestAgent, type TestAgent } from '../../helpers/agent.js';
import { freePort } from '../../helpers/ports.js';
import { connectionAttached, gatewayConnection, gatewayRecord, registerGateway } from '../../helpers/gateway.js';

// Each test file runs in its own process: the agent's back-off is kept short here.
process.env.FERRY_AGENT_RETRY_BASE_MS = '100';
process.env.FERRY_AGENT_RETRY_MAX_MS = '400';

let svc: TestService;
let owner: Actor;
let agent: TestAgent;
let tmp: string;
let listen: string;

beforeAll(async () => {
  listen = `127.0.0.1:${await freePort()}`;
  svc = await startTestService({ listen });
  owner = await ownerActor(svc);
  agent = await startTestAgent(svc);
  tmp = await fs.mkdtemp(path.join(os.tmpdir(), 'ferry-gateway-reconnect-'));
});
afterAll(async () => {
  await agent?.close();
  await svc?.close();
  if (tmp) await fs.rm(tmp, { recursive: true, force: true });
});

it('waits while the service is away and connects again when it is back', async () => {
  const conn = await gatewayConnection(svc, owner, { name: 'Patient NAS' });
  await registerGateway(agent.url, { id: conn.id, name: 'Patient NAS', permissions: 'w', root_path: tmp, secret: conn.secret });
  await connectionAttached(svc, owner, conn.id, true);
  const events = await openEventStream(agent.url, { query: 'types=gateway' });

  const dataDir = svc.dataDir;
  await svc.stop();
  const waiting = await events.next((m) => m.json?.id === conn.id && m.json?.state === 'waiting' && /cannot be reached/.test(m.json?.last_error ?? ''));
  expect(Date.parse(waiting.json.next_attempt_at)).not.toBeNaN();
  expect((await gatewayRecord(agent.url, conn.id)).state).toMatch(/^(waiting|connecting)$/);

  svc = await startTestService({ listen }, dataDir);
  await events.next((m) => m.json?.id === conn.id && m.json?.state === 'connected', 20_000);
  const c = await connectionAttached(svc, owner, conn.id, true);
  expect(c.state).toBe('ok');
  events.close();
});
