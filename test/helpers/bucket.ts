// A customer's bucket for cloud connection tests: a separately started embedded
// S3 store on 127.0.0.1 with credentials of its own (not the service's), and an
// S3 client to look into it. With `proxied`, connections reach it through the
// forwarding proxy of s3Proxy.ts, which can hold requests (to catch a transfer
// mid-way) and records what was sent.
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { GetObjectCommand, ListObjectsV2Command, PutObjectCommand, S3Client } from '@aws-sdk/client-s3';
import { startObjectStore, type RunningObjectStore } from '../../src/objectstore/index.js';
import { startS3Proxy, type S3Proxy } from './s3Proxy.js';

export interface CustomerBucket {
  /** What a connection's endpoint is: the store, or the proxy in front of it. */
  url: string;
  bucket: string;
  accessKey: string;
  secretKey: string;
  store: RunningObjectStore;
  proxy?: S3Proxy;
  client: S3Client;
  /** The authorization of a generic_s3 connection to this bucket. */
  authorization(extra?: Record<string, unknown>): Record<string, unknown>;
  keys(prefix?: string): Promise<string[]>;
  get(key: string): Promise<Buffer>;
  put(key: string, data: Buffer): Promise<void>;
  close(): Promise<void>;
}

let seq = 0;

export async function startCustomerBucket(opts: { bucket?: string; proxied?: boolean } = {}): Promise<CustomerBucket> {
  const bucket = opts.bucket ?? 'customer-bucket';
  const dir = await fs.mkdtemp(path.join(os.tmpdir(), 'ferry-customer-'));
  const accessKey = `CUSTOMER${String(++seq).padStart(4, '0')}KEY`;
  const secretKey = `customer-secret-${seq}-not-the-services-own`;
  const store = await startObjectStore({ host: '127.0.0.1', port: 0, dataDir: dir, accessKey, secretKey, buckets: [bucket] });
  const proxy = opts.proxied ? await startS3Proxy(store.url) : undefined;
  const client = new S3Client({ endpoint: store.url, region: 'us-east-1', forcePathStyle: true, credentials: { accessKeyId: accessKey, secretAccessKey: secretKey } });
  const url = proxy?.url ?? store.url;
  return {
    url,
    bucket,
    accessKey,
    secretKey,
    store,
    ...(proxy ? { proxy } : {}),
    client,
    authorization: (extra = {}) => ({ client_id: accessKey, client_secret: secretKey, destination: bucket, endpoint: url, region: 'default', ...extra }),
    async keys(prefix) {
      const out: string[] = [];
      let token: string | undefined;
      for (let page = 0; page < 100; page++) {
        const r = await client.send(new ListObjectsV2Command({ Bucket: bucket, Prefix: prefix, ContinuationToken: token }));
        for (const o of r.Contents ?? []) out.push(o.Key!);
        if (!r.IsTruncated) break;
        token = r.NextContinuationToken;
      }
      return out.sort();
    },
    async get(key) {
      const r = await client.send(new GetObjectCommand({ Bucket: bucket, Key: key }));
      return Buffer.from(await r.Body!.transformToByteArray());
    },
    async put(key, data) {
      await client.send(new PutObjectCommand({ Bucket: bucket, Key: key, Body: data }));
    },
    async close() {
      client.destroy();
      await proxy?.close();
      await store.close();
      await fs.rm(dir, { recursive: true, force: true });
    },
  };
}
