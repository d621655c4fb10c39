// An external bucket's CORS for the Portal page, which uploads from the browser
// straight to the store: `ferry serve` checks it at start and says what is
// missing (a warning), `ferry admin bucket-cors` applies the rule and keeps the
// bucket's other rules. Against Ceph's RADOS Gateway in that pass; on an ordinary
// run against a second embedded store, which has no GetBucketCors and is said so.
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { GetBucketCorsCommand, PutBucketCorsCommand } from '@aws-sdk/client-s3';
import { afterAll, beforeAll, describe, expect, test, vi } from 'vitest';
import { ferry, jsonLine, startFerry, type Running } from '../../helpers/cli.js';
import { rgwUnderTest, startExternalBucket, type ExternalBucket } from '../../helpers/externalStore.js';
import { freePort } from '../../helpers/ports.js';
import { onlyIf } from '../../helpers/skip.js';

vi.setConfig({ testTimeout: 180_000, hookTimeout: 120_000 });

let root: string;
const running: Running[] = [];
const stores: ExternalBucket[] = [];
beforeAll(async () => {
  root = await fs.mkdtemp(path.join(os.tmpdir(), 'ferry-bucket-cors-'));
});
afterAll(async () => {
  await Promise.all(running.map((r) => r.stop('SIGKILL')));
  await Promise.all(stores.map((s) => s.close()));
  await fs.rm(root, { recursive: true, force: true });
});

const s3Flags = (s: ExternalBucket, keys: { accessKey: string; secretKey: string } = s) =>
  ['--s3-endpoint', s.url, '--s3-bucket', s.bucket, '--s3-access-key', keys.accessKey, '--s3-secret-key', keys.secretKey];

let seq = 0;
/** Starts `ferry serve` on the bucket until its ready line; answers the log lines about the bucket's CORS. */
async function serveOnce(store: ExternalBucket, port: number): Promise<Record<string, unknown>[]> {
  const r = startFerry(['serve', '--listen', `127.0.0.1:${port}`, '--data-dir', path.join(root, `svc-${++seq}`), '--portal-domain', 'portals.test', ...s3Flags(store)]);
  running.push(r);
  await r.waitFor((l) => jsonLine(l)?.msg === 'ferry hosted service ready', 'ready line');
  await r.stop();
  return r.lines.map(jsonLine).filter((l): l is Record<string, unknown> => !!l && l.bucket === store.bucket);
}

const preflight = (store: ExternalBucket, origin: string) =>
  fetch(`${store.url}/${store.bucket}/packages/x/file?partNumber=1&uploadId=x`, {
    method: 'OPTIONS',
    headers: { origin, 'access-control-request-method': 'PUT', 'access-control-request-headers': 'content-type' },
  });

