// What the download routes refuse (bad input: 400 {code, message} and nothing
// created), and what a hostile Package cannot do: paths that try to leave
// dst_folder write nothing outside it, flagged files are skipped or refused.
import fs from 'node:fs';
import fsp from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { PutObjectCommand, S3Client } from '@aws-sdk/client-s3';
import { startTestAgent, type TestAgent } from '../../helpers/agent.js';
import { startProxiedService, type ProxiedService } from '../../helpers/s3Proxy.js';
import { ownerActor } from '../../helpers/auth.js';
import { createPackage, finalizePackage, makeLink, sha256, uploadFile } from '../../helpers/flow.js';
import { agentCall, startDownload, treeOf, waitForState } from '../../helpers/downloads.js';
import { onlyIf } from '../../helpers/skip.js';

let env: ProxiedService;
let a: TestAgent;
let tmp: string;
let link: { url: string; id: string; secret: string };
const good = Buffer.from('a good file\n');
const plain = Buffer.from('stored in one PUT, so its ETag is a plain MD5\n');

beforeAll(async () => {
  env = await startProxiedService();
  a = await startTestAgent(env.svc);
  tmp = await fsp.mkdtemp(path.join(os.tmpdir(), 'ferry-dl-input-'));
  const pkg = await createPackage(env.svc, await ownerActor(env.svc), { name: 'Hostile' });
  const goodId = await uploadFile(env.svc, pkg, 'good.txt', '', good);
  await finalizePackage(env.svc, pkg);

  // One object written in a single PUT (plain MD5 ETag), then rows the upload API would never accept.
  const s3 = new S3Client({ endpoint: env.store.url, region: 'us-east-1', forcePathStyle: true, credentials: { accessKeyId: env.creds.accessKey, secretAccessKey: env.creds.secretKey } });
  await s3.send(new PutObjectCommand({ Bucket: env.bucket, Key: `packages/${pkg.id}/plain`, Body: plain }));
  s3.destroy();
  const realKey = (await env.svc.ctx.db.selectFrom('files').select('object_key').where('id', '=', goodId).executeTakeFirstOrThrow()).object_key;
  const now = new Date().toISOString();
  const row = (id: string, name: string, p: string, extra: Record<string, unknown> = {}) => ({
    id, package_id: pkg.id, kind: 'file' as const, name, path: p, last_modified: now, size: good.length, chunk_size: 0,
    object_key: realKey, upload_id: null, state: 'finalized' as const, virus_detected: 0, created_at: now, updated_at: now, ...extra,
  });
  await env.svc.ctx.db.insertInto('files').values([
    row('file_evil_up', 'evil', '../../outside'),
    row('file_evil_abs', 'ferry-escape-test', '/etc'),
    row('file_evil_drive', 'win', 'C:/Windows'),
    row('file_evil_dotdot', '..', 'docs'),
    row('file_evil_back', 'back', 'a\\..\\..\\b'),
    row('file_evil_nul', 'nul', 'a\u0000b'),
    row('file_evil_dir', 'dir-escape', '../..', { kind: 'directory', size: 0, object_key: null }),
    row('file_infected', 'infected.bin', '', { virus_detected: 1 }),
    row('file_plain', 'plain.txt', 'sub', { size: plain.length, object_key: `packages/${pkg.id}/plain` }),
  ]).execute();
  link = await makeLink(env.svc, pkg);
}, 120_000);

afterAll(async () => {
  await a?.close();
  await env?.close();
  if (tmp) await fsp.rm(tmp, { recursive: true, force: true });
});

const count = async () => (await agentCall(a.url, 'GET', '/downloads')).body.length as number;

function expectError(r: { status: number; body: any }, status = 400) {
  expect(r.status, JSON.stringify(r.body)).toBe(status);
  expect(typeof r.body.code).toBe('number');
  expect(typeof r.body.message).toBe('string');
}

