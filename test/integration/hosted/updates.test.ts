// The desktop app's update feed on the service (ferry serve --updates-dir): the
// files of that folder by name, nothing outside it, and nothing at all without it.
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, expect, test } from 'vitest';
import { startTestService, type TestService } from '../../helpers/hosted.js';

let dir: string;
let fed: TestService;
let plain: TestService;

beforeAll(async () => {
  dir = await fs.mkdtemp(path.join(os.tmpdir(), 'ferry-feed-'));
  await fs.writeFile(path.join(dir, 'latest-linux.yml'), 'version: 1.2.3\n');
  await fs.writeFile(path.join(dir, 'Ferry-1.2.3.AppImage'), Buffer.alloc(1000, 7));
  await fs.writeFile(path.join(path.dirname(dir), 'outside.yml'), 'secret: yes\n').catch(() => undefined);
  fed = await startTestService({ 'updates-dir': dir });
  plain = await startTestService();
});

afterAll(async () => {
  await fed?.close();
  await plain?.close();
  await fs.rm(dir, { recursive: true, force: true });
});

test('serves the feed and the installers by name, with their types', async () => {
  const yml = await fetch(`${fed.url}/updates/latest-linux.yml`);
  expect(yml.status).toBe(200);
  expect(yml.headers.get('content-type')).toBe('text/yaml; charset=utf-8');
  expect(yml.headers.get('cache-control')).toBe('no-cache');
  expect(await yml.text()).toBe('version: 1.2.3\n');
  const bin = await fetch(`${fed.url}/updates/Ferry-1.2.3.AppImage`);
  expect(bin.status).toBe(200);
  expect((await bin.arrayBuffer()).byteLength).toBe(1000);
});

test('nothing outside the folder, nothing missing, and no feed without --updates-dir: 404 {code, message}', async () => {
  for (const p of ['/updates/..%2Foutside.yml', '/updates/%2E%2E%2Foutside.yml', '/updates/missing.yml', '/updates/.hidden']) {
    const r = await fetch(`${fed.url}${p}`);
    expect([400, 404], p).toContain(r.status);
    expect(await r.json(), p).toMatchObject({ code: expect.any(String), message: expect.any(String) });
  }
  const none = await fetch(`${plain.url}/updates/latest-linux.yml`);
  expect(none.status).toBe(404);
  expect(await none.json()).toEqual({ code: 'not_found', message: 'update file not found' });
});
