// The transfer commands as child processes against a real service and agent:
// upload (to recipients, as a Link, without waiting, to a Portal), download,
// and the uploads/downloads management actions.
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, test, vi } from 'vitest';
import { ferry } from '../../helpers/cli.js';
import { call, startTestService, type TestService } from '../../helpers/hosted.js';
import { startTestAgent, type TestAgent } from '../../helpers/agent.js';
import { ownerActor, type Actor } from '../../helpers/auth.js';
import { MiB } from '../../helpers/flow.js';
import { startProxiedAgent } from '../agent/uploads-proxy.js';

vi.setConfig({ testTimeout: 120_000, hookTimeout: 120_000 });

let svc: TestService;
let owner: Actor;
let a: TestAgent;
let manual: TestAgent;
let tmp: string;
const files: Record<string, Buffer> = {
  'reel/cut.bin': Buffer.concat([Buffer.alloc(6 * MiB, 7), Buffer.from('tail')]),
  'reel/notes/script.txt': Buffer.from('INT. OFFICE - DAY\n'),
};

const clean = { FERRY_AGENT_URL: undefined, FERRY_AGENT_API_KEY: undefined, FERRY_PASSWORD: undefined };
const run = (t: TestAgent, args: string[]) => ferry([...args, '--agent', t.url], clean);
const json = (stdout: string) => JSON.parse(stdout);

beforeAll(async () => {
  svc = await startTestService();
  owner = await ownerActor(svc);
  tmp = await fs.mkdtemp(path.join(os.tmpdir(), 'ferry-cli-transfers-'));
  for (const [rel, data] of Object.entries(files)) {
    await fs.mkdir(path.dirname(path.join(tmp, rel)), { recursive: true });
    await fs.writeFile(path.join(tmp, rel), data);
  }
  a = await startTestAgent(svc, { 'chunk-size': String(5 * MiB) });
  manual = await startTestAgent(svc, { 'chunk-size': String(5 * MiB), 'auto-finalize': 'false' });
  for (const t of [a, manual]) expect((await call(t.url, 'POST', '/login', { body: svc.owner })).status).toBe(200);
});
afterAll(async () => {
  await a?.close();
  await manual?.close();
  await svc?.close();
  if (tmp) await fs.rm(tmp, { recursive: true, force: true });
});

async function sameTree(dir: string) {
  for (const [rel, data] of Object.entries(files)) expect((await fs.readFile(path.join(dir, rel))).equals(data), rel).toBe(true);
}

