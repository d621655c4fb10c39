// The service pointed at an external S3-compatible store (a second, separately
// started embedded store; Ceph's RADOS Gateway in that pass) instead of its own:
// blueprints, finalize and downloads all go to that store, and no embedded store runs.
import fs from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, expect, test } from 'vitest';
import { ListObjectsV2Command } from '@aws-sdk/client-s3';
import { startExternalBucket, type ExternalBucket } from '../../helpers/externalStore.js';
import { ownerActor } from '../../helpers/auth.js';
import { MiB, createPackage, downloadAll, fetchBytes, finalizeFile, finalizePackage, makeLink, putParts, putWith, register, sha256, startUpload, uploadFile } from '../../helpers/flow.js';
import { call, startTestService, type TestService } from '../../helpers/hosted.js';
import { SINGLE_PUT } from '../../../src/api/hosted/files.js';
import { createS3Storage } from '../../../src/hosted/storage/s3.js';

let store: ExternalBucket;
let svc: TestService;

beforeAll(async () => {
  store = await startExternalBucket();
  svc = await startTestService(store.serviceFlags());
});

afterAll(async () => {
  await svc?.close();
  await store?.close();
});

test('uploads and downloads go through the external store, and no embedded store starts', async () => {
  expect(svc.s3Url).toBe(store.url);
  await expect(fs.stat(path.join(svc.dataDir, 'objects'))).rejects.toThrow();

  const pkg = await createPackage(svc, await ownerActor(svc), { name: 'to the customer bucket' });
  const files = [
    { name: 'one.bin', path: 'x', data: Buffer.alloc(6 * MiB + 17, 7) },
    { name: 'two.bin', path: '', data: Buffer.from('hello external store') },
  ];
  for (const f of files) await uploadFile(svc, pkg, f.name, f.path, f.data);
  await finalizePackage(svc, pkg);

  const listed = await store.client.send(new ListObjectsV2Command({ Bucket: store.bucket, Prefix: `packages/${pkg.id}/` }));
  expect(listed.KeyCount).toBe(2);

  const got = await downloadAll(svc, await makeLink(svc, pkg));
  expect(sha256(got.get('x/one.bin')!)).toBe(sha256(files[0]!.data));
  expect(got.get('two.bin')!.toString()).toBe('hello external store');
});

test('through the SDK too, blueprints need an open upload of the file, and a finalize that names a missing part is 409', async () => {
  const pkg = await createPackage(svc, await ownerActor(svc), { name: 'checks against the customer bucket' });
  const reg = await register(svc, pkg, { name: 'checked.bin', size: 3 });
  const bogus = await call(svc.url, 'POST', `/v1/packages/${pkg.id}/files/${reg.file.id}?start=0&count=1`, { headers: pkg.h, body: { upload_id: 'not-an-upload' } });
  expect(bogus.status).toBe(400);
  expect(bogus.body.code).toBe('unknown_upload');
  const uploadId = await startUpload(reg.create_blueprint);
  const parts = await putParts(svc, pkg, reg.file.id, uploadId, Buffer.from('abc'));
  const missing = await finalizeFile(svc, pkg, reg.file.id, uploadId, [{ part_number: '2', etag: parts[0]!.etag }], 3);
  expect(missing.status).toBe(409);
  expect(missing.body.code).toBe('part_missing');
  expect((await finalizeFile(svc, pkg, reg.file.id, uploadId, parts, 3)).status).toBe(204);
});

test('a registration with count starts the upload on the external store, and its blueprints upload the file', async () => {
  const pkg = await createPackage(svc, await ownerActor(svc), { name: 'started on the customer bucket' });
  const data = Buffer.alloc(5 * MiB + 3, 4);
  const reg = await register(svc, pkg, { name: 'started.bin', size: data.length }, 2);
  expect(reg.upload_id).toMatch(/\S/);
  const parts = await putWith(reg.upload_blueprints!, data);
  expect((await finalizeFile(svc, pkg, reg.file.id, reg.upload_id!, parts, data.length)).status).toBe(204);
  await finalizePackage(svc, pkg);
  const got = await downloadAll(svc, await makeLink(svc, pkg));
  expect(sha256(got.get('started.bin')!)).toBe(sha256(data));
});

test('a file put in one request goes to the external store, and its finalize checks the object there', async () => {
  const pkg = await createPackage(svc, await ownerActor(svc), { name: 'one PutObject to the customer bucket' });
  const data = Buffer.from('one request, one object');
  const reg = await register(svc, pkg, { name: 'single.bin', size: data.length }, 1, true);
  expect(reg.upload_id).toBe(SINGLE_PUT);
  expect(new URL(reg.upload_blueprints![0].url).origin).toBe(new URL(store.url).origin);
  const parts = await putWith(reg.upload_blueprints!, data);
  const wrong = await finalizeFile(svc, pkg, reg.file.id, SINGLE_PUT, parts, data.length + 1);
  expect([wrong.status, wrong.body.code]).toEqual([409, 'size_mismatch']);
  expect((await finalizeFile(svc, pkg, reg.file.id, SINGLE_PUT, parts, data.length)).status).toBe(204);
  await finalizePackage(svc, pkg);
  const got = await downloadAll(svc, await makeLink(svc, pkg));
  expect(got.get('single.bin')!.toString()).toBe('one request, one object');
});

