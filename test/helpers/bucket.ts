// A customer's bucket for cloud connection tests: a separately started embedded
// S3 store on 127.0.0.1 with credentials of its own (not the service's), and an
// S3 client to look into it. With `proxied`, connections reach it through the
// forwarding proxy of s3Proxy.ts, which can hold requests (to catch a transfer
// mid-way) and records what was sent.
import { GetObjectCommand, ListObjectsV2Command, PutObjectCommand, type S3Client } from '@aws-sdk/client-s3';
import type { RunningObjectStore } from '../../src/objectstore/index.js';
import { startExternalBucket } from './externalStore.js';
import { startS3Proxy, type S3Proxy } from './s3Proxy.js';

export interface CustomerBucket {
  /** What a connection's endpoint is: the store, or the proxy in front of it. */
  url: string;
  bucket: string;
  accessKey: string;
  secretKey: string;
  /** The embedded store, when that is what runs (not in the RADOS Gateway pass). */
  store?: RunningObjectStore;
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
  const seqNo = ++seq;
  const ext = await startExternalBucket({
    bucket: opts.bucket ?? 'customer-bucket',
    accessKey: `CUSTOMER${String(seqNo).padStart(4, '0')}KEY`,
    secretKey: `customer-secret-${seqNo}-not-the-services-own`,
  });
  const { bucket, accessKey, secretKey, client } = ext;
  const proxy = opts.proxied ? await startS3Proxy(ext.url) : undefined;
  const url = proxy?.url ?? ext.url;
  return {
    url,
    bucket,
    accessKey,
    secretKey,
    ...(ext.store ? { store: ext.store } : {}),
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
      await proxy?.close();
      await ext.close();
    },
  };
}
