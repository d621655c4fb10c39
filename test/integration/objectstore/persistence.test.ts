// The embedded store across restarts: objects, listings and unfinished
// multipart uploads survive; what a crash leaves behind is cleaned at start.

import {
  CompleteMultipartUploadCommand,
  CreateMultipartUploadCommand,
  GetObjectCommand,
  ListObjectsV2Command,
  ListPartsCommand,
  PutObjectCommand,
  S3Client,
  UploadPartCommand,
} from '@aws-sdk/client-s3';
import { randomBytes } from 'node:crypto';
import { mkdir, mkdtemp, readdir, rm, utimes, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadOrCreateStoreCredentials, startObjectStore, type RunningObjectStore } from '../../../src/objectstore/index.js';

const BUCKET = 'ferry-persist';
let dataDir: string;

async function start(): Promise<{ store: RunningObjectStore; s3: S3Client }> {
  const creds = await loadOrCreateStoreCredentials(dataDir);
  const store = await startObjectStore({ host: '127.0.0.1', port: 0, dataDir, ...creds, buckets: [BUCKET] });
  const s3 = new S3Client({
    endpoint: store.url,
    region: 'us-east-1',
    forcePathStyle: true,
    credentials: { accessKeyId: creds.accessKey, secretAccessKey: creds.secretKey },
    requestChecksumCalculation: 'WHEN_REQUIRED',
    responseChecksumValidation: 'WHEN_REQUIRED',
  });
  return { store, s3 };
}

beforeAll(async () => {
  dataDir = await mkdtemp(join(tmpdir(), 'ferry-objectstore-persist-'));
});

afterAll(async () => {
  await rm(dataDir, { recursive: true, force: true });
});

/** Completes a one-part upload; its data holds that part's file alone and reads back as `bytes`. Then stops the store. */
async function completesWithOnly(s: { store: RunningObjectStore; s3: S3Client }, key: string, uploadId: string, etag: string, bytes: Buffer): Promise<void> {
  await s.s3.send(new CompleteMultipartUploadCommand({ Bucket: BUCKET, Key: key, UploadId: uploadId, MultipartUpload: { Parts: [{ PartNumber: 1, ETag: etag }] } }));
  expect(await readdir(join(dataDir, 'buckets', BUCKET, 'data', uploadId))).toEqual([`00001.${etag.replace(/"/g, '')}`]);
  const got = await s.s3.send(new GetObjectCommand({ Bucket: BUCKET, Key: key }));
  expect(Buffer.from(await got.Body!.transformToByteArray()).equals(bytes)).toBe(true);
  s.s3.destroy();
  await s.store.close();
}

