// `ferry diagnostics` against a real service and agent: the words and --json of
// GET /diagnostics, `--bundle FOLDER` writing a support bundle, and what it
// refuses (an unexpected argument: exit 2; a folder the agent refuses: exit 1).
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, test, vi } from 'vitest';
import { ferry } from '../../helpers/cli.js';
import { startTestService, type TestService } from '../../helpers/hosted.js';
import { startTestAgent, type TestAgent } from '../../helpers/agent.js';

vi.setConfig({ testTimeout: 60_000, hookTimeout: 60_000 });

let svc: TestService;
let agent: TestAgent;
let tmp: string;
const key = `cli-diagnostics-key-${process.pid}-xxxxxxxx`;
const clean = { FERRY_AGENT_URL: undefined, FERRY_AGENT_API_KEY: undefined };
const run = (args: string[]) => ferry([...args, '--agent', agent.url, '--api-key', key], clean);

beforeAll(async () => {
  svc = await startTestService();
  agent = await startTestAgent(svc, { 'local-api-key': key });
  tmp = await fs.mkdtemp(path.join(os.tmpdir(), 'ferry-cli-diagnostics-'));
});

afterAll(async () => {
  await agent?.close();
  await svc?.close();
  if (tmp) await fs.rm(tmp, { recursive: true, force: true });
});

describe('ferry diagnostics', () => {
  test('prints the versions, the service answering, free space and the settings, the key hidden', async () => {
    const r = await run(['diagnostics']);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toContain(`Node ${process.versions.node}`);
    expect(r.stdout).toMatch(new RegExp(`service: +${svc.url.replace(/[.]/g, '\\.')}: answers \\(200\\) in \\d+ ms`));
    expect(r.stdout).toContain('stores:    none used since the agent started');
    expect(r.stdout).toMatch(/Downloads \(downloads folder\): .* free of /);
    expect(r.stdout).toContain('local_api_key: (hidden)');
    expect(r.stdout).not.toContain(key);

    const j = await run(['diagnostics', '--json']);
    expect(j.code, j.stderr).toBe(0);
    const d = JSON.parse(j.stdout);
    expect(d.service.reachable).toBe(true);
    expect(d.settings.local_api_key).toBe('(hidden)');
  });

  test('--bundle FOLDER writes a support bundle there and prints its path', async () => {
    const folder = path.join(tmp, 'bundles');
    const r = await run(['diagnostics', '--bundle', folder, '--json']);
    expect(r.code, r.stderr).toBe(0);
    const b = JSON.parse(r.stdout);
    expect(path.dirname(b.path)).toBe(folder);
    expect((await fs.stat(b.path)).size).toBe(b.size);
    const words = await run(['diagnostics', '--bundle', folder]);
    expect(words.code, words.stderr).toBe(0);
    expect(words.stdout).toMatch(new RegExp(`^support bundle written: ${folder}/ferry-support-\\d{8}-\\d{6}(-\\d+)?\\.zip \\(`));
  });

  test('bad usage exits 2; a folder the agent refuses exits 1 with its words', async () => {
    const extra = await run(['diagnostics', 'what']);
    expect(extra.code).toBe(2);
    expect(extra.stderr).toContain('unexpected argument "what"');
    const two = await run(['diagnostics', '--bundle', '/tmp/a', '/tmp/b']);
    expect(two.code).toBe(2);
    const refused = await run(['diagnostics', '--bundle', '/proc/ferry']);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain('system folder');
  });
});
