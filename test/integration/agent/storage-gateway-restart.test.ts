// A storage gateway whose agent is killed (SIGKILL) mid-delivery finishes it
// once started again on the same config dir: the agent runs as a child process
// (`ferry agent`), the service's store sits behind a pacing proxy so that the
// kill lands while the large file is being fetched, and after the restart the
// small file already written is not fetched again and the large one resumes
// from the bytes recorded before the kill (ranges), byte-identical.
import { randomBytes } from 'node:crypto';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import Database from 'better-sqlite3';
import { afterAll, beforeAll, expect, test } from 'vitest';
import { sqliteOptions } from '../../../src/sqlite/binding.js';
import { startFerry, jsonLine, type Running } from '../../helpers/cli.js';
import { startServiceBehindProxy } from '../../helpers/proxiedService.js';
import { startS3Proxy, type ProxiedService } from '../../helpers/s3Proxy.js';
import { ownerActor, type Actor } from '../../helpers/auth.js';
import { MiB, sha256 } from '../../helpers/flow.js';
import { sha256File, waitFor } from '../../helpers/downloads.js';
import { connectionAttached, gatewayConnection, portalWith, registerGateway, sendToPortal, settledTransfers } from '../../helpers/gateway.js';
import { GATEWAY_RANGE } from '../../../src/agent/gateway/receive.js';

const SMALL = randomBytes(3 * MiB + 5);
const LARGE = randomBytes(40 * MiB + 17);

let env: ProxiedService;
let owner: Actor;
let configDir: string;
let root: string;
let agent: Running | undefined;

beforeAll(async () => {
  // One file at a time, so that the small one is done before the large one starts.
  env = await startServiceBehindProxy(startS3Proxy, { 'jobs-poll-ms': '50', 'cloud-retry-base-ms': '50', 'cloud-part-concurrency': '1', 'gateway-recheck-ms': '200' });
  owner = await ownerActor(env.svc);
  configDir = await fs.mkdtemp(path.join(os.tmpdir(), 'ferry-gateway-restart-agent-'));
  root = await fs.mkdtemp(path.join(os.tmpdir(), 'ferry-gateway-restart-root-'));
}, 120_000);

afterAll(async () => {
  await agent?.stop('SIGKILL');
  await env?.close();
  for (const d of [configDir, root]) if (d) await fs.rm(d, { recursive: true, force: true });
});

async function startAgentProcess(): Promise<{ proc: Running; url: string }> {
  const proc = startFerry(['agent', '--listen', '127.0.0.1:0', '--config-dir', configDir, '--hosted-url', env.svc.url, '--log-level', 'debug']);
  const line = await proc.waitFor((l) => jsonLine(l)?.msg === 'ferry agent ready', 'the agent ready line', 60_000);
  return { proc, url: String(jsonLine(line)!.url) };
}

/** Ranged GETs the store was asked for since request number `from`. */
const rangesSince = (from: number) => env.proxy.seen.slice(from).filter((r) => r.method === 'GET' && r.range).map((r) => r.range!);

/** What the dead agent recorded of the large file. */
function recorded(): { bytes_done: number; state: string }[] {
  const db = new Database(path.join(configDir, 'agent.db'), sqliteOptions());
  try {
    return db.prepare('SELECT bytes_done, state, size FROM gateway_files ORDER BY seq').all() as { bytes_done: number; state: string }[];
  } finally {
    db.close();
  }
}

test('killed mid-delivery, the agent started again finishes it: the written file is not fetched again, the partial one resumes', async () => {
  const conn = await gatewayConnection(env.svc, owner, { name: 'Restarted NAS' });
  let run = await startAgentProcess();
  agent = run.proc;
  await registerGateway(run.url, { id: conn.id, name: 'Restarted NAS', permissions: 'w', root_path: root, secret: conn.secret });
  await connectionAttached(env.svc, owner, conn.id, true);
  const portal = await portalWith(env.svc, owner, [{ id: conn.id, target_action: 'transfer' }]);

  // Paced: the large file takes a few seconds, and the kill comes once its third range is asked for.
  env.proxy.pace = 16 * MiB;
  const from = env.proxy.seen.length;
  const pkg = await sendToPortal(env.svc, portal.id, 'Restart', [
    { path: 'reel', name: 'a-small.bin', data: SMALL },
    { path: 'reel', name: 'b-large.bin', data: LARGE },
  ]);
  await waitFor('the third range of the large file', () => (rangesSince(from).some(([s]) => s === 2 * GATEWAY_RANGE) ? true : undefined), 2400);
  await run.proc.stop('SIGKILL');
  agent = undefined;
  env.proxy.pace = 0;

  const [small, large] = recorded();
  expect(small).toMatchObject({ state: 'complete' });
  expect(large!.state).toBe('pending');
  expect(large!.bytes_done).toBeGreaterThanOrEqual(2 * GATEWAY_RANGE);
  expect(large!.bytes_done % GATEWAY_RANGE).toBe(0);
  await connectionAttached(env.svc, owner, conn.id, false);

  const again = env.proxy.seen.length;
  run = await startAgentProcess();
  agent = run.proc;
  const [t] = await settledTransfers(env.svc, owner, pkg.id);
  expect(t, JSON.stringify(t)).toMatchObject({ state: 'complete', files_done: 2, bytes_done: SMALL.length + LARGE.length });

  const dir = path.join(root, `Restart (${pkg.id})`, 'reel');
  expect(await sha256File(path.join(dir, 'a-small.bin'))).toBe(sha256(SMALL));
  expect(await sha256File(path.join(dir, 'b-large.bin'))).toBe(sha256(LARGE));
  expect((await fs.readdir(dir)).sort()).toEqual(['a-small.bin', 'b-large.bin']);

  // After the restart: nothing of the small file, and the large one from where it stood.
  const after = rangesSince(again);
  expect(after.some(([, end]) => end === SMALL.length - 1)).toBe(false);
  expect(after[0]![0]).toBe(large!.bytes_done);
  expect(after.every(([s]) => s >= large!.bytes_done)).toBe(true);
  await run.proc.stop('SIGTERM');
  agent = undefined;
}, 240_000);
