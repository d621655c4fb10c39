// The embedded object store driven by @aws-sdk/client-s3: plain objects,
// ranges, listing, copy, key safety, lifecycle of the server itself.

import {
  CopyObjectCommand,
  CreateBucketCommand,
  DeleteObjectCommand,
  DeleteObjectsCommand,
  GetObjectCommand,
  GetObjectTaggingCommand,
  HeadBucketCommand,
  HeadObjectCommand,
  ListObjectsV2Command,
  PutObjectCommand,
  S3Client,
  type ListObjectsV2CommandOutput,
} from '@aws-sdk/client-s3';
import { getSignedUrl } from '@aws-sdk/s3-request-presigner';
import { createHash, randomBytes } from 'node:crypto';
import { mkdir, mkdtemp, readdir, rm } from 'node:fs/promises';
import http from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startObjectStore, type RunningObjectStore } from '../../../src/objectstore/index.js';

const BUCKET = 'ferry-test';
const credentials = { accessKeyId: 'FERRYTESTACCESSKEY01', secretAccessKey: 'test-secret-key-0123456789abcdef' };

let root: string;
let dataDir: string;
let store: RunningObjectStore;
let s3: S3Client;

function client(endpoint: string, extra: Partial<ConstructorParameters<typeof S3Client>[0]> = {}): S3Client {
  return new S3Client({
    endpoint,
    region: 'us-east-1',
    forcePathStyle: true,
    credentials,
    requestChecksumCalculation: 'WHEN_REQUIRED',
    responseChecksumValidation: 'WHEN_REQUIRED',
    ...extra,
  });
}

async function s3Error(p: Promise<unknown>): Promise<{ name: string; status: number | undefined }> {
  try {
    await p;
  } catch (err) {
    const e = err as { name: string; $metadata?: { httpStatusCode?: number } };
    return { name: e.name, status: e.$metadata?.httpStatusCode };
  }
  throw new Error('expected the request to fail');
}

async function body(key: string, range?: string): Promise<Buffer> {
  const out = await s3.send(new GetObjectCommand({ Bucket: BUCKET, Key: key, Range: range }));
  return Buffer.from(await out.Body!.transformToByteArray());
}

/** Every file and directory under `dir`, relative. */
async function walk(dir: string): Promise<string[]> {
  return (await readdir(dir, { recursive: true })).map(String);
}

beforeAll(async () => {
  // dataDir is nested so we can tell whether anything was written beside it.
  root = await mkdtemp(join(tmpdir(), 'ferry-objectstore-'));
  dataDir = join(root, 'data');
  await mkdir(dataDir);
  store = await startObjectStore({
    host: '127.0.0.1',
    port: 0,
    dataDir,
    accessKey: credentials.accessKeyId,
    secretKey: credentials.secretAccessKey,
    buckets: [BUCKET],
  });
  s3 = client(store.url);
});

afterAll(async () => {
  s3?.destroy();
  await store?.close();
  await rm(root, { recursive: true, force: true });
});

