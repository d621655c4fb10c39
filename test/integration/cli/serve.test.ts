// The long-running commands as real child processes on ephemeral ports:
// `ferry serve`, `ferry start` (first and second run) and `ferry objectstore`.
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, test, vi } from 'vitest';
import { GetObjectCommand, PutObjectCommand, S3Client } from '@aws-sdk/client-s3';
import { ferry, jsonLine, startFerry, type Running } from '../../helpers/cli.js';
import { call } from '../../helpers/hosted.js';

vi.setConfig({ testTimeout: 180_000, hookTimeout: 120_000 });

let root: string;
const running: Running[] = [];
const launch = (args: string[], env: Record<string, string | undefined> = {}) => {
  const r = startFerry(args, env);
  running.push(r);
  return r;
};

beforeAll(async () => {
  root = await fs.mkdtemp(path.join(os.tmpdir(), 'ferry-cli-servers-'));
});
afterAll(async () => {
  await Promise.all(running.map((r) => r.stop('SIGKILL')));
  await fs.rm(root, { recursive: true, force: true });
});

describe('ferry serve', () => {
  test('logs its URL, answers requests with one log line each, and exits 0 on SIGTERM', async () => {
    const serve = launch(['serve', '--listen', '127.0.0.1:0', '--data-dir', path.join(root, 'serve')]);
    const ready = jsonLine(await serve.waitFor((l) => jsonLine(l)?.msg === 'ferry hosted service ready', 'ready line'))!;
    expect(ready.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    expect(ready.s3).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);

    const r = await call(ready.url as string, 'GET', '/v1/system/packages/spec');
    expect(r.status).toBe(200);
    expect(r.body).toEqual({ max_chunk_count: expect.any(Number), max_chunk_size: expect.any(Number), min_chunk_size: expect.any(Number) });
    const logged = jsonLine(await serve.waitFor((l) => jsonLine(l)?.msg === 'request', 'request log line'))!;
    expect(logged).toMatchObject({ method: 'GET', url: '/v1/system/packages/spec', status: 200 });
    expect(serve.lines.filter((l) => jsonLine(l)?.msg === 'request')).toHaveLength(1);

    expect(await serve.stop('SIGTERM')).toBe(0);
    expect(serve.lines.some((l) => jsonLine(l)?.msg === 'shutting down')).toBe(true);
  });

  test('a second service on the same data dir exits 1 and names the dir; ferry admin still works beside the first; after kill -9 the dir is free at once', async () => {
    const dir = path.join(root, 'shared');
    const args = ['serve', '--listen', '127.0.0.1:0', '--s3-listen', '127.0.0.1:0', '--data-dir', dir, '--init-owner', 'o@example.com:pw-pw-pw-pw'];
    const isReady = (l: string) => jsonLine(l)?.msg === 'ferry hosted service ready';
    const first = launch(args);
    const url = jsonLine(await first.waitFor(isReady, 'ready line'))!.url as string;

    const second = launch(args);
    expect(await second.done()).toBe(1);
    expect(second.stderr()).toContain(`another ferry service is using ${dir}`);
    expect((await call(url, 'GET', '/v1/system/packages/spec')).status).toBe(200);
    const admin = await ferry(['admin', 'list', '--data-dir', dir, '--json']);
    expect(admin.code, admin.stderr).toBe(0);
    expect(admin.stdout).toContain('o@example.com');

    await first.stop('SIGKILL');
    const third = launch(args);
    await third.waitFor(isReady, 'ready line after the kill');
  });

  test('a bad --listen exits 1 with a message', async () => {
    const bad = launch(['serve', '--listen', 'nowhere', '--data-dir', path.join(root, 'bad')]);
    expect(await bad.done()).toBe(1);
    expect(bad.stderr()).toMatch(/--listen must be HOST:PORT/);
  });
});

