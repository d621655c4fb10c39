// The README's integrations walk-through (docs/integrations.sh) run for real
// against a started service and a signed-in agent: a Portal's arrival lands in a
// local folder (a Portal download automation), in an S3 bucket (a cloud
// connection to a second store the script starts) and in a webhook receiver's
// log. If the README's steps break, this fails.
import { execFile } from 'node:child_process';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, expect, test, vi } from 'vitest';
import { startTestService, type TestService } from '../../helpers/hosted.js';
import { signInAgent, startTestAgent, type TestAgent } from '../../helpers/agent.js';
import { repoRoot } from '../../helpers/cli.js';
import { freePort } from '../../helpers/ports.js';

vi.setConfig({ testTimeout: 240_000, hookTimeout: 60_000 });

let svc: TestService;
let agent: TestAgent;
let work: string;

beforeAll(async () => {
  process.env.FERRY_AGENT_AUTOMATION_POLL_MS = '300';
  // The script's bucket and receiver are on 127.0.0.1 on purpose: the outbound guard allows that address here.
  svc = await startTestService({ 'jobs-poll-ms': '100', 'allow-private-targets': '127.0.0.1/32' });
  agent = await startTestAgent(svc);
  await signInAgent(agent.url, svc);
  work = await fs.mkdtemp(path.join(os.tmpdir(), 'ferry-integrations-'));
});
afterAll(async () => {
  await agent?.close();
  await svc?.close();
  delete process.env.FERRY_AGENT_AUTOMATION_POLL_MS;
  await fs.rm(work, { recursive: true, force: true });
});

test('the README integrations walk-through: a Portal Package reaches the folder, the bucket and the webhook receiver', async () => {
  const [bucketPort, hookPort] = [await freePort(), await freePort()];
  const { stdout, stderr } = await promisify(execFile)('bash', [path.join(repoRoot, 'docs/integrations.sh')], {
    env: {
      ...process.env,
      FERRY: svc.url, EMAIL: svc.owner.email, PASSWORD: svc.owner.password, FERRY_AGENT_URL: agent.url,
      BUCKET_LISTEN: `127.0.0.1:${bucketPort}`, HOOK_LISTEN: `127.0.0.1:${hookPort}`, SUBDOMAIN: 'inbox', WAIT_S: '180', WORK: work,
    },
  });
  const pkg = /^Package: (\S+)$/m.exec(stdout)?.[1];
  expect(pkg, stdout).toBeTruthy();
  const tail = stdout.trim().split('\n').slice(-3);
  expect(tail[0], stderr).toBe("arrivals/footage: identical");
  expect(tail[1]).toBe(`bucket deliveries/from-ferry/footage (${pkg})/: identical`);
  expect(tail[2]).toBe('webhook events: package.created, package.finalized');

  // The script's own comparisons, checked once more here: the sent folder keeps its name in the
  // Package, so both copies hold footage/ with its three files.
  const original = await fs.readFile(path.join(work, 'footage/take1.mov'));
  expect((await fs.readFile(path.join(work, 'arrivals/footage/take1.mov'))).equals(original)).toBe(true);
  expect((await fs.readFile(path.join(work, 'from-bucket/footage/take1.mov'))).equals(original)).toBe(true);
  expect((await fs.readdir(path.join(work, 'from-bucket'), { recursive: true })).sort()).toEqual(['footage', 'footage/audio', 'footage/audio/boom.wav', 'footage/notes.txt', 'footage/take1.mov']);
  const events = (await fs.readFile(path.join(work, 'events.log'), 'utf8')).trim().split('\n').map((l) => JSON.parse(l));
  expect(events.map((e) => [e.event_type, e.object.id])).toEqual([['package.created', pkg], ['package.finalized', pkg]]);
  expect(events[1].object).toMatchObject({ total_files: 3, size: 5_000_000 + 300_000 + 33 });
});