describe('on Ceph RADOS Gateway', onlyIf(rgwUnderTest(), 'needs the RADOS Gateway pass (FERRY_TEST_S3=rgw: a Ceph cluster)'), () => {
  test('serve names what is missing; bucket-cors adds the rule and keeps the others; then serve is content and browsers may upload', async () => {
    const store = await startExternalBucket({ bucket: 'cors' });
    stores.push(store);
    const port = await freePort();
    const own = `http://127.0.0.1:${port}`;

    const [before] = await serveOnce(store, port);
    expect(before).toMatchObject({ level: 40 });
    expect(before!.msg).toContain(`bucket ${store.bucket} has no CORS rules the Portal page needs`);
    expect(before!.msg).toContain(`${own} cannot PUT, POST, GET, HEAD; http://*.portals.test cannot PUT, POST, GET, HEAD`);
    expect(before!.msg).toContain('ferry admin bucket-cors');
    expect((await preflight(store, own)).status).toBe(403);

    // The bucket's owner had a rule of their own: it stays, after Ferry's.
    const theirs = { ID: 'theirs', AllowedOrigins: ['https://intranet.example'], AllowedMethods: ['GET'], AllowedHeaders: ['*'] };
    await store.client.send(new PutBucketCorsCommand({ Bucket: store.bucket, CORSConfiguration: { CORSRules: [theirs] } }));
    const [partial] = await serveOnce(store, port);
    expect(partial!.msg).toContain(`lacks CORS the Portal page needs to upload from the browser: ${own} cannot PUT`);

    const applied = await ferry(['admin', 'bucket-cors', '--listen', `127.0.0.1:${port}`, '--portal-domain', 'portals.test', ...s3Flags(store)]);
    expect(applied.code, applied.stderr).toBe(0);
    expect(applied.stdout).toContain(`bucket ${store.bucket}: CORS rule "ferry-browser-uploads" lets ${own}, http://*.portals.test PUT, POST, GET, HEAD`);
    expect(applied.stdout).toContain("the bucket's 1 other rule kept");

    const rules = (await store.client.send(new GetBucketCorsCommand({ Bucket: store.bucket }))).CORSRules!;
    expect(rules).toHaveLength(2);
    expect(rules[0]).toMatchObject({ ID: 'ferry-browser-uploads', AllowedHeaders: ['*'], ExposeHeaders: ['ETag'] });
    // The gateway keeps a rule's origins as a set, in its own order.
    expect([...rules[0]!.AllowedOrigins!].sort()).toEqual(['http://*.portals.test', own]);
    expect([...rules[0]!.AllowedMethods!].sort()).toEqual(['GET', 'HEAD', 'POST', 'PUT']);
    expect(rules[1]).toMatchObject({ ID: 'theirs', AllowedOrigins: ['https://intranet.example'], AllowedMethods: ['GET'] });

    for (const origin of [own, 'http://deliveries.portals.test']) {
      const res = await preflight(store, origin);
      expect(res.status, origin).toBe(200);
      expect(res.headers.get('access-control-allow-origin'), origin).toBe(origin);
      expect(res.headers.get('access-control-allow-methods'), origin).toContain('PUT');
    }
    expect((await preflight(store, 'https://evil.example')).status).toBe(403);

    const [after] = await serveOnce(store, port);
    expect(after).toMatchObject({ level: 30, msg: `bucket ${store.bucket}: its CORS lets the Portal page upload from ${own}, http://*.portals.test` });

    const again = await ferry(['admin', 'bucket-cors', '--json', '--listen', `127.0.0.1:${port}`, '--portal-domain', 'portals.test', ...s3Flags(store)]);
    expect(again.code, again.stderr).toBe(0);
    expect(JSON.parse(again.stdout)).toMatchObject({ bucket: store.bucket, result: 'unchanged', origins: [own, 'http://*.portals.test'] });
  });

  test('bucket-cors with credentials that may not change the bucket says so and exits 1', async () => {
    const store = await startExternalBucket({ bucket: 'cors-denied' });
    stores.push(store);
    const r = await ferry(['admin', 'bucket-cors', '--public-url', 'https://ferry.example.com', ...s3Flags(store, rgwUnderTest()!.other)]);
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(new RegExp(`bucket ${store.bucket}: the store refused (Get|Put)BucketCors \\(AccessDenied\\): these credentials may not (read|change) the bucket's CORS`));
    await expect(store.client.send(new GetBucketCorsCommand({ Bucket: store.bucket }))).rejects.toMatchObject({ name: 'NoSuchCORSConfiguration' });
  });
});

describe('on a store without GetBucketCors', onlyIf(!rgwUnderTest(), 'the embedded store as the external one: not in the RADOS Gateway pass'), () => {
  test('serve says it cannot check and what the page needs; bucket-cors says the store does not implement it', async () => {
    const store = await startExternalBucket({ bucket: 'no-cors-api' });
    stores.push(store);
    const port = await freePort();
    const [line] = await serveOnce(store, port);
    expect(line).toMatchObject({ level: 40 });
    expect(line!.msg).toBe(
      `bucket ${store.bucket}: the store does not answer GetBucketCors (NotImplemented), so its CORS is not checked; the Portal page uploads from the browser: http://127.0.0.1:${port}, http://*.portals.test need PUT, POST, GET, HEAD with any header and ETag exposed`,
    );
    const r = await ferry(['admin', 'bucket-cors', '--listen', `127.0.0.1:${port}`, ...s3Flags(store)]);
    expect(r.code).toBe(1);
    expect(r.stderr).toContain(`bucket ${store.bucket}: the store does not implement GetBucketCors (NotImplemented)`);
    const usage = await ferry(['admin', 'bucket-cors']);
    expect(usage.code).toBe(2);
    expect(usage.stderr).toContain('bucket-cors is for an external store');
  });
});