describe('bad input', () => {
  test('POST /downloads refuses malformed bodies with 400 and creates nothing', async () => {
    const dst = path.join(tmp, 'never');
    const file = path.join(tmp, 'a-file');
    await fsp.writeFile(file, 'x');
    const ok = { url: link.url, dst_folder: dst };
    const bodies: [string, unknown][] = [
      ['no body', undefined],
      ['missing url', { dst_folder: dst }],
      ['missing dst_folder', { url: link.url }],
      ['url not a string', { ...ok, url: 42 }],
      ['url not a URL', { ...ok, url: 'not a url' }],
      ['url not http', { ...ok, url: link.url.replace(/^http/, 'ftp') }],
      ['url without secret', { ...ok, url: link.url.split('?')[0] }],
      ['url without link id', { ...ok, url: new URL(link.url).origin + '/?secret=x' }],
      ['relative dst_folder', { ...ok, dst_folder: 'relative/dir' }],
      ['dst_folder with NUL', { ...ok, dst_folder: `${dst}\u0000x` }],
      ['dst_folder is a file', { ...ok, dst_folder: file }],
      ['chunk_size too small', { ...ok, chunk_size: 1000 }],
      ['chunk_size as text', { ...ok, chunk_size: '16777216' }],
      ['priority not an integer', { ...ok, priority: 1.5 }],
      ['file_ids empty', { ...ok, file_ids: [] }],
      ['file_ids not of the Package', { ...ok, file_ids: ['file_nope'] }],
      ['create_package_folder not a boolean', { ...ok, create_package_folder: 'yes' }],
      ['password not a string', { ...ok, password: 1234 }],
      ['user_id negative', { ...ok, user_id: -1 }],
    ];
    for (const [what, body] of bodies) {
      const r = await agentCall(a.url, 'POST', '/downloads', body);
      expect(r.status, `${what}: ${JSON.stringify(r.body)}`).toBe(400);
      expectError(r);
    }
    const unknown = await agentCall(a.url, 'POST', '/downloads', { ...ok, url: link.url.replace(link.id, 'link_doesnotexist0000') });
    expectError(unknown, 404);
    const wrongSecret = await agentCall(a.url, 'POST', '/downloads', { ...ok, url: link.url.replace(/secret=[^&]+/, 'secret=wrong') });
    expectError(wrongSecret, 404);
    expect(await count()).toBe(0);
    expect(fs.existsSync(dst)).toBe(false);
  });

  test('the routes with an id refuse malformed ids and queries with 400 and unknown ids with 404, touching nothing', async () => {
    const to = path.join(tmp, 'kept');
    const id = await startDownload(a.url, { url: link.url, dst_folder: to, file_ids: ['file_plain'] });
    await waitForState(a.url, id);
    const bad: [string, string][] = [
      ['GET', '/downloads/bad%20id'],
      ['POST', '/downloads/bad%20id/pause'],
      ['POST', '/downloads/bad%20id/resume'],
      ['DELETE', '/downloads/bad%20id'],
      ['DELETE', `/downloads/${id}?remove_files=maybe`],
      ['DELETE', '/downloads?states=bogus'],
      ['DELETE', '/downloads?states=complete,,error'],
      ['DELETE', '/downloads?remove_files=maybe'],
    ];
    for (const [method, p] of bad) {
      const r = await agentCall(a.url, method, p);
      expect(r.status, `${method} ${p}: ${JSON.stringify(r.body)}`).toBe(400);
      expectError(r);
    }
    for (const [method, p] of [['GET', '/downloads/unknown'], ['POST', '/downloads/unknown/pause'], ['POST', '/downloads/unknown/resume'], ['DELETE', '/downloads/unknown']] as const) {
      expectError(await agentCall(a.url, method, p), 404);
    }
    expect((await agentCall(a.url, 'GET', `/downloads/${id}`)).body.state).toBe('complete');
    expect(await treeOf(to)).toEqual(new Map([['Hostile', 'dir'], ['Hostile/sub', 'dir'], ['Hostile/sub/plain.txt', sha256(plain)]]));
    expect((await agentCall(a.url, 'DELETE', `/downloads/${id}`)).status).toBe(200);
  });
});