describe('ferry upload and ferry download', () => {
  let link: string;

  test('a Link upload waits, shows progress, and prints the Link', async () => {
    const r = await run(a, ['upload', path.join(tmp, 'reel'), '--team-id', owner.teamId, '--package-name', 'Reel']);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toMatch(/^upload complete: 2 items, 6\.0 MiB in \d+ (s|min)/m);
    expect(r.stdout).toMatch(/^package: \S+$/m);
    link = /^link: (\S+)$/m.exec(r.stdout)?.[1] ?? '';
    expect(link).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/.+\?secret=/);
    // Not a terminal: plain progress lines on stderr, ending in the complete state.
    expect(r.stderr).toMatch(/^upload started|^upload \S+ started/m);
    expect(r.stderr).not.toMatch(/\r|\x1b/);
    expect(r.stderr.trimEnd().split('\n').pop()).toMatch(/^upload \S+\s+100%\s+6\.0 MiB \/ 6\.0 MiB\s+complete$/);
  });

  test('ferry download fetches the Package behind the Link into a folder', async () => {
    const dst = path.join(tmp, 'got');
    const r = await run(a, ['download', link, '--dst-folder', dst]);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toMatch(/^download complete: Reel, 2 item\(s\), 6\.0 MiB/m);
    // The Package holds one folder, reel: that is what people open.
    expect(/^saved in: (.+)$/m.exec(r.stdout)?.[1]).toBe(path.join(dst, 'Reel', 'reel'));
    await sameTree(path.join(dst, 'Reel'));
  });

  test('"saved in" names a Package\'s one file, or the Package\'s folder when it holds more than one entry at its top', async () => {
    const saved = async (paths: string[], name: string) => {
      const up = await run(a, ['upload', ...paths.map((p) => path.join(tmp, p)), '--team-id', owner.teamId, '--package-name', name]);
      expect(up.code, up.stderr).toBe(0);
      const dst = path.join(tmp, `got-${name}`);
      const r = await run(a, ['download', /^link: (\S+)$/m.exec(up.stdout)![1]!, '--dst-folder', dst]);
      expect(r.code, r.stderr).toBe(0);
      return [/^saved in: (.+)$/m.exec(r.stdout)?.[1], dst];
    };
    const [one, oneDst] = await saved(['reel/notes/script.txt'], 'Script');
    expect(one).toBe(path.join(oneDst!, 'Script', 'script.txt'));
    expect(await fs.readFile(one!, 'utf8')).toBe('INT. OFFICE - DAY\n');
    const [two, twoDst] = await saved(['reel/notes', 'reel/notes/script.txt'], 'Notes');
    expect(two).toBe(path.join(twoDst!, 'Notes'));
  });

  test('download --no-package-folder --json writes into the folder itself and prints the record', async () => {
    const dst = path.join(tmp, 'flat');
    const r = await run(a, ['download', link, '--dst-folder', dst, '--no-package-folder', '--json']);
    expect(r.code, r.stderr).toBe(0);
    const rec = json(r.stdout);
    expect(rec).toMatchObject({ state: 'complete', package_name: 'Reel', size: files['reel/cut.bin']!.length + files['reel/notes/script.txt']!.length });
    await sameTree(dst);
  });

  test('a download that cannot start (a wrong secret) exits 1 with the agent\'s message', async () => {
    const r = await run(a, ['download', link.replace(/secret=[^&]+/, 'secret=wrong'), '--dst-folder', path.join(tmp, 'never')]);
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/^ferry download: .+\(\d{3}, code \d+\)/);
    // What to do, in a sentence that starts as one.
    expect(r.stderr).toMatch(/^ferry download: No Link answers to this address: .+ Check the Link, or ask the sender for a new one\./m);
  });

  test('an upload to recipients --json prints the final record', async () => {
    const r = await run(a, ['upload', path.join(tmp, 'reel/notes/script.txt'), '--team-id', owner.teamId, '--recipients', 'ann@example.com,bob@example.com', '--json']);
    expect(r.code, r.stderr).toBe(0);
    const rec = json(r.stdout);
    expect(rec).toMatchObject({ state: 'complete', type: 'team', size: files['reel/notes/script.txt']!.length });
    expect(rec.link).toBeUndefined();
  });

  test('upload --tag-name tags the Package, and --tag-id finds that tag again', async () => {
    const byName = await run(a, ['upload', path.join(tmp, 'reel/notes/script.txt'), '--team-id', owner.teamId, '--tag-name', 'Dailies', '--no-link', '--json']);
    expect(byName.code, byName.stderr).toBe(0);
    const tagged = await call(svc.url, 'GET', `/v1/packages/${json(byName.stdout).package_id}`, { headers: owner.h });
    expect(tagged.body.tag).toEqual({ id: expect.any(String), name: 'Dailies' });
    const byId = await run(a, ['upload', path.join(tmp, 'reel/notes/script.txt'), '--team-id', owner.teamId, '--tag-id', tagged.body.tag.id, '--no-link', '--json']);
    expect(byId.code, byId.stderr).toBe(0);
    expect((await call(svc.url, 'GET', `/v1/packages/${json(byId.stdout).package_id}`, { headers: owner.h })).body.tag).toEqual(tagged.body.tag);
  });

  test('download --user-id and --group-id set who owns the files (root only; else the agent says why)', async () => {
    const dst = path.join(tmp, 'owned');
    const r = await run(a, ['download', link, '--dst-folder', dst, '--user-id', '4321', '--group-id', '4321']);
    if (process.getuid?.() === 0) {
      expect(r.code, r.stderr).toBe(0);
      const st = await fs.stat(path.join(dst, 'Reel', 'reel', 'cut.bin'));
      expect([st.uid, st.gid]).toEqual([4321, 4321]);
    } else {
      expect(r.code).toBe(1);
      expect(r.stderr).toMatch(/user_id: changing file ownership to another user needs the agent to run as root/);
    }
  });

  test('an upload without a session exits 1: not signed in', async () => {
    const fresh = await startTestAgent(svc);
    try {
      const r = await run(fresh, ['upload', path.join(tmp, 'reel'), '--team-id', owner.teamId]);
      expect(r.code).toBe(1);
      expect(r.stderr).toMatch(/not signed in: run "ferry login"/);
    } finally {
      await fresh.close();
    }
  });

  test('an upload of a path that does not exist exits 1 with the agent\'s message', async () => {
    const r = await run(a, ['upload', path.join(tmp, 'missing.bin'), '--team-id', owner.teamId]);
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/ferry upload: .*missing\.bin/);
  });

  test('under "npm run ferry", relative paths are taken from the folder npm was run in', async () => {
    const r = await ferry(['upload', 'missing.bin', '--team-id', owner.teamId, '--agent', a.url], { ...clean, npm_lifecycle_event: 'ferry', INIT_CWD: tmp });
    expect(r.code).toBe(1);
    expect(r.stderr).toContain(path.join(tmp, 'missing.bin'));
  });
});

