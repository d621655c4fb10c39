// A body's MD5 is computed by workers: from the buffers a body of 1 MiB or more
// is written from, past the page cache (objectstore/directSink.ts), or by
// re-reading the written file (FERRY_STORE_DIRECT_IO=0, and file systems that
// refuse direct writes). With the md5lanes addon one worker hashes the bodies
// together, a lane each; without it (FERRY_MD5_LANES=0) node:crypto workers hash
// one each. The stores here run on their own thread, as `ferry serve` runs them,
// and must answer the same ETags and keep the same bytes.
// (Hashing in lanes on the store's thread from the received chunks, without the
// re-read, was tried: the service then spent 1.84-2.10 CPU-s per GiB uploaded
// against 1.44-1.57, in alternating runs.)
import { CreateMultipartUploadCommand, GetObjectCommand, PutObjectCommand, S3Client, UploadPartCommand } from '@aws-sdk/client-s3';
import { createHash, randomBytes } from 'node:crypto';
import { mkdtemp, readdir, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, expect, test } from 'vitest';
import { startObjectStoreThread } from '../../../src/objectstore/thread.js';
import { cachedBytes, watchEvictions } from '../../helpers/pageCache.js';

const creds = { accessKeyId: 'FERRYMD5PATHS0000001', secretAccessKey: 'md5-paths-secret-0123456789abcdef' };
const dirs: string[] = [];
afterAll(async () => {
  for (const d of dirs) await rm(d, { recursive: true, force: true });
});

const md5 = (b: Buffer) => createHash('md5').update(b).digest('hex');

type Env = Partial<Record<'FERRY_MD5_LANES' | 'FERRY_STORE_DIRECT_IO', string>>;

/** Bytes of the store's files of at least `size` bytes that the page cache holds; or why that cannot be seen. */
async function cachedOfLarge(dir: string, size: number): Promise<number | string> {
  let total = 0;
  for (const e of await readdir(dir, { recursive: true, withFileTypes: true })) {
    const file = join(e.parentPath, e.name);
    if (!e.isFile() || (await stat(file)).size < size) continue;
    const c = cachedBytes(file);
    if (typeof c === 'string') return c;
    total += c;
  }
  return total;
}

/**
 * The ETags of the bodies put as objects and as parts, each object read back and compared; what
 * the page cache held of the largest before, and whether the kernel evicted pages by itself meanwhile.
 */
async function etagsWith(env: Env, bodies: Buffer[]): Promise<{ etags: string[]; cachedLargest: number | string; evicted: boolean }> {
  const dataDir = await mkdtemp(join(tmpdir(), 'ferry-md5paths-'));
  dirs.push(dataDir);
  const before = { ...process.env };
  Object.assign(process.env, env);
  // The store's thread takes the environment as it is now.
  const store = await startObjectStoreThread({ host: '127.0.0.1', port: 0, dataDir, accessKey: creds.accessKeyId, secretKey: creds.secretAccessKey, buckets: ['bkt'], logLevel: 'silent' });
  for (const k of Object.keys(env)) if (before[k] === undefined) delete process.env[k];
  else process.env[k] = before[k];
  const s3 = new S3Client({ endpoint: store.url, region: 'us-east-1', forcePathStyle: true, credentials: creds, requestChecksumCalculation: 'WHEN_REQUIRED' });
  try {
    const evicted = watchEvictions();
    // PutObjects and the parts of one multipart upload, all at once, as clients send them.
    const puts = bodies.map((Body, i) => s3.send(new PutObjectCommand({ Bucket: 'bkt', Key: `put-${i}`, Body })).then((r) => r.ETag!));
    const { UploadId } = await s3.send(new CreateMultipartUploadCommand({ Bucket: 'bkt', Key: 'multi' }));
    const parts = bodies.map((Body, i) => s3.send(new UploadPartCommand({ Bucket: 'bkt', Key: 'multi', UploadId, PartNumber: i + 1, Body })).then((r) => r.ETag!));
    const etags = [...(await Promise.all(puts)), ...(await Promise.all(parts))];
    // Before anything reads them back: the largest body as an object and as a part.
    const largest = Math.max(...bodies.map((b) => b.length));
    const cachedLargest = await cachedOfLarge(dataDir, largest);
    const evictedMeanwhile = evicted();
    for (const [i, body] of bodies.entries()) {
      const got = await s3.send(new GetObjectCommand({ Bucket: 'bkt', Key: `put-${i}` }));
      expect(Buffer.from(await got.Body!.transformToByteArray()).equals(body)).toBe(true);
    }
    return { etags, cachedLargest, evicted: evictedMeanwhile };
  } finally {
    s3.destroy();
    await store.close();
  }
}

test.for<[string, Env]>([
  ['past the page cache, hashed in lanes', {}],
  ['past the page cache, hashed by node:crypto workers', { FERRY_MD5_LANES: '0' }],
  ['through the page cache, hashed in lanes', { FERRY_STORE_DIRECT_IO: '0' }],
  ['through the page cache, hashed by node:crypto workers', { FERRY_MD5_LANES: '0', FERRY_STORE_DIRECT_IO: '0' }],
])('bodies written %s get their MD5 as ETag and keep their bytes', async ([, env], { skip }) => {
  // Sizes around the 1 MiB buffers, the 4 KiB blocks and the 64-byte MD5 blocks, and one small body.
  const bodies = [9 << 20, (3 << 20) + 7, (1 << 20) + 63, 1 << 20, 1000].map((n) => randomBytes(n));
  const want = [...bodies, ...bodies].map((b) => `"${md5(b)}"`);
  const got = await etagsWith(env, bodies);
  expect(got.etags).toEqual(want);
  if (typeof got.cachedLargest === 'string') skip(`ETags and bytes were checked; ${got.cachedLargest}`);
  // Two files of 9 MiB: past the page cache at most their last blocks stay; through it, all of
  // them, unless the kernel evicted pages by itself meanwhile.
  if (env.FERRY_STORE_DIRECT_IO !== '0') expect(got.cachedLargest).toBeLessThan(1 << 20);
  else if (got.evicted) skip('ETags and bytes were checked; the kernel evicted pages meanwhile, so whether the bodies stayed cached was not');
  else expect(got.cachedLargest).toBe(2 * (9 << 20));
});