describe('ferry start', () => {
  const dataDir = () => path.join(root, 'start');
  const args = () => ['start', '--listen', '127.0.0.1:0', '--s3-listen', '127.0.0.1:0', '--agent-listen', '127.0.0.1:0', '--data-dir', dataDir()];
  const field = (lines: string[], label: string) => lines.find((l) => l.trim().startsWith(label))?.trim().slice(label.length).trim();

  test('the first run creates an owner, prints the password and an API key once, and keeps them in a private file', async () => {
    // No display here (DISPLAY unset): it says so in one line and serves the app to the browser.
    const first = launch(args(), { DISPLAY: undefined, WAYLAND_DISPLAY: undefined, FERRY_NO_DESKTOP: undefined });
    await first.waitFor((l) => l.includes('Stop with Ctrl+C'), 'banner');
    expect(first.lines[0]).toBe('The desktop app cannot start here: there is no display (DISPLAY is not set). The same app is in your browser, at the address below.');
    const app = field(first.lines, 'the app')!;
    expect(app).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/ +\(open it in your browser\)$/);
    expect((await fetch(app.split(' ')[0]!)).headers.get('content-type')).toMatch(/^text\/html/);
    const url = field(first.lines, 'service')!;
    const password = field(first.lines, 'password')!;
    const apiKey = field(first.lines, 'API key')!;
    expect(url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    expect(field(first.lines, 'S3 store')).toMatch(/^http:\/\/127\.0\.0\.1:\d+/);
    expect(field(first.lines, 'e-mail')).toBe('admin@ferry.local');
    expect(first.lines.join('\n')).toContain(`${url}/v1/auth`);

    const auth = await call(url, 'POST', '/v1/auth', { body: { email: 'admin@ferry.local', password } });
    expect(auth.status).toBe(200);
    const teams = await call(url, 'GET', '/v1/teams', { headers: { 'x-api-key': apiKey } });
    expect(teams.status).toBe(200);
    expect(teams.body).toHaveLength(1);
    const members = await call(url, 'GET', `/v1/teams/${teams.body[0].id}/members`, { headers: { 'x-api-key': apiKey } });
    expect(members.body[0]).toMatchObject({ email: 'admin@ferry.local', policy_key: 'owner' });

    // The local agent runs too, signed in as the first owner.
    const agentUrl = field(first.lines, 'agent')!;
    expect(agentUrl).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/api\/v1$/);
    const session = await call(agentUrl, 'GET', '/login');
    expect(session.status).toBe(200);
    expect(session.body.user.email).toBe('admin@ferry.local');

    const file = path.join(dataDir(), 'first-owner.txt');
    expect((await fs.stat(file)).mode & 0o777).toBe(0o600);
    const kept = await fs.readFile(file, 'utf8');
    expect(kept).toContain(password);
    expect(kept).toContain(apiKey);

    expect(await first.stop('SIGINT')).toBe(0);
  });

  test('a second run shows where the credentials are, not the credentials', async () => {
    const second = launch(args());
    await second.waitFor((l) => l.includes('Stop with Ctrl+C'), 'banner');
    const text = second.lines.join('\n');
    const kept = await fs.readFile(path.join(dataDir(), 'first-owner.txt'), 'utf8');
    const password = /password (\S+)/.exec(kept)![1]!;
    expect(text).not.toContain(password);
    expect(text).toContain(path.join(dataDir(), 'first-owner.txt'));
    expect(await second.stop('SIGTERM')).toBe(0);
  });
});

describe('ferry objectstore', () => {
  test('serves S3 with the given keys and buckets, and stops on SIGTERM', async () => {
    const creds = { accessKeyId: 'STANDALONEKEY01', secretAccessKey: 'standalone-secret-for-the-test' };
    const store = launch(
      ['objectstore', '--listen', '127.0.0.1:0', '--data-dir', path.join(root, 'store'), '--access-key', creds.accessKeyId, '--bucket', 'one', '--bucket', 'two'],
      { FERRY_OBJECTSTORE_SECRET_KEY: creds.secretAccessKey },
    );
    const ready = jsonLine(await store.waitFor((l) => jsonLine(l)?.msg === 'ferry object store ready', 'ready line'))!;
    expect(ready).toMatchObject({ accessKey: creds.accessKeyId, buckets: ['one', 'two'] });
    expect(JSON.stringify(store.lines)).not.toContain(creds.secretAccessKey);

    const s3 = new S3Client({ endpoint: ready.url as string, region: 'us-east-1', forcePathStyle: true, credentials: creds });
    await s3.send(new PutObjectCommand({ Bucket: 'two', Key: 'hello.txt', Body: 'hello' }));
    const got = await s3.send(new GetObjectCommand({ Bucket: 'two', Key: 'hello.txt' }));
    expect(await got.Body!.transformToString()).toBe('hello');
    const wrong = new S3Client({ endpoint: ready.url as string, region: 'us-east-1', forcePathStyle: true, credentials: { ...creds, secretAccessKey: 'wrong-secret-wrong-secret' } });
    await expect(wrong.send(new GetObjectCommand({ Bucket: 'two', Key: 'hello.txt' }))).rejects.toThrow();
    s3.destroy();
    wrong.destroy();

    expect(await store.stop('SIGTERM')).toBe(0);
  });

  test('only one of the two keys is bad usage (exit 2)', async () => {
    const bad = launch(['objectstore', '--listen', '127.0.0.1:0', '--data-dir', path.join(root, 'store2'), '--access-key', 'ONLYONE']);
    expect(await bad.done()).toBe(2);
    expect(bad.stderr()).toMatch(/--access-key and --secret-key go together/);
  });
});
