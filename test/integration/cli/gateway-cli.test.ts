// `ferry gateway` as a child process against a real service and agent:
// register (the secret from the environment, a relative root made absolute),
// ls and ls ID, update (root, owner set and removed), unregister; connection makes
// the service-side connection for the signed-in Owner; --json prints
// the agent's records; the agent's refusals exit 1 with its message, bad usage 2.
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, test, vi } from 'vitest';
import { ferry } from '../../helpers/cli.js';
import { startTestService, type TestService } from '../../helpers/hosted.js';
import { signInAgent, startTestAgent, type TestAgent } from '../../helpers/agent.js';
import { ownerActor, type Actor } from '../../helpers/auth.js';
import { connectionAttached, gatewayConnection, portalWith, sendToPortal, settledTransfers } from '../../helpers/gateway.js';
import { waitFor } from '../../helpers/downloads.js';

vi.setConfig({ testTimeout: 120_000, hookTimeout: 120_000 });

let svc: TestService;
let owner: Actor;
let agent: TestAgent;
let tmp: string;

const clean = { FERRY_AGENT_URL: undefined, FERRY_AGENT_API_KEY: undefined, FERRY_GATEWAY_SECRET: undefined };
const run = (args: string[], env: Record<string, string | undefined> = {}) => ferry([...args, '--agent', agent.url], { ...clean, ...env });

beforeAll(async () => {
  svc = await startTestService({ 'jobs-poll-ms': '50', 'gateway-recheck-ms': '200' });
  owner = await ownerActor(svc);
  agent = await startTestAgent(svc);
  tmp = await fs.mkdtemp(path.join(os.tmpdir(), 'ferry-gateway-cli-'));
  await fs.mkdir(path.join(tmp, 'nas'));
  await fs.mkdir(path.join(tmp, 'moved'));
});
afterAll(async () => {
  await agent?.close();
  await svc?.close();
  if (tmp) await fs.rm(tmp, { recursive: true, force: true });
});

