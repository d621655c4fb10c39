// The agent's System routes: about, version check, health, validation, shutdown.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { call, startTestService, type TestService } from '../../helpers/hosted.js';
import { startTestAgent, type TestAgent } from '../../helpers/agent.js';
import { repoRoot } from '../../helpers/cli.js';
import { AgentErrorCode } from '../../../src/api/agent/errors.js';
import { CreateUploadBody } from '../../../src/api/agent/uploads.js';
import { CreateDownloadBody } from '../../../src/api/agent/downloads.js';
import { freePort } from '../../helpers/ports.js';

const pkgVersion = JSON.parse(fs.readFileSync(path.join(repoRoot, 'package.json'), 'utf8')).version as string;

let svc: TestService;
let a: TestAgent;

beforeAll(async () => {
  svc = await startTestService();
  a = await startTestAgent(svc, { 'chunk-size': String(8 * 1024 * 1024), 'auto-finalize': 'false', concurrency: '3' });
});
afterAll(async () => {
  await a?.close();
  await svc?.close();
});

describe('GET /about', () => {
  test('reports the package version, a build stamp, the hosted URL and the backend build', async () => {
    const r = await call(a.url, 'GET', '/about');
    expect(r.status).toBe(200);
    expect(r.body.version).toBe(pkgVersion);
    expect(r.body.masv_host).toBe(svc.url);
    expect(r.body.build_stamp).toBe(`${pkgVersion}+${r.body.backend.hash === 'dev' ? 'dev' : r.body.backend.hash.slice(0, 12)}`);
    expect(r.body.backend).toEqual({ hash: expect.any(String), build_number: expect.any(String), build_time: expect.any(String) });
    expect(r.body.settings).toEqual({ auto_finalize: false, chunk_size: 8 * 1024 * 1024, concurrency: 3 });
  });

  test('takes the build hash, number and time from FERRY_BUILD_* when a build sets them', async () => {
    const saved = { ...process.env };
    Object.assign(process.env, { FERRY_BUILD_HASH: 'abcdef0123456789abcdef', FERRY_BUILD_NUMBER: '42', FERRY_BUILD_TIME: '2024-05-01T10:00:00Z' });
    try {
      const r = await call(a.url, 'GET', '/about');
      expect(r.body.backend).toEqual({ hash: 'abcdef0123456789abcdef', build_number: '42', build_time: '2024-05-01T10:00:00Z' });
      expect(r.body.build_stamp).toBe(`${pkgVersion}+abcdef012345`);
    } finally {
      for (const k of ['FERRY_BUILD_HASH', 'FERRY_BUILD_NUMBER', 'FERRY_BUILD_TIME']) {
        if (saved[k] === undefined) delete process.env[k];
        else process.env[k] = saved[k];
      }
    }
  });
});

test('GET /version_check: without an update feed on the service, the latest version is the running one', async () => {
  const r = await call(a.url, 'GET', '/version_check');
  expect(r.status).toBe(200);
  expect(r.body.current_version).toEqual({ version: pkgVersion, build_stamp: expect.any(String), masv_host: svc.url });
  expect(r.body.latest_version).toEqual(r.body.current_version);
  expect(r.body.update_available).toBe(false);
});

test('GET /version_check reads the service\'s update feed (ferry serve --updates-dir): a newer version is available, an older one is not', async () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'ferry-updates-'));
  const feedFile = process.platform === 'darwin' ? 'latest-mac.yml' : process.platform === 'linux' ? 'latest-linux.yml' : 'latest.yml';
  const fed = await startTestService({ 'updates-dir': dir });
  const b = await startTestAgent(fed);
  try {
    fs.writeFileSync(path.join(dir, feedFile), 'version: 99.1.0\nfiles:\n  - url: Ferry-99.1.0.AppImage\n    sha512: abc\n    size: 3\npath: Ferry-99.1.0.AppImage\nsha512: abc\n');
    const newer = await call(b.url, 'GET', '/version_check');
    expect(newer.body.update_available).toBe(true);
    expect(newer.body.latest_version.version).toBe('99.1.0');
    fs.writeFileSync(path.join(dir, feedFile), 'version: 0.0.1\n');
    const older = await call(b.url, 'GET', '/version_check');
    expect(older.body.update_available).toBe(false);
    expect(older.body.latest_version.version).toBe(pkgVersion);
  } finally {
    await b.close();
    await fed.close();
    fs.rmSync(dir, { recursive: true, force: true });
  }
});

