// Starts a real hosted service with its embedded store on ephemeral ports and a
// temporary data dir, for integration tests (in the RADOS Gateway pass, with
// its objects on the gateway: test/helpers/externalStore.ts). Call close() in afterAll.
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import pino from 'pino';
import { resolveHostedConfig, type Flags } from '../../src/hosted/config.js';
import { startHostedService, type RunningHosted } from '../../src/hosted/server.js';
import { createTestDatabase, databaseForDataDir, dropTestDatabase, onPostgres } from './postgres.js';
import { openDatabase, type OpenedDb } from '../../src/hosted/db/open.js';
import { openPostgres } from '../../src/hosted/db/postgres.js';
import { rgwUnderTest } from './externalStore.js';

export interface TestService extends RunningHosted {
  dataDir: string;
  owner: { email: string; password: string };
  /** Stops the service and keeps its data dir, for a restart on it (then close() the new one); `graceMs` as RunningHosted.close. */
  stop(opts?: { graceMs?: number }): Promise<void>;
}

/**
 * Every test talks from 127.0.0.1 and signs in or guesses more than a user would:
 * the limits stay on (their code runs) but out of reach. Tests of the limits set their own.
 */
export const GENEROUS_LIMITS: Flags = {
  'rate-limit-sign-in': '100000',
  'rate-limit-public': '100000',
  'rate-limit-api': '100000',
  'rate-limit-package': '100000',
  'lockout-free': '1000',
  'lockout-after': '10000',
};

/**
 * With `dataDir`, starts on an existing data dir (a restart); else on a new temporary one.
 * On a PostgreSQL run (FERRY_TEST_DATABASE=postgres) the records go to a database
 * of the data dir's own (test/helpers/postgres.ts), dropped by close().
 */
export async function startTestService(flags: Flags = {}, dataDir?: string): Promise<TestService> {
  dataDir ??= await fs.mkdtemp(path.join(os.tmpdir(), 'ferry-hosted-'));
  const owner = { email: 'owner@example.com', password: 'correct horse battery' };
  const pgDb = onPostgres() && flags.database === undefined ? await databaseForDataDir(dataDir) : undefined;
  // In the RADOS Gateway pass, a service without a store of its test's choosing keeps its objects on the
  // gateway, in a bucket named for its data dir (so a restart on that dir finds them; the service creates it).
  const rgw = flags['s3-endpoint'] === undefined ? rgwUnderTest() : undefined;
  const rgwFlags: Flags = rgw
    ? { 's3-endpoint': rgw.url, 's3-bucket': `ferry-${path.basename(dataDir).toLowerCase().replace(/[^a-z0-9-]/g, '-')}`, 's3-access-key': rgw.accessKey, 's3-secret-key': rgw.secretKey, 's3-path-style': true }
    : {};
  const config = resolveHostedConfig(
    {
      listen: '127.0.0.1:0',
      's3-listen': '127.0.0.1:0',
      'data-dir': dataDir,
      'init-owner': `${owner.email}:${owner.password}`,
      ...(pgDb ? { database: pgDb.url } : {}),
      ...rgwFlags,
      ...GENEROUS_LIMITS,
      ...flags,
    },
    {},
  );
  const running = await startHostedService(config, pino({ level: process.env.FERRY_TEST_LOG ?? 'silent' }));
  return {
    ...running,
    dataDir,
    owner,
    stop: (opts) => running.close(opts),
    async close() {
      await running.close();
      if (pgDb) await dropTestDatabase(pgDb.name);
      await fs.rm(dataDir!, { recursive: true, force: true });
    },
  };
}

/**
 * The database a stopped test service on `dataDir` left, on the run's backend:
 * its ferry.db, or its PostgreSQL database (test/helpers/postgres.ts).
 */
export async function openServiceDatabase(dataDir: string): Promise<OpenedDb> {
  if (!onPostgres()) return openDatabase(path.join(dataDir, 'ferry.db'));
  return openPostgres((await databaseForDataDir(dataDir)).url, { poolSize: 2 });
}

/**
 * A database of the run's backend with no service on it, for tests of one part
 * (the jobs queue): `dir`'s ferry.db, or a new PostgreSQL database that close() drops.
 */
export async function openTestDatabase(dir: string): Promise<OpenedDb> {
  if (!onPostgres()) return openDatabase(path.join(dir, 'ferry.db'));
  const made = await createTestDatabase();
  const opened = await openPostgres(made.url);
  return {
    db: opened.db,
    async close() {
      await opened.close();
      await dropTestDatabase(made.name);
    },
  };
}

export interface Answer<T = any> { status: number; body: T; headers: Headers }

/** One JSON request; the body is parsed when the answer is JSON. */
export async function call<T = any>(
  base: string,
  method: string,
  urlPath: string,
  opts: { headers?: Record<string, string>; body?: unknown; raw?: string } = {},
): Promise<Answer<T>> {
  const hasBody = opts.body !== undefined || opts.raw !== undefined;
  const res = await fetch(base + urlPath, {
    method,
    headers: { ...(hasBody ? { 'content-type': 'application/json' } : {}), ...opts.headers },
    body: opts.raw ?? (opts.body === undefined ? undefined : JSON.stringify(opts.body)),
  });
  const text = await res.text();
  let body: any = text;
  if ((res.headers.get('content-type') ?? '').includes('json') && text) body = JSON.parse(text);
  return { status: res.status, body, headers: res.headers };
}
