// `ferry disks` as a child process against a real agent: the listing (also with
// --json), status, set by id and by mount point; bad usage exits 2.
import { afterAll, beforeAll, describe, expect, test, vi } from 'vitest';
import { ferry } from '../../helpers/cli.js';
import { startTestService, type TestService } from '../../helpers/hosted.js';
import { startTestAgent, type TestAgent } from '../../helpers/agent.js';
import { call } from '../../helpers/hosted.js';

vi.setConfig({ testTimeout: 120_000, hookTimeout: 120_000 });

let svc: TestService;
let agent: TestAgent;
const run = (args: string[]) => ferry([...args, '--agent', agent.url], { FERRY_AGENT_URL: undefined, FERRY_AGENT_API_KEY: undefined });

beforeAll(async () => {
  svc = await startTestService();
  agent = await startTestAgent(svc);
});
afterAll(async () => {
  await agent?.close();
  await svc?.close();
});

describe('ferry disks', () => {
  test('lists the disks with their settings; --json prints the records; status prints each disk in use', async () => {
    const { body } = await call(agent.url, 'GET', '/settings/disks');
    const d = body.disks.find((x: any) => x.used_for.includes('configuration'));
    const out = await run(['disks']);
    expect(out.code, out.stderr).toBe(0);
    expect(out.stdout).toMatch(/^DISK ID\s+PRIORITY\s+READERS\s+WRITERS\s+NOW\s+USED FOR\s+MOUNT POINT$/m);
    expect(out.stdout).toMatch(new RegExp(`^${d.disk_id}\\s+mixed\\s+no limit\\s+no limit\\s+.*configuration.*${d.mount_point.replace(/[/\\]/g, '\\$&')}`, 'm'));
    const json = await run(['disks', 'ls', '--json']);
    expect(JSON.parse(json.stdout).disks).toEqual(body.disks);
    const st = await run(['disks', 'status']);
    expect(st.code, st.stderr).toBe(0);
    expect(st.stdout).toMatch(/^DISK ID\s+READING\s+WRITING/m);
  });

  test('set changes a disk named by its id or its mount point; bad usage exits 2', async () => {
    const { body } = await call(agent.url, 'GET', '/settings/disks');
    const d = body.disks.find((x: any) => x.used_for.includes('configuration'));
    const byId = await run(['disks', 'set', d.disk_id, '--priority', 'writes', '--readers', '2']);
    expect(byId.code, byId.stderr).toBe(0);
    expect(byId.stdout.trim()).toBe(`disk ${d.disk_id} (${d.mount_point}): writes first, readers 2, writers no limit`);
    const byMount = await run(['disks', 'set', d.mount_point, '--writers', '3', '--json']);
    expect(byMount.code, byMount.stderr).toBe(0);
    expect(JSON.parse(byMount.stdout)).toMatchObject({ disk_id: d.disk_id, priority: 'prioritize_writes', max_concurrent_readers: 2, max_concurrent_writers: 3 });
    for (const args of [['set', d.disk_id], ['set', d.disk_id, '--priority', 'fast'], ['set', d.disk_id, '--readers', '-1'], ['set'], ['set', 'nowhere', '--readers', '1'], ['frob']]) {
      const r = await run(['disks', ...args]);
      expect(r.code, `${args.join(' ')}: ${r.stdout}${r.stderr}`).toBe(2);
      expect(r.stderr.length).toBeGreaterThan(0);
    }
  });
});
