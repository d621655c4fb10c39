// A hosted service whose storage is a separately started embedded store behind a
// test proxy (given as a factory), so every pre-signed request goes through it.
// The proxy passes the Host header on unchanged, so SigV4 signatures still verify.
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { startObjectStore, type RunningObjectStore } from '../../src/objectstore/index.js';
import { startTestService, type TestService } from './hosted.js';

export interface Proxied<P> {
  svc: TestService;
  proxy: P;
  store: RunningObjectStore;
  /** The store's credentials and bucket, for tests that put objects themselves. */
  creds: { accessKey: string; secretKey: string };
  bucket: string;
  close(): Promise<void>;
}

export async function startServiceBehindProxy<P extends { url: string; close(): Promise<void> }>(
  startProxy: (storeUrl: string) => Promise<P>,
  /** More flags of the service, such as a short blueprint-ttl. */
  flags: Record<string, string> = {},
): Promise<Proxied<P>> {
  const creds = { accessKey: 'PROXYTESTKEY0001', secretKey: 'proxy-test-secret-key' };
  const bucket = 'ferry-test';
  const storeDir = await fs.mkdtemp(path.join(os.tmpdir(), 'ferry-proxied-store-'));
  const store = await startObjectStore({ host: '127.0.0.1', port: 0, dataDir: storeDir, ...creds, buckets: [bucket] });
  const proxy = await startProxy(store.url);
  const svc = await startTestService({
    's3-endpoint': proxy.url,
    's3-bucket': bucket,
    's3-region': 'us-east-1',
    's3-access-key': creds.accessKey,
    's3-secret-key': creds.secretKey,
    's3-path-style': true,
    ...flags,
  });
  return {
    svc,
    proxy,
    store,
    creds,
    bucket,
    async close() {
      await svc.close();
      await proxy.close();
      await store.close();
      await fs.rm(storeDir, { recursive: true, force: true });
    },
  };
}
