// The S3 store the external-S3 tests point the service (and cloud connections)
// at: by default a separately started embedded store with credentials of its
// own; in the RADOS Gateway pass (FERRY_TEST_S3=rgw, test/helpers/cephGlobal.ts)
// a new bucket on Ceph's gateway, so a signing or XML detail that only Ferry's
// own store accepts shows up.
import { randomBytes } from 'node:crypto';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { CreateBucketCommand, S3Client } from '@aws-sdk/client-s3';
import { startObjectStore, type RunningObjectStore } from '../../src/objectstore/index.js';

export interface ExternalBucket {
  kind: 'embedded' | 'rgw';
  /** The store's endpoint. */
  url: string;
  bucket: string;
  accessKey: string;
  secretKey: string;
  /** The embedded store, when that is what runs. */
  store?: RunningObjectStore;
  /** An S3 client of the bucket's owner; destroyed by close(). */
  client: S3Client;
  /** The service's flags that point it at this bucket. */
  serviceFlags(): Record<string, string | boolean>;
  close(): Promise<void>;
}

/** The gateway of this run's RADOS Gateway pass, or undefined on an ordinary run. */
export function rgwUnderTest(): { url: string; accessKey: string; secretKey: string; other: { accessKey: string; secretKey: string } } | undefined {
  if (process.env.FERRY_TEST_S3 !== 'rgw') return undefined;
  const url = process.env.FERRY_TEST_RGW_URL;
  const [keys, other] = [process.env.FERRY_TEST_RGW_KEYS, process.env.FERRY_TEST_RGW_OTHER_KEYS];
  if (!url || !keys || !other) throw new Error('FERRY_TEST_S3=rgw but no gateway was started (test/helpers/cephGlobal.ts sets FERRY_TEST_RGW_URL)');
  const split = (k: string) => ({ accessKey: k.slice(0, k.indexOf(':')), secretKey: k.slice(k.indexOf(':') + 1) });
  return { url, ...split(keys), other: split(other) };
}

export const EMBEDDED_STORE_ONLY = "the embedded store's own behaviour: not run in the RADOS Gateway pass";

const clientOf = (url: string, accessKey: string, secretKey: string) =>
  new S3Client({ endpoint: url, region: 'us-east-1', forcePathStyle: true, credentials: { accessKeyId: accessKey, secretAccessKey: secretKey } });

/**
 * A bucket named `bucket` (on the gateway: that name plus a random suffix, as
 * every test shares it) with credentials that are not the service's own.
 */
export async function startExternalBucket(opts: { bucket?: string; accessKey?: string; secretKey?: string } = {}): Promise<ExternalBucket> {
  const base = opts.bucket ?? 'customer-bucket';
  const flags = (e: { url: string; bucket: string; accessKey: string; secretKey: string }) => () => ({
    's3-endpoint': e.url,
    's3-bucket': e.bucket,
    's3-region': 'us-east-1',
    's3-access-key': e.accessKey,
    's3-secret-key': e.secretKey,
    's3-path-style': true,
  });
  const rgw = rgwUnderTest();
  if (rgw) {
    const bucket = `${base}-${randomBytes(4).toString('hex')}`;
    const client = clientOf(rgw.url, rgw.accessKey, rgw.secretKey);
    await client.send(new CreateBucketCommand({ Bucket: bucket }));
    const e = { kind: 'rgw' as const, url: rgw.url, accessKey: rgw.accessKey, secretKey: rgw.secretKey, bucket, client };
    // The cluster is thrown away whole at the end of the run: the bucket stays until then.
    return { ...e, serviceFlags: flags(e), close: async () => client.destroy() };
  }
  const accessKey = opts.accessKey ?? 'CUSTOMERKEY0001';
  const secretKey = opts.secretKey ?? 'customer-secret-not-the-services-own';
  const dir = await fs.mkdtemp(path.join(os.tmpdir(), 'ferry-external-s3-'));
  const store = await startObjectStore({ host: '127.0.0.1', port: 0, dataDir: dir, accessKey, secretKey, buckets: [base] });
  const client = clientOf(store.url, accessKey, secretKey);
  const e = { kind: 'embedded' as const, url: store.url, bucket: base, accessKey, secretKey, store, client };
  return {
    ...e,
    serviceFlags: flags(e),
    async close() {
      client.destroy();
      await store.close();
      await fs.rm(dir, { recursive: true, force: true });
    },
  };
}