describe('a hostile Package', () => {
  test.each([true, false])('writes nothing outside dst_folder (create_package_folder: %s)', async (withFolder) => {
    const outer = await fsp.mkdtemp(path.join(tmp, 'outer-'));
    const dst = path.join(outer, 'a', 'b', 'dst');
    const etcBefore = fs.existsSync('/etc/ferry-escape-test');
    const id = await startDownload(a.url, { url: link.url, dst_folder: dst, create_package_folder: withFolder });
    const record = await waitForState(a.url, id);

    const root = withFolder ? 'a/b/dst/Hostile' : 'a/b/dst';
    const expected = new Map([['a', 'dir'], ['a/b', 'dir'], ['a/b/dst', 'dir']]);
    if (withFolder) expected.set(root, 'dir');
    expected.set(`${root}/good.txt`, sha256(good));
    expected.set(`${root}/sub`, 'dir');
    expected.set(`${root}/sub/plain.txt`, sha256(plain));
    expect(await treeOf(outer)).toEqual(expected);
    expect(fs.existsSync('/etc/ferry-escape-test')).toBe(etcBefore);

    const byId = new Map(record.items.map((i: any) => [i.file_id, i]));
    for (const evil of ['file_evil_up', 'file_evil_abs', 'file_evil_drive', 'file_evil_dotdot', 'file_evil_back', 'file_evil_nul']) {
      expect(byId.get(evil), evil).toMatchObject({ state: 'skipped', progress: 0, local_path: null });
      expect((byId.get(evil) as any).error).toMatch(/^refused: /);
    }
    expect(byId.get('file_infected')).toMatchObject({ state: 'skipped', error: 'skipped: flagged with malware' });
    expect(byId.get('file_plain')).toMatchObject({ state: 'complete', progress: plain.length });
    // Its plain-MD5 ETag was seen, so the whole file was checked against it before it got its name.
    const etag = a.agent.ctx.db.prepare('SELECT etag FROM download_items WHERE download_id = ? AND file_id = ?').get(id, 'file_plain') as { etag: string };
    expect(etag.etag).toMatch(/^"[0-9a-f]{32}"$/);
    expect(record.size).toBe(good.length + plain.length);
  });

  test('bypass_package_quarantine: false refuses a Package with flagged files (409) and creates nothing', async () => {
    const dst = path.join(tmp, 'quarantined');
    const before = await count();
    const r = await agentCall(a.url, 'POST', '/downloads', { url: link.url, dst_folder: dst, bypass_package_quarantine: false });
    expectError(r, 409);
    expect(r.body.message).toMatch(/quarantined/);
    expect(await count()).toBe(before);
    expect(fs.existsSync(dst)).toBe(false);
    // Selecting only clean files is fine.
    const id = await startDownload(a.url, { url: link.url, dst_folder: dst, bypass_package_quarantine: false, file_ids: ['file_plain'] });
    await waitForState(a.url, id);
    expect(await treeOf(dst)).toEqual(new Map([['Hostile', 'dir'], ['Hostile/sub', 'dir'], ['Hostile/sub/plain.txt', sha256(plain)]]));
  });
});

describe('file ownership', () => {
  const root = process.platform !== 'win32' && process.getuid?.() === 0;

  test('user_id and group_id own the files and the folders the download made (agent running as root)', onlyIf(root, 'needs root: only root gives files to another user'), async () => {
    const dst = path.join(tmp, 'owned');
    const id = await startDownload(a.url, { url: link.url, dst_folder: dst, file_ids: ['file_plain'], user_id: 4242, group_id: 4343 });
    await waitForState(a.url, id);
    for (const p of ['Hostile', 'Hostile/sub', 'Hostile/sub/plain.txt']) {
      const st = await fsp.stat(path.join(dst, p));
      expect([st.uid, st.gid], p).toEqual([4242, 4343]);
    }
  });

  test('another user_id is refused with 400 when the agent is not root', onlyIf(!root && process.platform !== 'win32', 'runs as a user other than root, on POSIX'), async () => {
    const r = await agentCall(a.url, 'POST', '/downloads', { url: link.url, dst_folder: path.join(tmp, 'not-owned'), user_id: (process.getuid?.() ?? 0) + 1 });
    expectError(r);
    expect(fs.existsSync(path.join(tmp, 'not-owned'))).toBe(false);
  });
});

