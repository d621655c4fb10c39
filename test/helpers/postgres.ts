// The hosted tests' PostgreSQL side: each service gets a database of its own in
// the run's cluster (test/helpers/postgresGlobal.ts), dropped when it closes.
import { randomBytes } from 'node:crypto';
import fs from 'node:fs/promises';
import path from 'node:path';
import pg from 'pg';

/**
 * The cluster's superuser URL when this run is on PostgreSQL (FERRY_TEST_DATABASE=postgres,
 * FERRY_TEST_POSTGRES_URL set by test/helpers/postgresGlobal.ts or by hand), else undefined.
 */
export function testPostgresUrl(): string | undefined {
  return (process.env.FERRY_TEST_DATABASE === 'postgres' && process.env.FERRY_TEST_POSTGRES_URL) || undefined;
}

export const onPostgres = () => testPostgresUrl() !== undefined;

async function admin<T>(run: (c: pg.Client) => Promise<T>): Promise<T> {
  const c = new pg.Client(testPostgresUrl());
  await c.connect();
  try {
    return await run(c);
  } finally {
    await c.end();
  }
}

/** A new empty database; its URL. */
export async function createTestDatabase(): Promise<{ name: string; url: string }> {
  const name = `ferry_${randomBytes(6).toString('hex')}`;
  await admin((c) => c.query(`CREATE DATABASE ${name}`));
  const url = new URL(testPostgresUrl()!);
  url.pathname = `/${name}`;
  return { name, url: url.toString() };
}

export async function dropTestDatabase(name: string): Promise<void> {
  await admin((c) => c.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`));
}

/**
 * The database of a test service's data dir: made on first use and named in the
 * data dir, so that a restart on the same data dir finds its records again.
 */
export async function databaseForDataDir(dataDir: string): Promise<{ name: string; url: string }> {
  const file = path.join(dataDir, 'test-database.json');
  try {
    return JSON.parse(await fs.readFile(file, 'utf8'));
  } catch {
    const made = await createTestDatabase();
    await fs.writeFile(file, JSON.stringify(made));
    return made;
  }
}