describe('GET /health', () => {
  test('answers code 0 with the database and the hosted service checked', async () => {
    const r = await call(a.url, 'GET', '/health');
    expect(r.status).toBe(200);
    expect(r.body).toEqual({ code: 0, database: 'ok', hosted: 'reachable' });
  });

  test('stays healthy but says so when the hosted service cannot be reached', async () => {
    const lonely = await startTestAgent({ url: `http://127.0.0.1:${await freePort()}` });
    try {
      const r = await call(lonely.url, 'GET', '/health');
      expect(r.status).toBe(200);
      expect(r.body).toEqual({ code: 0, database: 'ok', hosted: 'unreachable' });
    } finally {
      await lonely.close();
    }
  });
});

test('GET /validation: the version and the input rules, taken from the schemas the routes validate with', async () => {
  const r = await call(a.url, 'GET', '/validation');
  expect(r.status).toBe(200);
  expect(r.body.version).toBe('1.0.0');
  const up = CreateUploadBody.properties as any, down = CreateDownloadBody.properties as any;
  expect(r.body.rules.upload_chunk_size).toMatchObject({ type: 'integer', minimum: up.chunk_size.minimum, default: 8 * 1024 * 1024 });
  expect(r.body.rules.download_chunk_size).toMatchObject({ type: 'integer', minimum: down.chunk_size.minimum, maximum: down.chunk_size.maximum });
  expect(r.body.rules.max_chunk_count).toMatchObject({ type: 'integer', maximum: 10_000 });
  expect(r.body.rules.priority).toMatchObject({ type: 'integer', minimum: up.priority.minimum, maximum: up.priority.maximum, default: 0 });
  expect(r.body.rules.paths).toMatchObject({ type: 'array', min_items: 1, max_items: up.paths.maxItems, max_length: up.paths.items.maxLength });
  expect(r.body.rules.recipients).toMatchObject({ type: 'array', format: 'email' });
  expect(r.body.rules.link_access_limit).toMatchObject({ type: 'integer', minimum: 1 });
  for (const rule of Object.values<any>(r.body.rules)) {
    expect(rule.description).toEqual(expect.any(String));
    expect(rule.applies_to.length).toBeGreaterThan(0);
  }
});

test('an unknown route answers 404 with an integer code', async () => {
  const r = await call(a.url, 'GET', '/nope');
  expect(r.status).toBe(404);
  expect(r.body).toEqual({ code: AgentErrorCode.notFound, message: expect.stringContaining('/api/v1/nope') });
});

describe('POST /shutdown', () => {
  test('a malformed body answers 400 {code, message} and the agent keeps running', async () => {
    const r = await call(a.url, 'POST', '/shutdown', { raw: '{"code":' });
    expect(r.status).toBe(400);
    expect(r.body).toEqual({ code: AgentErrorCode.badRequest, message: expect.any(String) });
    expect((await call(a.url, 'GET', '/health')).status).toBe(200);
  });

  test('answers {code: 0}, then the agent stops', async () => {
    const b = await startTestAgent(svc);
    try {
      const r = await call(b.url, 'POST', '/shutdown');
      expect(r.status).toBe(200);
      expect(r.body).toEqual({ code: 0 });
      await b.agent.stopped;
      await expect(fetch(`${b.url}/health`)).rejects.toThrow();
    } finally {
      await b.close();
    }
  });
});
