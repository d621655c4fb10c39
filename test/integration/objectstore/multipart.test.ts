// Multipart uploads against the embedded store through @aws-sdk/client-s3:
// ETags, ListParts, abort, the completion checks, ranged reads across part
// files, and that completing moves no bytes.

import {
  AbortMultipartUploadCommand,
  CompleteMultipartUploadCommand,
  CreateMultipartUploadCommand,
  DeleteObjectCommand,
  GetObjectCommand,
  HeadObjectCommand,
  ListPartsCommand,
  PutObjectCommand,
  S3Client,
  UploadPartCommand,
  type CompletedPart,
} from '@aws-sdk/client-s3';
import { createHash, randomBytes } from 'node:crypto';
import { mkdtemp, readdir, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { S3Error, startObjectStore, type RunningObjectStore } from '../../../src/objectstore/index.js';
import { Layout } from '../../../src/objectstore/disk.js';
import { startObjectStoreThread } from '../../../src/objectstore/thread.js';

const BUCKET = 'ferry-multipart';
const MiB = 1024 * 1024;
const credentials = { accessKeyId: 'FERRYTESTACCESSKEY02', secretAccessKey: 'multipart-secret-0123456789abcdef' };

let dataDir: string;
let store: RunningObjectStore;
let s3: S3Client;

const md5 = (b: Buffer): string => createHash('md5').update(b).digest('hex');

async function s3Error(p: Promise<unknown>): Promise<{ name: string; status: number | undefined }> {
  try {
    await p;
  } catch (err) {
    const e = err as { name: string; $metadata?: { httpStatusCode?: number } };
    return { name: e.name, status: e.$metadata?.httpStatusCode };
  }
  throw new Error('expected the request to fail');
}

async function startUpload(key: string, client = s3): Promise<string> {
  const out = await client.send(new CreateMultipartUploadCommand({ Bucket: BUCKET, Key: key, ContentType: 'application/x-big', Metadata: { k: 'v' } }));
  return out.UploadId!;
}

async function uploadParts(key: string, uploadId: string, parts: Buffer[], client = s3): Promise<CompletedPart[]> {
  const done: CompletedPart[] = [];
  for (const [i, body] of parts.entries()) {
    const out = await client.send(new UploadPartCommand({ Bucket: BUCKET, Key: key, UploadId: uploadId, PartNumber: i + 1, Body: body }));
    done.push({ PartNumber: i + 1, ETag: out.ETag });
  }
  return done;
}

function complete(key: string, uploadId: string, parts: CompletedPart[]) {
  return s3.send(new CompleteMultipartUploadCommand({ Bucket: BUCKET, Key: key, UploadId: uploadId, MultipartUpload: { Parts: parts } }));
}

async function range(key: string, r: string, client = s3): Promise<Buffer> {
  const out = await client.send(new GetObjectCommand({ Bucket: BUCKET, Key: key, Range: r }));
  return Buffer.from(await out.Body!.transformToByteArray());
}

/** inode -> size of every regular file that holds object bytes (manifests and upload records excluded). */
async function dataFiles(): Promise<Map<number, number>> {
  const files = new Map<number, number>();
  for (const rel of (await readdir(join(dataDir, 'buckets'), { recursive: true })).map(String)) {
    const st = await stat(join(dataDir, 'buckets', rel));
    if (st.isFile() && !rel.endsWith('.json')) files.set(st.ino, st.size);
  }
  return files;
}

const total = (files: Map<number, number>): number => [...files.values()].reduce((a, b) => a + b, 0);

const clientOf = (url: string) =>
  new S3Client({
    endpoint: url,
    region: 'us-east-1',
    forcePathStyle: true,
    credentials,
    requestChecksumCalculation: 'WHEN_REQUIRED',
    responseChecksumValidation: 'WHEN_REQUIRED',
  });

/** The same store run as `ferry serve` runs it, on its own thread; its control calls cross as messages. */
let threadDir: string;
let threaded: RunningObjectStore;
let threadS3: S3Client;

beforeAll(async () => {
  dataDir = await mkdtemp(join(tmpdir(), 'ferry-objectstore-mp-'));
  const opts = { host: '127.0.0.1', port: 0, accessKey: credentials.accessKeyId, secretKey: credentials.secretAccessKey, buckets: [BUCKET] };
  store = await startObjectStore({ ...opts, dataDir });
  s3 = clientOf(store.url);
  threadDir = await mkdtemp(join(tmpdir(), 'ferry-objectstore-thread-'));
  threaded = await startObjectStoreThread({ ...opts, dataDir: threadDir, logLevel: 'silent' });
  threadS3 = clientOf(threaded.url);
});

afterAll(async () => {
  s3?.destroy();
  threadS3?.destroy();
  await store?.close();
  await threaded?.close();
  await rm(dataDir, { recursive: true, force: true });
  await rm(threadDir, { recursive: true, force: true });
});

describe('multipart uploads', () => {
  const parts = [randomBytes(5 * MiB), randomBytes(5 * MiB), randomBytes(MiB + 123)];
  const whole = Buffer.concat(parts);
  const key = 'big/file.bin';

  it('uploads 5 MiB parts, lists them, and completes with a "<md5-of-md5s>-N" ETag', async () => {
    const uploadId = await startUpload(key);
    const done = await uploadParts(key, uploadId, parts);
    expect(done.map((p) => p.ETag)).toEqual(parts.map((p) => `"${md5(p)}"`));

    const listed = await s3.send(new ListPartsCommand({ Bucket: BUCKET, Key: key, UploadId: uploadId }));
    expect(listed.Parts!.map((p) => [p.PartNumber, p.ETag, p.Size])).toEqual(parts.map((p, i) => [i + 1, `"${md5(p)}"`, p.length]));

    const out = await complete(key, uploadId, done);
    const expected = createHash('md5').update(Buffer.concat(parts.map((p) => createHash('md5').update(p).digest()))).digest('hex');
    expect(out.ETag).toBe(`"${expected}-3"`);
    expect(out.Key).toBe(key);

    const head = await s3.send(new HeadObjectCommand({ Bucket: BUCKET, Key: key }));
    expect(head.ContentLength).toBe(whole.length);
    expect(head.ContentType).toBe('application/x-big');
    expect(head.Metadata).toEqual({ k: 'v' });
    const got = await s3.send(new GetObjectCommand({ Bucket: BUCKET, Key: key }));
    expect(md5(Buffer.from(await got.Body!.transformToByteArray()))).toBe(md5(whole));
  });

  it('serves ranged GETs that cross part boundaries', async () => {
    const b = 5 * MiB; // first boundary
    const cases: Array<[string, number, number]> = [
      [`bytes=${b - 10}-${b + 9}`, b - 10, b + 10], // across parts 1 and 2
      [`bytes=${b - 1}-${2 * b}`, b - 1, 2 * b + 1], // from the end of part 1 into part 3
      [`bytes=${b}-${b}`, b, b + 1], // first byte of part 2
      [`bytes=${2 * b + 5}-`, 2 * b + 5, whole.length], // inside the last part to the end
      ['bytes=-100', whole.length - 100, whole.length], // suffix
      [`bytes=3-${whole.length + 50}`, 3, whole.length], // end clamped
    ];
    for (const [header, start, end] of cases) {
      expect((await range(key, header)).equals(whole.subarray(start, end)), header).toBe(true);
    }
  });

  it('serves one part with ?partNumber=N', async () => {
    const out = await s3.send(new GetObjectCommand({ Bucket: BUCKET, Key: key, PartNumber: 2 }));
    expect(out.$metadata.httpStatusCode).toBe(206);
    expect(out.PartsCount).toBe(3);
    expect(out.ContentRange).toBe(`bytes ${5 * MiB}-${10 * MiB - 1}/${whole.length}`);
    expect(md5(Buffer.from(await out.Body!.transformToByteArray()))).toBe(md5(parts[1]!));
  });

  it('keeps streaming the old bytes to a reader when the object is replaced mid-download', async () => {
    const k = 'replaced-while-read';
    const base = await dataFiles();
    const uploadId = await startUpload(k);
    await complete(k, uploadId, await uploadParts(k, uploadId, parts));
    const oldParts = [...(await dataFiles()).keys()].filter((ino) => !base.has(ino));
    expect(oldParts.length).toBe(3);

    const out = await s3.send(new GetObjectCommand({ Bucket: BUCKET, Key: k }));
    const received: Buffer[] = [];
    let replaced = false;
    for await (const chunk of out.Body as AsyncIterable<Uint8Array>) {
      received.push(Buffer.from(chunk));
      if (!replaced) {
        replaced = true;
        await s3.send(new PutObjectCommand({ Bucket: BUCKET, Key: k, Body: 'new version' }));
        expect((await range(k, 'bytes=0-')).toString()).toBe('new version');
      }
    }
    expect(md5(Buffer.concat(received))).toBe(md5(whole));

    // Once the reader has gone, the old version's parts are dropped (the server notices the closed response asynchronously).
    let remaining = oldParts.length;
    for (let i = 0; i < 500 && remaining > 0; i++) {
      await new Promise((resolve) => setTimeout(resolve, 10));
      const now = await dataFiles();
      remaining = oldParts.filter((ino) => now.has(ino)).length;
    }
    expect(remaining).toBe(0);
  });

  it('releases an object whose download the client aborted, so deleting it frees its parts', async () => {
    const k = 'aborted-download';
    const base = await dataFiles();
    const uploadId = await startUpload(k);
    await complete(k, uploadId, await uploadParts(k, uploadId, parts));
    const mine = [...(await dataFiles()).keys()].filter((ino) => !base.has(ino));

    const controller = new AbortController();
    const out = await s3.send(new GetObjectCommand({ Bucket: BUCKET, Key: k }), { abortSignal: controller.signal });
    const iterator = (out.Body as AsyncIterable<Uint8Array>)[Symbol.asyncIterator]();
    expect((await iterator.next()).done).toBe(false);
    controller.abort();
    await iterator.return?.();

    await s3.send(new DeleteObjectCommand({ Bucket: BUCKET, Key: k }));
    let remaining = mine.length;
    for (let i = 0; i < 500 && remaining > 0; i++) {
      await new Promise((resolve) => setTimeout(resolve, 10));
      const now = await dataFiles();
      remaining = mine.filter((ino) => now.has(ino)).length;
    }
    expect(remaining).toBe(0);
    // The server is still healthy for the next reader.
    expect(md5(await range(key, 'bytes=0-'))).toBe(md5(whole));
  });

  it('rejects a part whose ETag does not match with InvalidPart, and accepts unquoted ETags', async () => {
    const k = 'etag-check';
    const uploadId = await startUpload(k);
    const done = await uploadParts(k, uploadId, [parts[0]!, parts[2]!]);
    const wrong = [done[0]!, { PartNumber: 2, ETag: `"${md5(Buffer.from('other'))}"` }];
    expect(await s3Error(complete(k, uploadId, wrong))).toEqual({ name: 'InvalidPart', status: 400 });
    expect(await s3Error(complete(k, uploadId, [done[0]!, { PartNumber: 3, ETag: done[1]!.ETag }])))
      .toEqual({ name: 'InvalidPart', status: 400 });
    const unquoted = done.map((p) => ({ PartNumber: p.PartNumber, ETag: p.ETag!.replace(/"/g, '') }));
    const out = await complete(k, uploadId, unquoted);
    expect(out.ETag).toMatch(/^"[0-9a-f]{32}-2"$/);
  });

  it('rejects a small part that is not the last with EntityTooSmall', async () => {
    const k = 'too-small';
    const uploadId = await startUpload(k);
    const done = await uploadParts(k, uploadId, [randomBytes(MiB), randomBytes(5 * MiB)]);
    expect(await s3Error(complete(k, uploadId, done))).toEqual({ name: 'EntityTooSmall', status: 400 });
  });

  it('rejects parts listed out of order with InvalidPartOrder', async () => {
    const k = 'out-of-order';
    const uploadId = await startUpload(k);
    const done = await uploadParts(k, uploadId, [parts[0]!, parts[1]!]);
    expect(await s3Error(complete(k, uploadId, [done[1]!, done[0]!]))).toEqual({ name: 'InvalidPartOrder', status: 400 });
  });

  it('replaces a part re-uploaded with the same number', async () => {
    const k = 'reupload';
    const uploadId = await startUpload(k);
    const [first] = await uploadParts(k, uploadId, [randomBytes(1000)]);
    const second = randomBytes(2000);
    const [again] = await uploadParts(k, uploadId, [second]);
    const listed = await s3.send(new ListPartsCommand({ Bucket: BUCKET, Key: k, UploadId: uploadId }));
    expect(listed.Parts!.map((p) => [p.PartNumber, p.ETag, p.Size])).toEqual([[1, `"${md5(second)}"`, 2000]]);
    expect(await s3Error(complete(k, uploadId, [first!]))).toEqual({ name: 'InvalidPart', status: 400 });
    await complete(k, uploadId, [again!]);
    expect((await range(k, 'bytes=0-')).equals(second)).toBe(true);
  });

  it('aborts an upload: its parts are gone and the upload id no longer exists', async () => {
    const k = 'aborted';
    const uploadId = await startUpload(k);
    await uploadParts(k, uploadId, [randomBytes(1000)]);
    const out = await s3.send(new AbortMultipartUploadCommand({ Bucket: BUCKET, Key: k, UploadId: uploadId }));
    expect(out.$metadata.httpStatusCode).toBe(204);
    expect(await readdir(join(dataDir, 'buckets', BUCKET, 'uploads'))).not.toContain(uploadId);
    expect(await s3Error(s3.send(new ListPartsCommand({ Bucket: BUCKET, Key: k, UploadId: uploadId }))))
      .toEqual({ name: 'NoSuchUpload', status: 404 });
    expect((await s3Error(uploadParts(k, uploadId, [randomBytes(10)]))).name).toBe('NoSuchUpload');
    expect((await s3Error(complete(k, uploadId, [{ PartNumber: 1, ETag: '"x"' }]))).name).toBe('NoSuchUpload');
  });

  it('completes without copying data: part files keep their inodes and the bytes on disk do not grow', async () => {
    const k = 'no-copy';
    const uploadId = await startUpload(k);
    const before0 = await dataFiles();
    const done = await uploadParts(k, uploadId, parts);
    const withParts = await dataFiles();
    const partInodes = [...withParts.keys()].filter((ino) => !before0.has(ino));
    expect(partInodes.length).toBe(3);

    await complete(k, uploadId, done);
    const after = await dataFiles();
    for (const ino of partInodes) expect(after.get(ino)).toBe(withParts.get(ino));
    expect(total(after)).toBe(total(withParts));
    expect(md5(await range(k, 'bytes=0-'))).toBe(md5(whole));
  });

  it('replaces a multipart object cleanly with PutObject, and DeleteObject removes its parts', async () => {
    const k = 'replace-me';
    const uploadId = await startUpload(k);
    const before = await dataFiles();
    await complete(k, uploadId, await uploadParts(k, uploadId, parts));
    const partInodes = [...(await dataFiles()).keys()].filter((ino) => !before.has(ino));
    expect(partInodes.length).toBe(3);

    await s3.send(new PutObjectCommand({ Bucket: BUCKET, Key: k, Body: 'small now' }));
    const afterPut = await dataFiles();
    for (const ino of partInodes) expect(afterPut.has(ino)).toBe(false);
    expect(total(afterPut)).toBe(total(before) + 'small now'.length);
    expect((await range(k, 'bytes=0-')).toString()).toBe('small now');
    const head = await s3.send(new HeadObjectCommand({ Bucket: BUCKET, Key: k }));
    expect(head.ETag).toBe(`"${md5(Buffer.from('small now'))}"`);

    const id2 = await startUpload(k);
    await complete(k, id2, await uploadParts(k, id2, parts));
    await s3.send(new DeleteObjectCommand({ Bucket: BUCKET, Key: k }));
    expect(total(await dataFiles())).toBe(total(before));
  });

  it('writes the manifest over upload.json: a small object takes three new inodes, as a PutObject does', async () => {
    const k = 'three-inodes';
    const uploadId = await startUpload(k);
    const record = await stat(join(dataDir, 'buckets', BUCKET, 'uploads', uploadId, 'upload.json'));
    const body = randomBytes(100);
    await complete(k, uploadId, await uploadParts(k, uploadId, [body]));
    expect((await stat(new Layout(dataDir).manifest(BUCKET, k))).ino).toBe(record.ino);
    expect(await readdir(join(dataDir, 'buckets', BUCKET, 'data', uploadId))).toEqual([`00001.${md5(body)}`]);
    const head = await s3.send(new HeadObjectCommand({ Bucket: BUCKET, Key: k }));
    expect([head.ContentType, head.Metadata]).toEqual(['application/x-big', { k: 'v' }]);
  });

  it('discards uploaded parts that the completion list leaves out', async () => {
    const k = 'left-out';
    const uploadId = await startUpload(k);
    const before = await dataFiles();
    const done = await uploadParts(k, uploadId, [parts[0]!, parts[2]!]);
    await complete(k, uploadId, [done[0]!]);
    expect(total(await dataFiles())).toBe(total(before) + parts[0]!.length);
  });
});

describe.each([
  { where: 'in-process', target: () => ({ store, s3 }) },
  { where: 'on the store\'s own thread', target: () => ({ store: threaded, s3: threadS3 }) },
])('control calls for the embedding service (store.local), $where', ({ target }) => {
  const parts = [randomBytes(5 * MiB), randomBytes(2 * MiB)];

  async function failure(p: Promise<unknown>): Promise<{ name: string; code: string; status: number }> {
    try {
      await p;
    } catch (err) {
      // The same class whichever side of a thread it was raised on: the service tells failures apart by it.
      expect(err).toBeInstanceOf(S3Error);
      const e = err as S3Error;
      return { name: e.name, code: e.code, status: e.status };
    }
    throw new Error('expected the call to fail');
  }

  it('lists the parts with quoted MD5 ETags and sizes, and completes what HTTP clients then read whole', async () => {
    const { store, s3 } = target();
    const key = 'local/complete.bin';
    const uploadId = await startUpload(key, s3);
    await uploadParts(key, uploadId, parts, s3);
    const listed = await store.local.listParts(BUCKET, key, uploadId);
    expect(listed).toEqual(parts.map((b, i) => ({ partNumber: i + 1, etag: `"${md5(b)}"`, size: b.length })));
    await store.local.completeUpload(BUCKET, key, uploadId, listed);
    const head = await s3.send(new HeadObjectCommand({ Bucket: BUCKET, Key: key }));
    expect(head.ContentLength).toBe(7 * MiB);
    expect(head.ETag).toMatch(/-2"$/);
    expect((await range(key, `bytes=0-${7 * MiB - 1}`, s3)).equals(Buffer.concat(parts))).toBe(true);
    expect(await failure(store.local.listParts(BUCKET, key, uploadId))).toMatchObject({ code: 'NoSuchUpload', status: 404 });
  });

  it('refuses a part with another ETag, or a small part before the last, as S3 does, and leaves the upload open', async () => {
    const { store, s3 } = target();
    const key = 'local/refused.bin';
    const uploadId = await startUpload(key, s3);
    await uploadParts(key, uploadId, [parts[1]!, parts[0]!], s3);
    const listed = await store.local.listParts(BUCKET, key, uploadId);
    expect(await failure(store.local.completeUpload(BUCKET, key, uploadId, [{ partNumber: 1, etag: md5(parts[0]!) }, listed[1]!])))
      .toMatchObject({ code: 'InvalidPart', status: 400 });
    expect(await failure(store.local.completeUpload(BUCKET, key, uploadId, listed))).toMatchObject({ code: 'EntityTooSmall', status: 400 });
    expect(await store.local.listParts(BUCKET, key, uploadId)).toHaveLength(2);
  });

  it('with the expected size, parts that add up to another size are refused (InvalidPart) and the upload stays open', async () => {
    const { store, s3 } = target();
    const key = 'local/sized.bin';
    const uploadId = await startUpload(key, s3);
    await uploadParts(key, uploadId, parts, s3);
    const named = parts.map((b, i) => ({ partNumber: i + 1, etag: `"${md5(b)}"` }));
    expect(await failure(store.local.completeUpload(BUCKET, key, uploadId, named, 7 * MiB + 1))).toMatchObject({ code: 'InvalidPart', status: 400 });
    expect(await store.local.uploadExists(BUCKET, key, uploadId)).toBe(true);
    await store.local.completeUpload(BUCKET, key, uploadId, named, 7 * MiB);
    expect((await s3.send(new HeadObjectCommand({ Bucket: BUCKET, Key: key }))).ContentLength).toBe(7 * MiB);
  });

  it('aborts an upload once; a second abort, another key or a made-up id is NoSuchUpload (and not an open upload)', async () => {
    const { store, s3 } = target();
    const key = 'local/aborted.bin';
    const uploadId = await startUpload(key, s3);
    await uploadParts(key, uploadId, [parts[1]!], s3);
    expect(await failure(store.local.listParts(BUCKET, 'local/other.bin', uploadId))).toMatchObject({ code: 'NoSuchUpload', status: 404 });
    expect(await store.local.uploadExists(BUCKET, key, uploadId)).toBe(true);
    expect(await store.local.uploadExists(BUCKET, 'local/other.bin', uploadId)).toBe(false);
    await store.local.abortUpload(BUCKET, key, uploadId);
    expect(await store.local.uploadExists(BUCKET, key, uploadId)).toBe(false);
    expect(await store.local.uploadExists(BUCKET, key, 'not-an-upload')).toBe(false);
    expect(await failure(store.local.abortUpload(BUCKET, key, uploadId))).toMatchObject({ code: 'NoSuchUpload', status: 404 });
    expect(await failure(store.local.listParts(BUCKET, key, 'not-an-upload'))).toMatchObject({ code: 'NoSuchUpload', status: 404 });
  });
});