test('an external store reports no stored parts: its uploads raise registrations and finalizes, no progress (events.md)', async () => {
  const pkg = await createPackage(svc, await ownerActor(svc), { name: 'no progress' });
  await uploadFile(svc, pkg, 'six.bin', '', Buffer.alloc(6 * MiB, 1));
  await finalizePackage(svc, pkg);
  const types = (await svc.ctx.db.selectFrom('events').select('type').where('package_id', '=', pkg.id).orderBy('id').execute()).map((e) => e.type);
  expect(types).toEqual(['package.created', 'file.registered', 'file.finalized', 'package.finalized']);
});

test('part URLs sign the registered length there too: the external store refuses a longer body, and a finalize larger than registered is 409', async () => {
  const pkg = await createPackage(svc, await ownerActor(svc), { name: 'bound on the customer bucket' });
  const reg = await register(svc, pkg, { name: 'bound.bin', size: 1000 }, 1);
  const url = reg.upload_blueprints![0].url;
  expect(new URL(url).searchParams.get('X-Amz-SignedHeaders')).toBe('content-length;host');
  expect((await fetch(url, { method: 'PUT', body: Buffer.alloc(20 * MiB) })).status).toBe(403);
  const parts = await putWith(reg.upload_blueprints!, Buffer.alloc(1000, 1));
  const larger = await finalizeFile(svc, pkg, reg.file.id, reg.upload_id!, parts, 2000);
  expect([larger.status, larger.body.code]).toEqual([409, 'size_mismatch']);
  expect((await finalizeFile(svc, pkg, reg.file.id, reg.upload_id!, parts, 1000)).status).toBe(204);
});

test('a download URL from the external store serves byte ranges (206) and names the file as the service asked', async () => {
  const pkg = await createPackage(svc, await ownerActor(svc), { name: 'ranges from the customer bucket' });
  const data = Buffer.from(Array.from({ length: 6 * MiB + 11 }, (_, i) => (i * 7) % 251));
  const fileId = await uploadFile(svc, pkg, 'día 1.bin', '', data);
  await finalizePackage(svc, pkg);
  const d = await call(svc.url, 'GET', `/v1/packages/${pkg.id}/files/${fileId}/download`, { headers: pkg.h });
  expect(d.status, JSON.stringify(d.body)).toBe(200);
  expect(new URL(d.body.url).origin).toBe(new URL(store.url).origin);
  // Across the parts' boundary (5 MiB), and the tail.
  for (const [start, end] of [[5 * MiB - 3, 5 * MiB + 4], [data.length - 5, data.length - 1]] as const) {
    const got = await fetchBytes(d.body.url, { headers: { range: `bytes=${start}-${end}` } });
    expect(got.status).toBe(206);
    expect(got.headers.get('content-range')).toBe(`bytes ${start}-${end}/${data.length}`);
    expect(got.data.equals(data.subarray(start, end + 1))).toBe(true);
  }
  const whole = await fetchBytes(d.body.url);
  expect(whole.headers.get('content-disposition')).toBe(`attachment; filename*=UTF-8''${encodeURIComponent('día 1.bin')}`);
  expect(sha256(whole.data)).toBe(sha256(data));
});

test("the service's size check of a stored object (a HEAD it signs itself) answers the size and ETag, null when missing, and an error when refused", async () => {
  const pkg = await createPackage(svc, await ownerActor(svc), { name: 'heads' });
  const data = Buffer.from('the object the service checks');
  await uploadFile(svc, pkg, 'checked.txt', '', data);
  const listed = await store.client.send(new ListObjectsV2Command({ Bucket: store.bucket, Prefix: `packages/${pkg.id}/` }));
  const key = listed.Contents![0]!.Key!;
  const info = await svc.ctx.storage.objectInfo(key);
  expect(info).toEqual({ size: data.length, etag: listed.Contents![0]!.ETag });
  expect(await svc.ctx.storage.objectInfo(`${key}-missing`)).toBeNull();
  // A store that refuses: the same bucket, signed with a wrong secret.
  const wrong = createS3Storage({ endpoint: store.url, region: 'us-east-1', bucket: store.bucket, accessKey: store.accessKey, secretKey: 'not-the-secret', pathStyle: true }, 60);
  await expect(wrong.objectInfo(key)).rejects.toMatchObject({ $metadata: { httpStatusCode: 403 } });
});
