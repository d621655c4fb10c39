// The service's own pre-signer (storage/presign.ts) against the embedded store,
// which checks every signature: keys that need encoding, sub-resources in the
// query, response overrides, and the address styles the SDK resolves.
import { S3Client } from '@aws-sdk/client-s3';
import { randomBytes } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { S3RequestPresigner } from '@aws-sdk/s3-request-presigner';
import { createPresigner, type Presign, type PresignMethod } from '../../../src/hosted/storage/presign.js';
import { startObjectStore, type RunningObjectStore } from '../../../src/objectstore/index.js';

const BUCKET = 'presign';
const creds = { accessKeyId: 'FERRYPRESIGNKEY00001', secretAccessKey: 'presign-secret-0123456789abcdef' };
let dir: string;
let store: RunningObjectStore;
let presign: Presign;

const client = (opts: { endpoint?: string; pathStyle: boolean; region: string; credentials?: typeof creds & { sessionToken?: string } }) =>
  new S3Client({ endpoint: opts.endpoint, region: opts.region, forcePathStyle: opts.pathStyle, credentials: opts.credentials ?? creds, requestChecksumCalculation: 'WHEN_REQUIRED' });

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'ferry-presign-'));
  store = await startObjectStore({ host: '127.0.0.1', port: 0, dataDir: dir, accessKey: creds.accessKeyId, secretKey: creds.secretAccessKey, buckets: [BUCKET] });
  presign = await createPresigner(client({ endpoint: store.url, pathStyle: true, region: 'us-east-1' }), BUCKET, 'us-east-1');
});

afterAll(async () => {
  await store?.close();
  await rm(dir, { recursive: true, force: true });
});

describe('pre-signed URLs made without the SDK per call', () => {
  it('put and get a key with spaces, unicode and reserved characters, with a download name override', async () => {
    const key = 'packages/a b/ü+&=(1)!*.txt';
    const body = randomBytes(1000);
    const put = await fetch(await presign('PUT', key, {}, 300), { method: 'PUT', body });
    expect(put.status).toBe(200);
    const disposition = `attachment; filename*=UTF-8''${encodeURIComponent('résumé (final).txt')}`;
    const got = await fetch(await presign('GET', key, { 'response-content-disposition': disposition }, 300));
    expect(got.status).toBe(200);
    expect(got.headers.get('content-disposition')).toBe(disposition);
    expect(Buffer.from(await got.arrayBuffer()).equals(body)).toBe(true);
  });

  it('starts a multipart upload and sends a part through sub-resource URLs', async () => {
    const key = 'packages/p/multi';
    const started = await fetch(await presign('POST', key, { uploads: '' }, 300), { method: 'POST' });
    expect(started.status).toBe(200);
    const uploadId = /<UploadId>([^<]+)<\/UploadId>/.exec(await started.text())![1]!;
    const part = await fetch(await presign('PUT', key, { partNumber: '1', uploadId }, 300), { method: 'PUT', body: randomBytes(100) });
    expect(part.status).toBe(200);
    expect(part.headers.get('etag')).toMatch(/^"[0-9a-f]{32}"$/);
  });

  it('binds a signed Content-Length: the store takes a body of that length only', async () => {
    const key = 'packages/p/bound';
    const url = await presign('PUT', key, {}, 300, { 'content-length': '1000' });
    expect(new URL(url).searchParams.get('X-Amz-SignedHeaders')).toBe('content-length;host');
    for (const size of [1001, 999, 20 * 1024 * 1024]) {
      const res = await fetch(url, { method: 'PUT', body: randomBytes(size) });
      expect(res.status, `${size} bytes`).toBe(403);
      expect(await res.text()).toContain('SignatureDoesNotMatch');
    }
    expect((await fetch(url, { method: 'PUT', body: randomBytes(1000) })).status).toBe(200);
  });

  it('signs a bound Content-Length exactly as the AWS SDK presigner does', async () => {
    const at = new Date('2026-11-22T10:11:12Z');
    const c = client({ endpoint: 'http://127.0.0.1:9000', pathStyle: true, region: 'eu-central-1' });
    const ours = await createPresigner(c, 'bkt', 'eu-central-1', () => at);
    const sdk = new S3RequestPresigner({ ...c.config, region: 'eu-central-1', signingName: 's3' });
    const query = { partNumber: '3', uploadId: 'u/1' };
    const url = new URL(await ours('PUT', 'packages/p/f', query, 900, { 'content-length': '5242880' }));
    const signed = await sdk.presign(
      { method: 'PUT', protocol: 'http:', hostname: '127.0.0.1', port: 9000, path: url.pathname, query: { ...query }, headers: { host: '127.0.0.1:9000', 'content-length': '5242880' } },
      { expiresIn: 900, signingDate: at, signableHeaders: new Set(['content-length']) },
    );
    expect(Object.fromEntries(url.searchParams)).toEqual(signed.query);
  });

  it('is refused when the URL is altered after signing', async () => {
    const url = await presign('PUT', 'packages/p/tampered', { partNumber: '1', uploadId: 'x' }, 300);
    const res = await fetch(url.replace('partNumber=1', 'partNumber=2'), { method: 'PUT', body: 'x' });
    expect(res.status).toBe(403);
  });

  it('keeps the address style the SDK resolves: virtual-hosted for AWS, path style when forced', async () => {
    const aws = await createPresigner(client({ pathStyle: false, region: 'eu-west-1' }), 'my-bucket', 'eu-west-1');
    const url = new URL(await aws('GET', 'a/b c', {}, 60));
    expect(url.host).toBe('my-bucket.s3.eu-west-1.amazonaws.com');
    expect(url.pathname).toBe('/a/b%20c');
    expect(url.searchParams.get('X-Amz-Credential')).toMatch(/\/eu-west-1\/s3\/aws4_request$/);
    const local = new URL(await presign('GET', 'a/b', {}, 60));
    expect(local.pathname).toBe(`/${BUCKET}/a/b`);
    expect(local.searchParams.get('X-Amz-Expires')).toBe('60');
  });

  it('signs exactly as the AWS SDK presigner does, with and without a session token', async () => {
    const at = new Date('2026-11-22T10:11:12Z');
    const cases: [PresignMethod, string, Record<string, string>][] = [
      ['PUT', 'packages/a b/ü+&=(1)!*~.txt', { partNumber: '7', uploadId: 'x y/+=' }],
      ['POST', 'packages/p/k', { uploads: '' }],
      ['GET', 'k', { 'response-content-disposition': `attachment; filename*=UTF-8''${encodeURIComponent('a b.txt')}` }],
    ];
    for (const credentials of [creds, { ...creds, sessionToken: 'session/token+=' }]) {
      const c = client({ endpoint: 'http://127.0.0.1:9000', pathStyle: true, region: 'eu-central-1', credentials });
      const ours = await createPresigner(c, 'bkt', 'eu-central-1', () => at);
      const sdk = new S3RequestPresigner({ ...c.config, region: 'eu-central-1', signingName: 's3' });
      for (const [method, key, query] of cases) {
        const url = new URL(await ours(method, key, query, 900));
        const signed = await sdk.presign(
          { method, protocol: 'http:', hostname: '127.0.0.1', port: 9000, path: url.pathname, query: { ...query }, headers: { host: '127.0.0.1:9000' } },
          { expiresIn: 900, signingDate: at },
        );
        expect(url.pathname.startsWith('/bkt/')).toBe(true);
        expect(Object.fromEntries(url.searchParams)).toEqual(signed.query);
      }
    }
  });
});
