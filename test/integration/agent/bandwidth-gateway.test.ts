// The download limit holds for the storage gateway too: a Portal Package the
// service delivers into a gateway's root moves at the limit per fake second
// (the agent's clock is a fake one the test moves), and arrives whole once the
// limit is lifted (docs/agent-api-notes/bandwidth.md).
import { createHash, randomBytes } from 'node:crypto';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, expect, test, vi } from 'vitest';
import { call, startTestService, type TestService } from '../../helpers/hosted.js';
import { ownerActor, type Actor } from '../../helpers/auth.js';
import { startTestAgent, type TestAgent } from '../../helpers/agent.js';
import { bytesInOneSecond, drained, FakeClock } from '../../helpers/fakeClock.js';
import { gatewayConnection, portalWith, registerGateway, sendToPortal, settledTransfers } from '../../helpers/gateway.js';

vi.setConfig({ testTimeout: 120_000 });
const MiB = 1024 * 1024;
const md5 = (b: Buffer) => createHash('md5').update(b).digest('hex');
const FLAGS = { 'jobs-poll-ms': '50', 'cloud-retry-base-ms': '50', 'cloud-attempts': '2', 'gateway-recheck-ms': '200', 'gateway-heartbeat-ms': '500' };
const clock = new FakeClock(new Date(2026, 10, 30, 12).getTime());

let svc: TestService;
let owner: Actor;
let agent: TestAgent;
let tmp: string;
beforeAll(async () => {
  svc = await startTestService(FLAGS);
  owner = await ownerActor(svc);
  agent = await startTestAgent(svc, {}, { clock });
  tmp = await fs.mkdtemp(path.join(os.tmpdir(), 'ferry-bandwidth-gateway-'));
});
afterAll(async () => {
  await agent?.close();
  await svc?.close();
  if (tmp) await fs.rm(tmp, { recursive: true, force: true });
});

test('a delivery into a storage gateway moves at the download limit', async () => {
  expect((await call(agent.url, 'PATCH', '/settings', { body: { download_rate_limit: 2 * MiB } })).status).toBe(200);
  const root = path.join(tmp, 'nas');
  await fs.mkdir(root);
  const conn = await gatewayConnection(svc, owner, { name: 'Limited NAS', target_directory_id: 'incoming' });
  await registerGateway(agent.url, { id: conn.id, name: 'Limited NAS', permissions: 'w', root_path: root, secret: conn.secret });
  const portal = await portalWith(svc, owner, [{ id: conn.id, target_action: 'transfer' }]);
  const data = randomBytes(12 * MiB);
  const pkg = await sendToPortal(svc, portal.id, 'Rushes', [{ path: '', name: 'take.mov', data }]);

  const bucket = agent.agent.ctx.rates.download;
  await drained(bucket);
  const second = await bytesInOneSecond(clock, bucket);
  expect(second).toBeGreaterThan(1.8 * MiB);
  expect(second).toBeLessThan(2.2 * MiB);

  expect((await call(agent.url, 'PATCH', '/settings', { body: { download_rate_limit: 0 } })).status).toBe(200);
  const [t] = await settledTransfers(svc, owner, pkg.id);
  expect(t, JSON.stringify(t)).toMatchObject({ state: 'complete' });
  const file = path.join(root, 'incoming', `Rushes (${pkg.id})`, 'take.mov');
  expect(md5(await fs.readFile(file))).toBe(md5(data));
});
