// Whether this instance can serve (/readyz): not shutting down, its database
// answers a query with every migration this code knows applied, and its store
// answers a HeadBucket. Each check is bounded so the answer comes promptly.
import { sql } from 'kysely';
import type { HostedContext } from '../context.js';
import { HttpError } from '../errors.js';
import { migrations } from '../db/migrations.js';
import { NOT_READY } from '../../api/hosted/health.js';

const STORE_TIMEOUT_MS = 3000;
const LATEST = Math.max(...migrations.map((m) => m.version));

const describe = (err: unknown) => (err instanceof Error ? err.message : String(err)).slice(0, 300);

/** Throws the 503 that says what is not ready. */
export async function checkReady(ctx: HostedContext): Promise<void> {
  if (ctx.instance.shuttingDown) throw new HttpError(503, NOT_READY.shuttingDown, 'this instance is shutting down');
  let applied: number;
  try {
    const r = await sql<{ v: number | string | null }>`SELECT MAX(version) AS v FROM schema_migrations`.execute(ctx.db);
    applied = Number(r.rows[0]?.v ?? 0);
  } catch (err) {
    throw new HttpError(503, NOT_READY.database, `the database does not answer: ${describe(err)}`);
  }
  if (applied < LATEST) throw new HttpError(503, NOT_READY.migrations, `the database is at migration ${applied}; this version needs ${LATEST}`);
  try {
    await ctx.storage.ping(STORE_TIMEOUT_MS);
  } catch (err) {
    throw new HttpError(503, NOT_READY.store, `the object store does not answer for bucket ${ctx.storage.bucket}: ${describe(err)}`);
  }
}
