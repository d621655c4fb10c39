// `ferry settings` against a real agent: it prints every setting with the limits
// in force, `set` changes the bandwidth limits and their schedules in units
// people write, and bad input is refused in words before anything is sent.
import { afterAll, beforeAll, expect, test, vi } from 'vitest';
import { ferry } from '../../helpers/cli.js';
import { call, startTestService, type TestService } from '../../helpers/hosted.js';
import { startTestAgent, type TestAgent } from '../../helpers/agent.js';

vi.setConfig({ testTimeout: 60_000 });
const MiB = 1024 * 1024;
const clean = { FERRY_AGENT_URL: undefined, FERRY_AGENT_API_KEY: undefined };
let svc: TestService;
let agent: TestAgent;
beforeAll(async () => {
  svc = await startTestService();
  agent = await startTestAgent(svc);
});
afterAll(async () => {
  await agent?.close();
  await svc?.close();
});
const run = (args: string[]) => ferry([...args, '--agent', agent.url], clean);

test('ferry settings prints every setting; set changes the limits and a schedule', async () => {
  const shown = await run(['settings']);
  expect(shown.code, shown.stderr).toBe(0);
  expect(shown.stdout).toMatch(/^concurrency: +8$/m);
  expect(shown.stdout).toMatch(/^listen: +127\.0\.0\.1:0 +\(locked: set by --listen where the agent was started\)$/m);
  expect(shown.stdout).toMatch(/^upload-rate-limit: +none$/m);
  expect(shown.stdout).toMatch(/^limits now: +none$/m);

  const sched = JSON.stringify([{ days: ['sat', 'sun'], start: '22:00', end: '06:00', upload_rate_limit: 0, download_rate_limit: 0 }]);
  const set = await run(['settings', 'set', 'upload-rate-limit=20MiB', 'download_rate_limit=5MB', `rate-schedules=${sched}`]);
  expect(set.code, set.stderr).toBe(0);
  expect(set.stdout).toMatch(/^upload-rate-limit: +20\.0 MiB\/s$/m);
  expect(set.stdout).toMatch(/^ {2}1\. sat,sun 22:00-06:00: upload none, download none$/m);
  const s = (await call(agent.url, 'GET', '/settings')).body;
  expect(s).toMatchObject({ upload_rate_limit: 20 * MiB, download_rate_limit: 5_000_000, rate_schedules: JSON.parse(sched) });

  const paused = await run(['settings', 'set', 'rate-limits-paused-until=1h', '--json']);
  expect(paused.code, paused.stderr).toBe(0);
  const until = Date.parse(JSON.parse(paused.stdout).settings.rate_limits_paused_until);
  expect(until - Date.now()).toBeGreaterThan(50 * 60_000);
  expect((await run(['settings'])).stdout).toMatch(/^limits now: +Limits paused until \d\d:\d\d$/m);
});

test('ferry settings prints and sets the queueing settings', async () => {
  const shown = (await run(['settings'])).stdout;
  expect(shown).toMatch(/^fifo: +false$/m);
  expect(shown).toMatch(/^max-active-uploads: +3$/m);
  expect(shown).toMatch(/^connections-per-transfer: +no cap$/m);
  const set = await run(['settings', 'set', 'fifo=on', 'max-active-uploads=1', 'connections_per_transfer=2']);
  expect(set.code, set.stderr).toBe(0);
  expect(set.stdout).toMatch(/^fifo: +true$/m);
  expect(set.stdout).toMatch(/^connections-per-transfer: +2$/m);
  expect((await call(agent.url, 'GET', '/settings')).body).toMatchObject({ fifo: true, max_active_uploads: 1, connections_per_transfer: 2 });
  const bad = await run(['settings', 'set', 'max-active-downloads=many']);
  expect([bad.code, bad.stderr]).toEqual([2, expect.stringMatching(/max-active-downloads must be a whole number from 1 to 64, got "many"/)]);
  const back = await run(['settings', 'set', 'fifo=false', 'max-active-uploads=3', 'connections-per-transfer=none']);
  expect(back.stdout).toMatch(/^connections-per-transfer: +no cap$/m);
});

test('bad input is refused in words, and nothing changes', async () => {
  const before = (await call(agent.url, 'GET', '/settings')).body;
  const cases: [string[], RegExp, number][] = [
    [['settings', 'set', 'upload-rate-limit=fast'], /upload-rate-limit must be bytes a second like 20MiB/, 2],
    [['settings', 'set', 'colour=blue'], /there is no setting "colour"/, 2],
    [['settings', 'set', 'rate-schedules=[{'], /rate-schedules must be a JSON list/, 2],
    [['settings', 'set'], /give at least one NAME=VALUE/, 2],
    [['settings', 'set', 'rate-schedules=[{"days":["mon"],"start":"09:00","end":"09:00","upload_rate_limit":1,"download_rate_limit":1}]'], /Schedule 1 starts and ends at 09:00/, 1],
  ];
  for (const [args, message, code] of cases) {
    const r = await run(args);
    expect(r.code, args.join(' ')).toBe(code);
    expect(r.stderr, args.join(' ')).toMatch(message);
  }
  expect((await call(agent.url, 'GET', '/settings')).body).toEqual(before);
});