describe('objects', () => {
  it('listens on an ephemeral port when asked for port 0', () => {
    expect(store.port).toBeGreaterThan(0);
    expect(store.url).toBe(`http://127.0.0.1:${store.port}`);
  });

  it('puts, gets, heads and deletes an object with its metadata', async () => {
    const data = randomBytes(100_000);
    const put = await s3.send(new PutObjectCommand({
      Bucket: BUCKET, Key: 'docs/report.bin', Body: data, ContentType: 'application/x-report', Metadata: { owner: 'ada' },
    }));
    const md5 = createHash('md5').update(data).digest('hex');
    expect(put.ETag).toBe(`"${md5}"`);

    const got = await s3.send(new GetObjectCommand({ Bucket: BUCKET, Key: 'docs/report.bin' }));
    expect(Buffer.from(await got.Body!.transformToByteArray()).equals(data)).toBe(true);
    expect(got.ContentType).toBe('application/x-report');
    expect(got.Metadata).toEqual({ owner: 'ada' });

    const head = await s3.send(new HeadObjectCommand({ Bucket: BUCKET, Key: 'docs/report.bin' }));
    expect(head.ContentLength).toBe(data.length);
    expect(head.ETag).toBe(`"${md5}"`);

    const del = await s3.send(new DeleteObjectCommand({ Bucket: BUCKET, Key: 'docs/report.bin' }));
    expect(del.$metadata.httpStatusCode).toBe(204);
    expect(await s3Error(s3.send(new GetObjectCommand({ Bucket: BUCKET, Key: 'docs/report.bin' }))))
      .toEqual({ name: 'NoSuchKey', status: 404 });
    expect((await s3Error(s3.send(new HeadObjectCommand({ Bucket: BUCKET, Key: 'docs/report.bin' })))).status).toBe(404);
    // Deleting a key that does not exist is not an error in S3.
    const again = await s3.send(new DeleteObjectCommand({ Bucket: BUCKET, Key: 'docs/report.bin' }));
    expect(again.$metadata.httpStatusCode).toBe(204);
  });

  it('stores an empty object', async () => {
    await s3.send(new PutObjectCommand({ Bucket: BUCKET, Key: 'empty', Body: Buffer.alloc(0) }));
    expect((await body('empty')).length).toBe(0);
    const head = await s3.send(new HeadObjectCommand({ Bucket: BUCKET, Key: 'empty' }));
    expect(head.ETag).toBe('"d41d8cd98f00b204e9800998ecf8427e"');
  });

  it('answers byte ranges with 206 and Content-Range, and 416 when unsatisfiable', async () => {
    const data = randomBytes(1000);
    await s3.send(new PutObjectCommand({ Bucket: BUCKET, Key: 'ranged', Body: data }));
    const part = await s3.send(new GetObjectCommand({ Bucket: BUCKET, Key: 'ranged', Range: 'bytes=10-19' }));
    expect(part.$metadata.httpStatusCode).toBe(206);
    expect(part.ContentRange).toBe('bytes 10-19/1000');
    expect(Buffer.from(await part.Body!.transformToByteArray()).equals(data.subarray(10, 20))).toBe(true);
    expect((await body('ranged', 'bytes=990-')).equals(data.subarray(990))).toBe(true);
    expect((await body('ranged', 'bytes=-5')).equals(data.subarray(995))).toBe(true);
    expect((await body('ranged', 'bytes=900-5000')).equals(data.subarray(900))).toBe(true);
    expect(await s3Error(s3.send(new GetObjectCommand({ Bucket: BUCKET, Key: 'ranged', Range: 'bytes=1000-1001' }))))
      .toEqual({ name: 'InvalidRange', status: 416 });
  });

  it('answers conditional GETs: 304 for a matching If-None-Match, 412 for a failed If-Match', async () => {
    const put = await s3.send(new PutObjectCommand({ Bucket: BUCKET, Key: 'conditional', Body: 'v1' }));
    expect((await s3Error(s3.send(new GetObjectCommand({ Bucket: BUCKET, Key: 'conditional', IfNoneMatch: put.ETag })))).status).toBe(304);
    expect((await s3Error(s3.send(new GetObjectCommand({ Bucket: BUCKET, Key: 'conditional', IfMatch: '"0123"' })))).status).toBe(412);
    expect((await body('conditional')).toString()).toBe('v1');
  });

  it('applies response-content-type and response-content-disposition overrides', async () => {
    await s3.send(new PutObjectCommand({ Bucket: BUCKET, Key: 'override', Body: 'x', ContentType: 'text/plain' }));
    const out = await s3.send(new GetObjectCommand({
      Bucket: BUCKET, Key: 'override',
      ResponseContentType: 'application/x-ferry', ResponseContentDisposition: 'attachment; filename="a b.txt"',
    }));
    expect(out.ContentType).toBe('application/x-ferry');
    expect(out.ContentDisposition).toBe('attachment; filename="a b.txt"');
  });

  it('decodes aws-chunked bodies (streaming checksum trailer) sent by the SDK', async () => {
    const chunked = client(store.url, { requestChecksumCalculation: 'WHEN_SUPPORTED' });
    const data = randomBytes(300_000);
    const seen: string[] = [];
    chunked.middlewareStack.add((next) => async (args) => {
      const headers = (args.request as { headers: Record<string, string> }).headers;
      seen.push(headers['x-amz-content-sha256'] ?? '', headers['content-encoding'] ?? '');
      return next(args);
    }, { step: 'finalizeRequest', priority: 'low' });
    await chunked.send(new PutObjectCommand({
      Bucket: BUCKET, Key: 'chunked', Body: Readable.from([data.subarray(0, 100_000), data.subarray(100_000)]), ContentLength: data.length,
    }));
    chunked.destroy();
    expect(seen[0]).toMatch(/^STREAMING-/);
    expect(seen[1]).toContain('aws-chunked');
    const head = await s3.send(new HeadObjectCommand({ Bucket: BUCKET, Key: 'chunked' }));
    expect(head.ContentLength).toBe(data.length);
    expect(head.ContentEncoding).toBeUndefined();
    expect((await body('chunked')).equals(data)).toBe(true);
  });

  it('leaves nothing behind when a client aborts a PUT mid-body', async () => {
    const url = await getSignedUrl(s3, new PutObjectCommand({ Bucket: BUCKET, Key: 'aborted-put' }), { expiresIn: 60 });
    const req = http.request(url, { method: 'PUT', headers: { 'Content-Length': String(8 << 20) } });
    req.on('error', () => undefined);
    await new Promise<void>((resolve) => req.write(randomBytes(2 << 20), () => resolve()));
    // The body is arriving: its temp file exists.
    for (let i = 0; i < 500 && (await readdir(join(dataDir, '.incoming'))).length === 0; i++) {
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
    expect((await readdir(join(dataDir, '.incoming'))).length).toBeGreaterThan(0);
    req.destroy();
    let left: string[] = ['?'];
    for (let i = 0; i < 500 && left.length > 0; i++) {
      await new Promise((resolve) => setTimeout(resolve, 10));
      left = await readdir(join(dataDir, '.incoming'));
    }
    expect(left).toEqual([]);
    expect((await s3Error(s3.send(new HeadObjectCommand({ Bucket: BUCKET, Key: 'aborted-put' })))).status).toBe(404);
  });

  it('copies objects, keeping or replacing metadata', async () => {
    const data = randomBytes(5000);
    await s3.send(new PutObjectCommand({ Bucket: BUCKET, Key: 'src/one', Body: data, ContentType: 'image/png', Metadata: { a: '1' } }));
    const copied = await s3.send(new CopyObjectCommand({ Bucket: BUCKET, Key: 'dst/one', CopySource: `${BUCKET}/src/one` }));
    expect(copied.CopyObjectResult?.ETag).toBe(`"${createHash('md5').update(data).digest('hex')}"`);
    const got = await s3.send(new GetObjectCommand({ Bucket: BUCKET, Key: 'dst/one' }));
    expect(got.ContentType).toBe('image/png');
    expect(got.Metadata).toEqual({ a: '1' });
    expect(Buffer.from(await got.Body!.transformToByteArray()).equals(data)).toBe(true);

    await s3.send(new CopyObjectCommand({
      Bucket: BUCKET, Key: 'dst/two', CopySource: `${BUCKET}/src/one`, MetadataDirective: 'REPLACE', ContentType: 'text/csv', Metadata: { b: '2' },
    }));
    const replaced = await s3.send(new HeadObjectCommand({ Bucket: BUCKET, Key: 'dst/two' }));
    expect(replaced.ContentType).toBe('text/csv');
    expect(replaced.Metadata).toEqual({ b: '2' });

    // The copy is independent of its source.
    await s3.send(new DeleteObjectCommand({ Bucket: BUCKET, Key: 'src/one' }));
    expect((await body('dst/one')).equals(data)).toBe(true);
    expect((await s3Error(s3.send(new CopyObjectCommand({ Bucket: BUCKET, Key: 'x', CopySource: `${BUCKET}/src/one` })))).name)
      .toBe('NoSuchKey');
  });

  it('keeps keys with spaces, unicode and ../ inside dataDir and returns them intact', async () => {
    const keys = ['../../escape-me.txt', '..', 'a b/c d.txt', 'ünï/日本語/🚀 rocket.bin', 'x/./y/../z', 'a//b', 'pct%2Fsign+plus', '/leading'];
    const before = await readdir(root);
    for (const [i, key] of keys.entries()) {
      await s3.send(new PutObjectCommand({ Bucket: BUCKET, Key: key, Body: `value-${i}` }));
    }
    for (const [i, key] of keys.entries()) expect((await body(key)).toString()).toBe(`value-${i}`);
    // Nothing appeared next to dataDir, and no key became a file or directory name inside it.
    expect(await readdir(root)).toEqual(before);
    const names = await walk(dataDir);
    for (const fragment of ['escape-me', 'rocket', '日本語', 'c d.txt']) {
      expect(names.some((n) => n.includes(fragment))).toBe(false);
    }
    const listed = await s3.send(new ListObjectsV2Command({ Bucket: BUCKET }));
    const listedKeys = listed.Contents!.map((c) => c.Key);
    for (const key of keys) expect(listedKeys).toContain(key);
  });

  it('lists with prefix, delimiter, start-after and pagination', async () => {
    const keys = ['list/a.txt', 'list/b/1.txt', 'list/b/2.txt', 'list/c.txt', 'list/d/1.txt', 'list/e.txt', 'other.txt'];
    for (const key of keys) await s3.send(new PutObjectCommand({ Bucket: BUCKET, Key: key, Body: key }));

    const flat = await s3.send(new ListObjectsV2Command({ Bucket: BUCKET, Prefix: 'list/' }));
    expect(flat.Contents!.map((c) => c.Key)).toEqual(keys.slice(0, 6));
    expect(flat.KeyCount).toBe(6);
    expect(flat.Contents![0]!.Size).toBe('list/a.txt'.length);

    const grouped = await s3.send(new ListObjectsV2Command({ Bucket: BUCKET, Prefix: 'list/', Delimiter: '/' }));
    expect(grouped.Contents!.map((c) => c.Key)).toEqual(['list/a.txt', 'list/c.txt', 'list/e.txt']);
    expect(grouped.CommonPrefixes!.map((p) => p.Prefix)).toEqual(['list/b/', 'list/d/']);
    expect(grouped.KeyCount).toBe(5);

    // Pages of two entries (keys and common prefixes both count), in order, nothing lost or repeated.
    const seen: string[] = [];
    let token: string | undefined;
    let pages = 0;
    do {
      const page: ListObjectsV2CommandOutput = await s3.send(new ListObjectsV2Command({
        Bucket: BUCKET, Prefix: 'list/', Delimiter: '/', MaxKeys: 2, ContinuationToken: token,
      }));
      pages++;
      expect(page.KeyCount).toBeLessThanOrEqual(2);
      seen.push(...(page.Contents ?? []).map((c) => c.Key!), ...(page.CommonPrefixes ?? []).map((p) => p.Prefix!));
      expect(page.IsTruncated).toBe(page.NextContinuationToken !== undefined);
      token = page.NextContinuationToken;
    } while (token);
    expect(pages).toBe(3);
    expect(seen.sort()).toEqual(['list/a.txt', 'list/b/', 'list/c.txt', 'list/d/', 'list/e.txt']);

    const after = await s3.send(new ListObjectsV2Command({ Bucket: BUCKET, Prefix: 'list/', StartAfter: 'list/c.txt' }));
    expect(after.Contents!.map((c) => c.Key)).toEqual(['list/d/1.txt', 'list/e.txt']);
  });

  it('deletes many objects at once', async () => {
    for (const key of ['bulk/1', 'bulk/2']) await s3.send(new PutObjectCommand({ Bucket: BUCKET, Key: key, Body: key }));
    const out = await s3.send(new DeleteObjectsCommand({ Bucket: BUCKET, Delete: { Objects: [{ Key: 'bulk/1' }, { Key: 'bulk/2' }] } }));
    expect(out.Deleted!.map((d) => d.Key).sort()).toEqual(['bulk/1', 'bulk/2']);
    const left = await s3.send(new ListObjectsV2Command({ Bucket: BUCKET, Prefix: 'bulk/' }));
    expect(left.KeyCount).toBe(0);
  });

  it('validates bucket names and reports missing buckets', async () => {
    expect((await s3Error(s3.send(new CreateBucketCommand({ Bucket: 'Bad_Bucket' })))).status).toBe(400);
    expect(await s3Error(s3.send(new GetObjectCommand({ Bucket: 'no-such-bucket', Key: 'k' }))))
      .toEqual({ name: 'NoSuchBucket', status: 404 });
    await s3.send(new CreateBucketCommand({ Bucket: 'second-bucket' }));
    const head = await s3.send(new HeadBucketCommand({ Bucket: 'second-bucket' }));
    expect(head.$metadata.httpStatusCode).toBe(200);
  });

  it('answers NotImplemented for unsupported sub-resources', async () => {
    expect(await s3Error(s3.send(new GetObjectTaggingCommand({ Bucket: BUCKET, Key: 'ranged' }))))
      .toEqual({ name: 'NotImplemented', status: 501 });
  });
});

describe('server lifecycle', () => {
  it('close() resolves with keep-alive sockets open and stops accepting', async () => {
    const other = await startObjectStore({
      host: '127.0.0.1', port: 0, dataDir: join(root, 'lifecycle'), accessKey: 'AK', secretKey: 'lifecycle-secret-0123',
    });
    const agent = new http.Agent({ keepAlive: true });
    const status = await new Promise<number>((resolve, reject) => {
      http.get(`${other.url}/`, { agent }, (res) => {
        res.resume();
        res.on('end', () => resolve(res.statusCode ?? 0));
      }).on('error', reject);
    });
    expect(status).toBe(403); // unsigned, but the socket is now idle in the agent's pool
    await other.close();
    await expect(fetch(`${other.url}/`)).rejects.toThrow();
    agent.destroy();
  });
});
