// The store on its own thread, as `ferry serve` runs it: a start that fails
// (its port is taken) rejects and leaves no thread behind; close() stops the
// server, and control calls made after it fail as an S3 InternalError.
import { existsSync, readdirSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import net from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, test } from 'vitest';
import { S3Error } from '../../../src/objectstore/index.js';
import { startObjectStoreThread } from '../../../src/objectstore/thread.js';

let dataDir: string;
const opts = { host: '127.0.0.1', accessKey: 'FERRYTHREADKEY000001', secretKey: 'thread-secret-0123456789abcdef', buckets: ['bkt'], logLevel: 'silent' };

beforeAll(async () => {
  dataDir = await mkdtemp(join(tmpdir(), 'ferry-objectstore-thread-'));
});
afterAll(async () => {
  await rm(dataDir, { recursive: true, force: true });
});

/** This process's threads, where Linux lists them. */
const threads = () => (existsSync('/proc/self/task') ? readdirSync('/proc/self/task') : undefined);

test('a port already in use rejects the start with the reason, and leaves no thread behind', async ({ skip }) => {
  const taken = net.createServer();
  await new Promise<void>((ok) => taken.listen(0, '127.0.0.1', ok));
  try {
    const port = (taken.address() as net.AddressInfo).port;
    const before = threads();
    await expect(startObjectStoreThread({ ...opts, port, dataDir })).rejects.toThrow(/EADDRINUSE/);
    if (!before) skip('the rejection was checked; threads cannot be listed here');
    // The store's thread (and, run from the sources, tsx's loader thread) has ended by the time the start rejects.
    expect(threads()).toEqual(before);
  } finally {
    await new Promise((ok) => taken.close(ok));
  }
});

test('close() stops the server; a control call after it fails as InternalError', async () => {
  const store = await startObjectStoreThread({ ...opts, port: 0, dataDir });
  expect(store.url).toBe(`http://127.0.0.1:${store.port}`);
  expect((await fetch(`${store.url}/bkt`)).status).toBe(403); // alive, and unsigned requests are refused
  expect(await store.local.uploadExists('bkt', 'k', 'not-an-upload')).toBe(false);
  await store.close();
  await expect(fetch(`${store.url}/bkt`)).rejects.toThrow();
  const err = await store.local.uploadExists('bkt', 'k', 'not-an-upload').catch((e: unknown) => e);
  expect(err).toBeInstanceOf(S3Error);
  expect(err).toMatchObject({ code: 'InternalError', status: 500 });
});
