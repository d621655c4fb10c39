// svc_to_cloud against a real customer bucket (a second embedded S3 store on
// 127.0.0.1 with its own credentials; a bucket on Ceph's RADOS Gateway in that pass): a Portal's finalized Package goes to the
// attached connection's bucket under target_directory_id, narrowed by the
// attachment's filter, byte-identical, a large file in parts, with the
// manifest when asked for; the manual transfer and its record; a failing
// bucket puts the transfer and the connection in error, and a fixed one
// delivers on the next attempt. The service reads a Package's files and a
// transfer's items in pages of 3, so a Package of 11 files spans four.
import { createHash, randomBytes } from 'node:crypto';
import fs from 'node:fs/promises';
import path from 'node:path';
import { HeadObjectCommand } from '@aws-sdk/client-s3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, startTestService, type TestService } from '../../helpers/hosted.js';
import { teamActors, type Actor } from '../../helpers/auth.js';
import { MiB, createPackage, finalizePackage, uploadFile, type Pkg } from '../../helpers/flow.js';
import { waitFor } from '../../helpers/downloads.js';
import { startCustomerBucket, type CustomerBucket } from '../../helpers/bucket.js';

const sha = (b: Buffer) => createHash('sha256').update(b).digest('hex');
// The customer's buckets are on 127.0.0.1 on purpose: the outbound guard allows that address here.
// Pages of 3 rows (files read to plan, items read to send): a Package here spans several.
const FLAGS = { 'cloud-page-size': '3', 'cloud-part-size': String(8 * MiB), 'cloud-retry-base-ms': '50', 'jobs-poll-ms': '50', 'cloud-attempts': '3', 'allow-private-targets': '127.0.0.1/32' };

let svc: TestService;
let owner: Actor;
let bucket: CustomerBucket;
let awsBucket: CustomerBucket;

beforeAll(async () => {
  bucket = await startCustomerBucket();
  awsBucket = await startCustomerBucket({ bucket: 'aws-bucket', proxied: true });
  svc = await startTestService({ ...FLAGS, 'cloud-aws-endpoint': awsBucket.url });
  ({ owner } = await teamActors(svc, 'cloud'));
});
afterAll(async () => {
  await svc?.close();
  await bucket?.close();
  await awsBucket?.close();
});

async function connection(body: Record<string, unknown>) {
  const r = await call(svc.url, 'POST', `/v1/teams/${owner.teamId}/cloud_connections`, { headers: owner.h, body });
  expect(r.status, JSON.stringify(r.body)).toBe(201);
  return r.body;
}

let seq = 0;
async function portalWith(connections: unknown[]) {
  const r = await call(svc.url, 'POST', `/v1/teams/${owner.teamId}/portals`, {
    headers: owner.h,
    body: { name: 'Deliveries', subdomain: `deliveries-${++seq}`, active: true, configure_cloud_connections: true, cloud_connections: connections },
  });
  expect(r.status, JSON.stringify(r.body)).toBe(201);
  return r.body;
}

async function portalPackage(portalId: string, name: string): Promise<Pkg> {
  const r = await call(svc.url, 'POST', `/v1/portals/${portalId}/packages`, { body: { name, description: '', sender: 'uploader@example.com' } });
  expect(r.status, JSON.stringify(r.body)).toBe(201);
  return { id: r.body.id, token: r.body.access_token, h: { 'x-package-token': r.body.access_token }, body: r.body };
}

const transfers = async (packageId: string) => {
  const r = await call(svc.url, 'GET', `/v1/packages/${packageId}/transfers`, { headers: owner.h });
  expect(r.status, JSON.stringify(r.body)).toBe(200);
  return r.body.records as any[];
};

/** The only transfer of the Package once it has ended. */
const settled = (packageId: string, count = 1) =>
  waitFor(`the transfers of ${packageId} to end`, async () => {
    const list = await transfers(packageId);
    return list.length === count && list.every((t) => t.state === 'complete' || t.state === 'error') ? list : undefined;
  });

const FILES = [
  { path: '', name: 'take1.mov', data: randomBytes(300_000) },
  { path: '', name: 'notes.txt', data: Buffer.from('not for the bucket\n') },
  { path: 'proxies', name: 'take1-proxy.mov', data: randomBytes(10_000) },
  { path: 'audio/day1', name: 'boom.wav', data: randomBytes(70_000) },
  { path: 'audio', name: 'empty.wav', data: Buffer.alloc(0) },
  { path: 'big', name: 'master.mov', data: randomBytes(40 * MiB + 12_345) },
];

