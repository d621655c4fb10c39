// The fault proxy itself: a client that leaves in the middle of a paced answer
// (the agent killed with SIGKILL) must end the forward quietly. It used to leave
// an "aborted" rejection behind, which vitest reports as an unhandled error.
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, expect, test } from 'vitest';
import { startS3Proxy, type S3Proxy } from '../../helpers/s3Proxy.js';
import { waitFor } from '../../helpers/downloads.js';

const BODY = Buffer.alloc(4 << 20, 7);
let upstream: http.Server;
let proxy: S3Proxy;

beforeAll(async () => {
  upstream = http.createServer((_req, res) => {
    res.writeHead(200, { 'content-length': BODY.length });
    res.end(BODY);
  });
  await new Promise<void>((r) => upstream.listen(0, '127.0.0.1', r));
  proxy = await startS3Proxy(`http://127.0.0.1:${(upstream.address() as AddressInfo).port}`);
});

afterAll(async () => {
  await proxy?.close();
  await new Promise((r) => upstream?.close(r));
});

/** GETs through the proxy and destroys the request once `leaveAfter` bytes arrived. */
function leaveEarly(leaveAfter: number): Promise<number> {
  return new Promise((resolve) => {
    let got = 0;
    const req = http.get(`${proxy.url}/bucket/key`, (res) => {
      res.on('data', (c: Buffer) => {
        got += c.length;
        if (got >= leaveAfter) req.destroy();
      });
      res.on('error', () => {});
      res.on('close', () => resolve(got));
    });
    req.on('error', () => resolve(got));
  });
}

test('a client leaving a paced answer ends the forward without an unhandled rejection', async () => {
  const rejections: unknown[] = [];
  const onRejection = (e: unknown) => rejections.push(e);
  process.on('unhandledRejection', onRejection);
  try {
    proxy.pace = 2 << 20;
    for (let i = 0; i < 3; i++) expect(await leaveEarly(256 << 10)).toBeLessThan(BODY.length);
    await waitFor('the proxy to drop the answers', () => (proxy.active() === 0 ? true : undefined));
    // The paced loop wakes up after its sleep and only then meets the closed answer.
    await new Promise((r) => setTimeout(r, 300));
    expect(rejections.map(String)).toEqual([]);
    expect(proxy.seen.slice(-3).every((s) => s.bytes < BODY.length)).toBe(true);
  } finally {
    process.off('unhandledRejection', onRejection);
    proxy.pace = 0;
  }
});