describe('without waiting, and managing uploads', () => {
  test('--no-wait --json prints the new upload at once; uploads get/ls show it', async () => {
    const r = await run(a, ['upload', path.join(tmp, 'reel'), '--team-id', owner.teamId, '--no-wait', '--json']);
    expect(r.code, r.stderr).toBe(0);
    const created = json(r.stdout);
    expect(created.upload_id).toEqual(expect.any(String));
    expect(created.package_id).toEqual(expect.any(String));
    await vi.waitFor(async () => expect((await call(a.url, 'GET', `/uploads/${created.upload_id}`)).body.state).toBe('complete'), { timeout: 60_000, interval: 100 });

    const got = await run(a, ['uploads', 'get', created.upload_id]);
    expect(got.code, got.stderr).toBe(0);
    expect(got.stdout).toMatch(new RegExp(`^upload ${created.upload_id}: complete, 100%`));
    expect(got.stdout).toMatch(/complete\s+100%\s+6\.0 MiB\s+reel\/cut\.bin/);
    const ls = await run(a, ['uploads', 'ls']);
    expect(ls.stdout.split('\n')[0]).toMatch(/^UPLOAD ID\s+STATE\s+DONE\s+SIZE\s+NAME$/);
    expect(ls.stdout).toContain(created.upload_id);
    // Named by the Package, as the window names it: the first test's upload of the folder reel is the Package Reel.
    expect(ls.stdout).toMatch(/ Reel$/m);
    expect(json((await run(a, ['uploads', 'ls', '--json'])).stdout).map((u: { upload_id: string }) => u.upload_id)).toContain(created.upload_id);
  });

  test('uploads files pages through an upload\'s files numbered from 1: --after N starts after file N, and says how to see the rest; a bad --limit exits 2', async () => {
    const dir = path.join(tmp, 'frames');
    await fs.mkdir(dir, { recursive: true });
    for (let i = 1; i <= 7; i++) await fs.writeFile(path.join(dir, `f${i}.bin`), Buffer.alloc(10, i));
    const up = await run(a, ['upload', dir, '--team-id', owner.teamId, '--no-link', '--json']);
    expect(up.code, up.stderr).toBe(0);
    const id = json(up.stdout).upload_id;
    const page = await run(a, ['uploads', 'files', id, '--after', '2', '--limit', '3']);
    expect(page.code, page.stderr).toBe(0);
    const rows = page.stdout.split('\n').filter((l) => /^\d+\s+complete\s/.test(l));
    expect(rows.map((l) => l.split(/\s+/)[0])).toEqual(['3', '4', '5']);
    expect(rows[0]).toMatch(/complete\s+100%\s+10 B\s+frames\/f3\.bin$/);
    expect(page.stdout).toContain(`2 more: ferry uploads files ${id} --after 5`);
    const last = await run(a, ['uploads', 'files', id, '--after', '5', '--json']);
    expect(json(last.stdout)).toMatchObject({ files: [{ index: 5, path: 'frames/f6.bin' }, { index: 6, path: 'frames/f7.bin' }], next: null });
    const bad = await run(a, ['uploads', 'files', id, '--limit', '0']);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toMatch(/--limit must be an integer of at least 1/);
  });

  test('uploads link makes another Link of a complete upload', async () => {
    const [first] = (await call(a.url, 'GET', '/uploads')).body.filter((u: { state: string; type: string }) => u.state === 'complete' && u.type === 'team');
    const r = await run(a, ['uploads', 'link', first.upload_id, '--password', 'open sesame', '--json']);
    expect(r.code, r.stderr).toBe(0);
    expect(json(r.stdout)).toMatchObject({ locked: true, url: expect.stringMatching(/\?secret=/) });
  });

  test('pause and resume of everything answer the affected uploads', async () => {
    // An agent of its own, whose store sits behind a proxy: while it stalls every PUT, uploads
    // stay transferring until the pause, whatever the machine's speed. A complete one is left alone.
    const held = await startProxiedAgent('cli-pause', { 'chunk-size': String(5 * MiB) });
    try {
      const upload = async (rel: string, wait: boolean) => {
        const r = await run(held.agent, ['upload', path.join(tmp, rel), '--team-id', held.owner.teamId, '--json', ...(wait ? [] : ['--no-wait'])]);
        expect(r.code, r.stderr).toBe(0);
        return json(r.stdout) as { upload_id: string; package_id: string; state: string };
      };
      expect((await upload('reel/notes/script.txt', true)).state).toBe('complete');
      held.env.proxy.rule = () => 'stall';
      const moving = [await upload('reel/cut.bin', false), await upload('reel/notes/script.txt', false)];
      const ids = moving.map((u) => u.upload_id).sort();
      // Each has a part held at the proxy: under way, and unable to finish.
      await vi.waitFor(() => {
        for (const u of moving) expect(held.env.proxy.puts.some((p) => p.key.includes(u.package_id)), u.upload_id).toBe(true);
      }, { timeout: 30_000, interval: 50 });

      const p = await run(held.agent, ['uploads', 'pause', '--json']);
      expect(p.code, p.stderr).toBe(0);
      const paused = json(p.stdout) as { upload_id: string; state: string }[];
      expect(paused.map((u) => u.upload_id).sort()).toEqual(ids);
      expect(paused.map((u) => u.state)).toEqual(['paused', 'paused']);

      held.env.proxy.rule = () => 'pass';
      const r = await run(held.agent, ['uploads', 'resume']);
      expect(r.code, r.stderr).toBe(0);
      // Each is transferring again, or waits its turn (queued) until its first part goes.
      const lines = r.stdout.trim().split('\n').sort();
      expect(lines).toHaveLength(ids.length);
      ids.forEach((id, i) => expect(lines[i]).toMatch(new RegExp(`^resumed upload ${id} \\((transferring|queued \\(\\d\\))\\)$`)));
      for (const id of ids) {
        await vi.waitFor(async () => expect((await call(held.agent.url, 'GET', `/uploads/${id}`)).body.state).toBe('complete'), { timeout: 60_000, interval: 100 });
      }
    } finally {
      await held.close();
    }
  });

  test('uploads ls shows an upload that waits its turn as "queued (N)"; uploads cancel stops one, which stays listed as canceled', async () => {
    // One slot, and a store that stalls every PUT: the first upload holds the slot, the second waits.
    const held = await startProxiedAgent('cli-queue', { 'chunk-size': String(5 * MiB), concurrency: '1' });
    try {
      held.env.proxy.rule = () => 'stall';
      const upload = async (rel: string) => {
        const r = await run(held.agent, ['upload', path.join(tmp, rel), '--team-id', held.owner.teamId, '--json', '--no-wait']);
        expect(r.code, r.stderr).toBe(0);
        return json(r.stdout) as { upload_id: string; package_id: string };
      };
      const first = await upload('reel/cut.bin');
      await vi.waitFor(() => expect(held.env.proxy.puts.some((p) => p.key.includes(first.package_id))).toBe(true), { timeout: 30_000, interval: 50 });
      const second = await upload('reel/notes/script.txt');
      await vi.waitFor(async () => expect((await call(held.agent.url, 'GET', `/uploads/${second.upload_id}`)).body.queue_position).toBe(1), { timeout: 30_000, interval: 50 });

      const ls = await run(held.agent, ['uploads', 'ls']);
      expect(ls.code, ls.stderr).toBe(0);
      expect(ls.stdout).toMatch(new RegExp(`^${second.upload_id}\\s+queued \\(1\\)\\s+0%`, 'm'));
      expect(ls.stdout).toMatch(new RegExp(`^${first.upload_id}\\s+transferring\\s`, 'm'));
      const listed = json((await run(held.agent, ['uploads', 'ls', '--json'])).stdout) as { upload_id: string; queue_position?: number }[];
      expect(listed.find((u) => u.upload_id === second.upload_id)!.queue_position).toBe(1);

      const c = await run(held.agent, ['uploads', 'cancel', first.upload_id]);
      expect(c.code, c.stderr).toBe(0);
      expect(c.stdout.trim()).toBe(`canceled upload ${first.upload_id} (canceled)`);
      const after = await run(held.agent, ['uploads', 'ls']);
      expect(after.stdout).toMatch(new RegExp(`^${first.upload_id}\\s+canceled\\s`, 'm'));
      const got = await run(held.agent, ['uploads', 'get', first.upload_id]);
      expect(got.stdout).toMatch(/^canceled: \d{4}-\d\d-\d\dT/m);
      const again = await run(held.agent, ['uploads', 'resume', first.upload_id]);
      expect(again.code).toBe(1);
      expect(again.stderr).toMatch(/canceled, so it cannot be resumed/);
    } finally {
      await held.close();
    }
  });

  test('uploads get of an unknown id exits 1 with a 404', async () => {
    const r = await run(a, ['uploads', 'get', 'nope']);
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/\(404, code 262149\)/);
  });

  test('uploads rm --states complete removes the complete ones', async () => {
    const r = await run(a, ['uploads', 'rm', '--states', 'complete']);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toMatch(/^removed upload \S+ \(complete\)$/m);
    expect((await call(a.url, 'GET', '/uploads')).body.filter((u: { state: string }) => u.state === 'complete')).toEqual([]);
  });
});