describe('restart', () => {
  it('keeps objects and unfinished uploads, and removes crash leftovers', async () => {
    const object = randomBytes(10_000);
    const part = randomBytes(1234);
    const first = await start();
    await first.s3.send(new PutObjectCommand({ Bucket: BUCKET, Key: 'kept/object.bin', Body: object, ContentType: 'application/x-kept' }));
    const { UploadId } = await first.s3.send(new CreateMultipartUploadCommand({ Bucket: BUCKET, Key: 'later.bin' }));
    const { ETag } = await first.s3.send(new UploadPartCommand({ Bucket: BUCKET, Key: 'later.bin', UploadId, PartNumber: 1, Body: part }));
    first.s3.destroy();
    await first.store.close();

    // What a crash can leave: a half-received body and a data directory no manifest points to.
    await writeFile(join(dataDir, '.incoming', 'half-a-part'), 'partial');
    const orphan = join(dataDir, 'buckets', BUCKET, 'data', 'ab'.repeat(16));
    await mkdir(orphan);
    await writeFile(join(orphan, 'part'), 'orphaned bytes');

    const second = await start();
    expect(await readdir(join(dataDir, '.incoming'))).toEqual([]);
    expect(await readdir(join(dataDir, 'buckets', BUCKET, 'data'))).not.toContain('ab'.repeat(16));

    const got = await second.s3.send(new GetObjectCommand({ Bucket: BUCKET, Key: 'kept/object.bin' }));
    expect(got.ContentType).toBe('application/x-kept');
    expect(Buffer.from(await got.Body!.transformToByteArray()).equals(object)).toBe(true);
    const listed = await second.s3.send(new ListObjectsV2Command({ Bucket: BUCKET }));
    expect(listed.Contents!.map((c) => c.Key)).toEqual(['kept/object.bin']);

    await second.s3.send(new CompleteMultipartUploadCommand({
      Bucket: BUCKET, Key: 'later.bin', UploadId, MultipartUpload: { Parts: [{ PartNumber: 1, ETag }] },
    }));
    const later = await second.s3.send(new GetObjectCommand({ Bucket: BUCKET, Key: 'later.bin' }));
    expect(Buffer.from(await later.Body!.transformToByteArray()).equals(part)).toBe(true);
    second.s3.destroy();
    await second.store.close();
  });

  it('takes a part sent again after a restart as the part: listed, completed, and the older bytes refused', async () => {
    const key = 'resent.bin';
    const [older, newer] = [randomBytes(300), randomBytes(400)];
    const first = await start();
    const { UploadId } = await first.s3.send(new CreateMultipartUploadCommand({ Bucket: BUCKET, Key: key }));
    const { ETag: olderTag } = await first.s3.send(new UploadPartCommand({ Bucket: BUCKET, Key: key, UploadId, PartNumber: 1, Body: older }));
    first.s3.destroy();
    await first.store.close();

    const second = await start();
    const { ETag } = await second.s3.send(new UploadPartCommand({ Bucket: BUCKET, Key: key, UploadId, PartNumber: 1, Body: newer }));
    const listed = await second.s3.send(new ListPartsCommand({ Bucket: BUCKET, Key: key, UploadId }));
    expect(listed.Parts!.map((p) => [p.PartNumber, p.ETag, p.Size])).toEqual([[1, ETag, 400]]);
    // The older bytes are no longer part 1, as S3 has it.
    const stale = await second.s3.send(new CompleteMultipartUploadCommand({
      Bucket: BUCKET, Key: key, UploadId, MultipartUpload: { Parts: [{ PartNumber: 1, ETag: olderTag }] },
    })).catch((err: { name: string }) => err.name);
    expect(stale).toBe('InvalidPart');
    await completesWithOnly(second, key, UploadId!, ETag!, newer);
  });

  it('drops the older file of a part that a crash left beside the newer one, and completes with the newer', async () => {
    const key = 'crash-between.bin';
    const part = randomBytes(500);
    const first = await start();
    const { UploadId } = await first.s3.send(new CreateMultipartUploadCommand({ Bucket: BUCKET, Key: key }));
    const { ETag } = await first.s3.send(new UploadPartCommand({ Bucket: BUCKET, Key: key, UploadId, PartNumber: 1, Body: part }));
    first.s3.destroy();
    await first.store.close();

    // A crash after a part sent again was stored and before the older file went: both are there.
    const dir = join(dataDir, 'buckets', BUCKET, 'uploads', UploadId!);
    const olderFile = join(dir, `00001.${'0'.repeat(32)}`);
    await writeFile(olderFile, randomBytes(200));
    await utimes(olderFile, new Date(Date.now() - 60_000), new Date(Date.now() - 60_000));

    const second = await start();
    const listed = await second.s3.send(new ListPartsCommand({ Bucket: BUCKET, Key: key, UploadId }));
    expect(listed.Parts!.map((p) => [p.PartNumber, p.ETag])).toEqual([[1, ETag]]);
    expect((await readdir(dir)).sort()).toEqual([`00001.${ETag!.replace(/"/g, '')}`, 'upload.json']);
    await completesWithOnly(second, key, UploadId!, ETag!, part);
  });
});