describe('a Portal with a filtered S3 connection', () => {
  it('delivers only the files the filter lets through, byte-identical, the large one in parts, and the manifest', async () => {
    const filter = await call(svc.url, 'POST', `/v1/teams/${owner.teamId}/filters`, {
      headers: owner.h,
      body: {
        name: 'Picture and sound, no proxies',
        rules: [
          { action: 'include', criterion: 'file_name', operator: 'regex_match', values: ['\\.mov$', '\\.wav$'] },
          { action: 'exclude', criterion: 'file_path', operator: 'regex_match', values: ['^proxies/'] },
        ],
      },
    });
    expect(filter.status, JSON.stringify(filter.body)).toBe(201);
    const conn = await connection({ name: 'Edit bay bucket', provider: 'generic_s3', authorization: bucket.authorization(), target_directory_id: '/incoming//ferry/', upload_transfer_manifest: true });
    expect(conn).toMatchObject({ state: 'ok', last_error: null, direction: 'svc_to_cloud', target_directory_id: 'incoming/ferry', upload_transfer_manifest: true });
    const portal = await portalWith([{ id: conn.id, target_action: 'transfer', filter_id: filter.body.id }]);
    expect(portal.cloud_connections).toEqual([{ id: conn.id, target_action: 'transfer', filter_id: filter.body.id }]);

    const pkg = await portalPackage(portal.id, 'Day 1: rushes');
    for (const f of FILES) await uploadFile(svc, pkg, f.name, f.path, f.data);
    await finalizePackage(svc, pkg);

    const [t] = await settled(pkg.id);
    const folder = `incoming/ferry/Day 1_ rushes (${pkg.id})`;
    expect(t).toMatchObject({
      state: 'complete',
      package_id: pkg.id,
      cloud_connection_id: conn.id,
      direction: 'svc_to_cloud',
      trigger: 'portal',
      files_total: 4,
      files_done: 4,
      files_filtered_out: 2,
      destination: `${bucket.bucket}/${folder}/`,
      manifest_key: `${folder}/ferry-transfer-manifest.json`,
    });
    expect(t.error).toBeUndefined();
    const wanted = FILES.filter((f) => /\.(mov|wav)$/.test(f.name) && f.path !== 'proxies');
    expect(t.bytes_total).toBe(wanted.reduce((n, f) => n + f.data.length, 0));
    expect(t.bytes_done).toBe(t.bytes_total);

    const keys = await bucket.keys('incoming/');
    expect(keys).toEqual([...wanted.map((f) => `${folder}/${f.path ? `${f.path}/` : ''}${f.name}`), `${folder}/ferry-transfer-manifest.json`].sort());
    for (const f of wanted) expect(sha(await bucket.get(`${folder}/${f.path ? `${f.path}/` : ''}${f.name}`))).toBe(sha(f.data));
    // 40 MiB in 8 MiB parts: a multipart upload of 6 parts (S3's ETag counts them).
    const head = await bucket.client.send(new HeadObjectCommand({ Bucket: bucket.bucket, Key: `${folder}/big/master.mov` }));
    expect(head.ETag).toMatch(/-6"$/);

    const manifest = JSON.parse((await bucket.get(`${folder}/ferry-transfer-manifest.json`)).toString());
    expect(manifest).toMatchObject({ manifest_version: 1, transfer_id: t.id, cloud_connection_id: conn.id, bucket: bucket.bucket, folder, files_filtered_out: 2 });
    expect(manifest.package).toMatchObject({ id: pkg.id, name: 'Day 1: rushes', sender: 'uploader@example.com', portal_id: portal.id, total_files: FILES.length });
    expect(manifest.files.map((f: any) => [f.path, f.name, f.size, f.key]).sort()).toEqual(
      wanted.map((f) => [f.path, f.name, f.data.length, `${folder}/${f.path ? `${f.path}/` : ''}${f.name}`]).sort(),
    );
    expect(manifest.files.find((f: any) => f.name === 'master.mov').etag).toBe(head.ETag);

    const after = await call(svc.url, 'GET', `/v1/cloud_connections/${conn.id}`, { headers: owner.h });
    expect(after.body).toMatchObject({ state: 'ok', last_error: null });
  });

  it('without a filter every file goes, and without the manifest none is written; two connections get one transfer each', async () => {
    const other = await startCustomerBucket({ bucket: 'second-bucket' });
    try {
      const a = await connection({ provider: 'generic_s3', authorization: bucket.authorization(), target_directory_id: 'all' });
      const b = await connection({ provider: 'wasabi_s3', authorization: other.authorization({ region: 'us-east-1', force_s3_path_style: 'true' }) });
      const portal = await portalWith([
        { id: a.id, target_action: 'transfer' },
        { id: b.id, target_action: 'transfer' },
      ]);
      const pkg = await portalPackage(portal.id, 'Everything');
      const small = FILES.filter((f) => f.data.length < MiB);
      for (const f of small) await uploadFile(svc, pkg, f.name, f.path, f.data);
      await finalizePackage(svc, pkg);
      const list = await settled(pkg.id, 2);
      expect(list.map((t) => t.state)).toEqual(['complete', 'complete']);
      expect(list.every((t) => t.manifest_key === null && t.files_filtered_out === 0)).toBe(true);
      const folder = `Everything (${pkg.id})`;
      const expected = small.map((f) => `${folder}/${f.path ? `${f.path}/` : ''}${f.name}`).sort();
      expect(await bucket.keys('all/')).toEqual(expected.map((k) => `all/${k}`));
      expect(await other.keys()).toEqual(expected);
      for (const f of small) expect((await other.get(`${folder}/${f.path ? `${f.path}/` : ''}${f.name}`)).equals(f.data)).toBe(true);
    } finally {
      await other.close();
    }
  });
});

describe('a Package of more files than a page', () => {
  it('plans, sends and lists in the manifest every file of a Package that spans several pages, once each and in order', async () => {
    const conn = await connection({ provider: 'generic_s3', authorization: bucket.authorization(), target_directory_id: 'paged', upload_transfer_manifest: true });
    const portal = await portalWith([{ id: conn.id, target_action: 'transfer' }]);
    const pkg = await portalPackage(portal.id, 'Eleven files');
    const many = Array.from({ length: 11 }, (_, i) => ({ path: `reel${i % 3}`, name: `shot${String(i).padStart(2, '0')}.mov`, data: randomBytes(1000 + i) }));
    for (const f of many) await uploadFile(svc, pkg, f.name, f.path, f.data);
    await finalizePackage(svc, pkg);

    const [t] = await settled(pkg.id);
    expect(t).toMatchObject({ state: 'complete', files_total: 11, files_done: 11, files_filtered_out: 0 });
    const folder = `paged/Eleven files (${pkg.id})`;
    const keyOf = (f: (typeof many)[number]) => `${folder}/${f.path}/${f.name}`;
    expect(await bucket.keys('paged/')).toEqual([...many.map(keyOf), `${folder}/ferry-transfer-manifest.json`].sort());
    for (const f of many) expect((await bucket.get(keyOf(f))).equals(f.data)).toBe(true);
    // The manifest lists the items in the order they were planned: the Package's list order.
    const manifest = JSON.parse((await bucket.get(`${folder}/ferry-transfer-manifest.json`)).toString());
    const listOrder = [...many].sort((a, b) => a.path.localeCompare(b.path) || a.name.localeCompare(b.name));
    expect(manifest.files.map((f: any) => f.key)).toEqual(listOrder.map(keyOf));
  });
});

describe('the manual transfer', () => {
  it('delivers a Team Package whole (no filter) and answers 201 with its record; GET answers the record as it goes', async () => {
    const conn = await connection({ provider: 'generic_s3', authorization: bucket.authorization(), target_directory_id: 'manual' });
    const pkg = await createPackage(svc, owner, { name: 'Sent by hand' });
    for (const f of FILES.slice(0, 3)) await uploadFile(svc, pkg, f.name, f.path, f.data);
    await finalizePackage(svc, pkg);
    const r = await call(svc.url, 'POST', `/v1/packages/${pkg.id}/transfer`, { headers: pkg.h, body: { cloud_connection_id: conn.id, notify_email: 'editor@example.com' } });
    expect(r.status, JSON.stringify(r.body)).toBe(201);
    expect(r.body).toMatchObject({ package_id: pkg.id, cloud_connection_id: conn.id, state: 'queued', trigger: 'manual', direction: 'svc_to_cloud' });
    expect(typeof r.body.id).toBe('string');
    expect(typeof r.body.created_at).toBe('string');

    const done = await waitFor('the manual transfer', async () => {
      const g = await call(svc.url, 'GET', `/v1/packages/${pkg.id}/transfers/${r.body.id}`, { headers: pkg.h });
      expect(g.status).toBe(200);
      return g.body.state === 'complete' ? g.body : undefined;
    });
    expect(done).toMatchObject({ files_total: 3, files_done: 3, files_filtered_out: 0 });
    const folder = `manual/Sent by hand (${pkg.id})`;
    expect(await bucket.keys('manual/')).toEqual(FILES.slice(0, 3).map((f) => `${folder}/${f.path ? `${f.path}/` : ''}${f.name}`).sort());

    // The connection's own list of transfers has it too.
    const byConn = await call(svc.url, 'GET', `/v1/cloud_connections/${conn.id}/transfers`, { headers: owner.h });
    expect(byConn.body.records.map((t: any) => t.id)).toEqual([r.body.id]);
    // notify_email is told (the outbox holds what SMTP would have sent).
    const mails = await waitFor('the e-mail', async () => {
      const dir = path.join(svc.dataDir, 'outbox');
      const all = await Promise.all((await fs.readdir(dir).catch(() => [] as string[])).map((n) => fs.readFile(path.join(dir, n), 'utf8')));
      const hit = all.filter((m) => /^To: editor@example\.com$/m.test(m) && m.includes(r.body.id));
      return hit.length ? hit : undefined;
    });
    expect(mails[0]).toMatch(/Subject: Ferry transfer complete/);
  });

  it('amazon_s3 with an access key goes to the configured AWS endpoint, with its storage class', async () => {
    const conn = await connection({
      provider: 'amazon_s3',
      authorization: { client_id: awsBucket.accessKey, client_secret: awsBucket.secretKey, destination: awsBucket.bucket, region: 'us-east-1', storage_class: 'STANDARD_IA' },
    });
    expect(conn.state).toBe('ok');
    const pkg = await createPackage(svc, owner, { name: 'To AWS' });
    await uploadFile(svc, pkg, 'a.bin', '', FILES[0]!.data);
    await finalizePackage(svc, pkg);
    const r = await call(svc.url, 'POST', `/v1/packages/${pkg.id}/transfer`, { headers: owner.h, body: { cloud_connection_id: conn.id } });
    expect(r.status, JSON.stringify(r.body)).toBe(201);
    const [t] = await settled(pkg.id);
    expect(t.state, JSON.stringify(t)).toBe('complete');
    expect((await awsBucket.get(`To AWS (${pkg.id})/a.bin`)).equals(FILES[0]!.data)).toBe(true);
    const put = awsBucket.proxy!.seen.filter((s) => s.method === 'PUT');
    expect(put.map((s) => decodeURIComponent(s.path))).toEqual([`/${awsBucket.bucket}/To AWS (${pkg.id})/a.bin`]);
    expect(put[0]!.headers['x-amz-storage-class']).toBe('STANDARD_IA');
  });

  it('a bucket that refuses puts the transfer and the connection in error with why; fixed credentials deliver the next one', async () => {
    const conn = await connection({ provider: 'generic_s3', authorization: bucket.authorization({ client_secret: 'wrong-secret' }), target_directory_id: 'refused' });
    const pkg = await createPackage(svc, owner, { name: 'Refused' });
    await uploadFile(svc, pkg, 'a.bin', '', FILES[1]!.data);
    await finalizePackage(svc, pkg);
    const r = await call(svc.url, 'POST', `/v1/packages/${pkg.id}/transfer`, { headers: owner.h, body: { cloud_connection_id: conn.id } });
    const [t] = await settled(pkg.id);
    expect(t).toMatchObject({ id: r.body.id, state: 'error', attempts: 3 });
    expect(t.error).toMatch(/403.*SignatureDoesNotMatch/);
    const c = await call(svc.url, 'GET', `/v1/cloud_connections/${conn.id}`, { headers: owner.h });
    expect(c.body.state).toBe('error');
    expect(c.body.last_error).toMatch(/SignatureDoesNotMatch/);
    expect(await bucket.keys('refused/')).toEqual([]);

    const fixed = await call(svc.url, 'PUT', `/v1/cloud_connections/${conn.id}`, { headers: owner.h, body: { authorization: { client_secret: bucket.secretKey } } });
    expect(fixed.body).toMatchObject({ state: 'ok', last_error: null });
    await call(svc.url, 'POST', `/v1/packages/${pkg.id}/transfer`, { headers: owner.h, body: { cloud_connection_id: conn.id } });
    const both = await settled(pkg.id, 2);
    expect(both.map((x) => x.state)).toEqual(['complete', 'error']);
    expect(await bucket.keys('refused/')).toEqual([`refused/Refused (${pkg.id})/a.bin`]);
  });
});