describe('an agent that does not finalize by itself', () => {
  test('upload stops at idle; uploads finalize sends it; uploads link makes a Link that downloads', async () => {
    const r = await run(manual, ['upload', path.join(tmp, 'reel'), '--team-id', owner.teamId, '--package-name', 'Held']);
    expect(r.code, r.stderr).toBe(0);
    const id = /waits to be finalized: ferry uploads finalize (\S+)$/m.exec(r.stdout)?.[1];
    expect(id, r.stdout).toBeDefined();
    expect((await call(manual.url, 'GET', `/uploads/${id}`)).body.state).toBe('idle');

    const f = await run(manual, ['uploads', 'finalize', id!]);
    expect(f.code, f.stderr).toBe(0);
    expect(f.stdout.trim()).toBe(`finalized upload ${id}`);
    await vi.waitFor(async () => expect((await call(manual.url, 'GET', `/uploads/${id}`)).body.state).toBe('complete'), { timeout: 30_000, interval: 100 });

    const l = await run(manual, ['uploads', 'link', id!, '--password', 'pw-1234']);
    expect(l.code, l.stderr).toBe(0);
    const url = l.stdout.split('\n')[0]!;
    expect(l.stdout).toContain('(password protected)');

    const dst = path.join(tmp, 'held');
    const noPw = await run(manual, ['download', url, '--dst-folder', dst]);
    expect(noPw.code).toBe(1);
    const d = await run(manual, ['download', url, '--dst-folder', dst, '--password', 'pw-1234']);
    expect(d.code, d.stderr).toBe(0);
    await sameTree(path.join(dst, 'Held'));

    const dl = await run(manual, ['downloads', 'ls', '--json']);
    const rec = json(dl.stdout).find((x: { state: string }) => x.state === 'complete');
    expect(rec).toBeDefined();
    const g = await run(manual, ['downloads', 'get', rec.download_id]);
    expect(g.stdout).toMatch(new RegExp(`^download ${rec.download_id}: complete, 100%`));
    // A complete download has nothing to cancel: the agent says so.
    const c = await run(manual, ['downloads', 'cancel', rec.download_id]);
    expect(c.code).toBe(1);
    expect(c.stderr).toMatch(/complete, so there is nothing to cancel/);
    const rm = await run(manual, ['downloads', 'rm', rec.download_id, '--remove-files']);
    expect(rm.code, rm.stderr).toBe(0);
    expect(rm.stdout).toMatch(/^removed download \S+/);
    await expect(fs.stat(path.join(dst, 'Held', 'reel', 'cut.bin'))).rejects.toThrow();
  });
});

test('ferry portal-upload sends to a Portal without a session, once its terms are accepted', async () => {
  const p = await call(svc.url, 'POST', `/v1/teams/${owner.teamId}/portals`, {
    headers: owner.h, body: { name: 'Dailies', subdomain: 'dailies-cli', active: true, terms_of_service_enabled: true, terms_of_service: { title: 'House rules', text: 'Be kind.' } },
  });
  expect(p.status, JSON.stringify(p.body)).toBe(201);
  const fresh = await startTestAgent(svc, { 'chunk-size': String(5 * MiB) });
  try {
    const args = ['portal-upload', path.join(tmp, 'reel'), '--subdomain', 'dailies-cli', '--sender-email', 'guest@example.com'];
    const refused = await run(fresh, args);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain('accept its terms of service ("House rules"');
    const r = await run(fresh, [...args, '--accept-terms']);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toMatch(/^delivered to the Portal dailies-cli: 2 items, 6\.0 MiB/m);
  } finally {
    await fresh.close();
  }
});