describe('ferry gateway', () => {
  test('connection: made on the service for the signed-in Owner, its id and secret register a gateway; signed out it exits 1; bad usage 2', async () => {
    const out = await run(['gateway', 'connection', '--name', 'CLI made', '--permissions', 'w']);
    expect(out.code, out.stdout).toBe(1);
    expect((await run(['gateway', 'connection', '--name', 'CLI made', '--permissions', 'rw'])).code).toBe(2);
    expect((await run(['gateway', 'connection', '--permissions', 'w'])).code).toBe(2);
    await signInAgent(agent.url, svc);
    const made = await run(['gateway', 'connection', '--name', 'CLI made', '--permissions', 'w', '--json']);
    expect(made.code, made.stderr).toBe(0);
    const c = JSON.parse(made.stdout);
    expect(c).toEqual({ id: expect.any(String), secret: expect.any(String), name: 'CLI made', permissions: 'w', team_id: owner.teamId });
    const text = await run(['gateway', 'connection', '--name', "Ed's NAS", '--permissions', 'r']);
    expect(text.code, text.stderr).toBe(0);
    expect(text.stdout).toMatch(/^made storage gateway connection \S+ \(Ed's NAS\) in Team /);
    expect(text.stdout).toMatch(/^secret: [A-Za-z0-9_-]{43}$/m);
    expect(text.stdout).toContain("--name 'Ed'\\''s NAS' --permissions r");
    const reg = await run(['gateway', 'register', '--id', c.id, '--name', 'CLI made', '--permissions', 'w', '--root-path', path.join(tmp, 'nas'), '--json'], { FERRY_GATEWAY_SECRET: c.secret });
    expect(reg.code, reg.stderr).toBe(0);
    await connectionAttached(svc, owner, c.id, true);
    expect((await run(['gateway', 'unregister', c.id])).code).toBe(0);
  });

  test('register, ls, update, unregister, in text and --json', async () => {
    const conn = await gatewayConnection(svc, owner, { name: 'CLI NAS' });

    // The secret from the environment, the root relative to the command's folder (repo root here).
    const rel = path.relative(process.cwd(), path.join(tmp, 'nas'));
    const reg = await run(['gateway', 'register', '--id', conn.id, '--name', 'CLI NAS', '--permissions', 'w', '--root-path', rel, '--json'], { FERRY_GATEWAY_SECRET: conn.secret });
    expect(reg.code, reg.stderr).toBe(0);
    const g = JSON.parse(reg.stdout);
    expect(g).toMatchObject({ id: conn.id, name: 'CLI NAS', permissions: 'w', root_path: path.join(tmp, 'nas'), secret: '********' });
    expect(reg.stdout).not.toContain(conn.secret);
    await connectionAttached(svc, owner, conn.id, true);

    await waitFor('the gateway to show connected', async () => {
      const ls = await run(['gateway', 'ls']);
      expect(ls.code, ls.stderr).toBe(0);
      return new RegExp(`^${conn.id}\\s+connected\\s+w\\s+${path.join(tmp, 'nas').replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}\\s+CLI NAS$`, 'm').test(ls.stdout) ? true : undefined;
    }, 200);
    const header = await run(['gateway', 'ls']);
    expect(header.stdout.split('\n')[0]).toMatch(/^GATEWAY ID\s+STATE\s+PERM\s+OWNER\s+ROOT\s+NAME$/);

    const portal = await portalWith(svc, owner, [{ id: conn.id, target_action: 'transfer' }]);
    const pkg = await sendToPortal(svc, portal.id, 'From the CLI test', [{ path: '', name: 'a.txt', data: Buffer.from('a\n') }]);
    const [t] = await settledTransfers(svc, owner, pkg.id);
    expect(t.state).toBe('complete');
    const one = await run(['gateway', 'ls', conn.id]);
    expect(one.code, one.stderr).toBe(0);
    expect(one.stdout).toMatch(new RegExp(`^gateway ${conn.id}: connected since `, 'm'));
    expect(one.stdout).toMatch(new RegExp(`^${t.id}\\s+svc_to_cloud\\s+complete\\s+1/1\\s+2 B / 2 B\\s+From the CLI test$`, 'm'));

    const up = await run(['gateway', 'update', conn.id, '--root-path', path.join(tmp, 'moved'), '--user-id', '4321', '--group-id', '4322', '--json']);
    expect(up.code, up.stderr).toBe(0);
    expect(JSON.parse(up.stdout)).toMatchObject({ root_path: path.join(tmp, 'moved'), user_id: 4321, group_id: 4322 });
    const clear = await run(['gateway', 'update', conn.id, '--user-id', 'none', '--group-id=-1']);
    expect(clear.code, clear.stderr).toBe(0);
    expect(clear.stdout).toMatch(new RegExp(`^updated gateway ${conn.id}$`, 'm'));
    expect(clear.stdout).not.toMatch(/uid:gid/);

    const un = await run(['gateway', 'unregister', conn.id]);
    expect(un.code, un.stderr).toBe(0);
    expect(un.stdout).toBe(`unregistered gateway ${conn.id}; files it wrote stay in ${path.join(tmp, 'moved')}\n`);
    await connectionAttached(svc, owner, conn.id, false);
    const none = await run(['gateway', 'ls', '--json']);
    expect(JSON.parse(none.stdout)).toEqual([]);
    expect((await run(['gateway', 'ls'])).stdout).toBe('no storage gateways\n');
  });

  test("the agent's refusals exit 1 with its message; bad usage exits 2", async () => {
    const conn = await gatewayConnection(svc, owner);
    const wrong = await run(['gateway', 'register', '--id', conn.id, '--name', 'X', '--permissions', 'w', '--root-path', tmp, '--secret', 'wrong']);
    expect(wrong.code).toBe(1);
    expect(wrong.stderr).toMatch(/^ferry gateway register: the service refused this gateway's id and secret: .*\(400, code 262145\)$/m);
    const unknown = await run(['gateway', 'unregister', 'ccn_nobody']);
    expect(unknown.code).toBe(1);
    expect(unknown.stderr).toMatch(/storage gateway not found \(404, code 262149\)/);
    const missing = await run(['gateway', 'ls', 'ccn_nobody']);
    expect(missing.code).toBe(1);
    for (const [args, message] of [
      [['gateway'], /usage: ferry gateway <action>/],
      [['gateway', 'frob'], /unknown action "frob"/],
      [['gateway', 'register', '--id', 'x', '--name', 'X', '--permissions', 'rw', '--root-path', tmp, '--secret', 's'], /--permissions must be r or w/],
      [['gateway', 'register', '--id', 'x', '--name', 'X', '--permissions', 'w', '--root-path', tmp], /--secret \(or \$FERRY_GATEWAY_SECRET\) is required/],
      [['gateway', 'register', '--name', 'X', '--permissions', 'w', '--root-path', tmp, '--secret', 's'], /--id is required/],
      [['gateway', 'update', conn.id], /give --root-path, --user-id or --group-id/],
      [['gateway', 'update', conn.id, '--user-id', 'bob'], /--user-id must be a user or group number, or none/],
      [['gateway', 'update'], /name the gateway id/],
      [['gateway', 'unregister', 'a', 'b'], /name one gateway id/],
    ] as [string[], RegExp][]) {
      const r = await run(args);
      expect(r.code, `${args.join(' ')}: ${r.stderr}`).toBe(2);
      expect(`${r.stdout}${r.stderr}`, args.join(' ')).toMatch(message);
    }
    const help = await run(['gateway', '--help']);
    expect(help.code).toBe(0);
    expect(help.stdout).toMatch(/register --id ID --name NAME --permissions r\|w --root-path DIR/);
  });
});
