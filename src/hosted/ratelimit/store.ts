// @fastify/rate-limit's counters kept in the database, not in process memory, so
// that several instances of the service share them. One fixed window per key; the
// increment (or the start of a new window) is one atomic upsert.
import type { FastifyRateLimitStore, FastifyRateLimitStoreCtor } from '@fastify/rate-limit';
import type { Db } from '../db/open.js';
import { compiledOnce } from '../db/compiled.js';

export interface Hit {
  /** Requests counted in the window, this one included. */
  current: number;
  /** Milliseconds until the window ends. */
  ttl: number;
}

/**
 * The upsert that counts one request under `key` at `now`. Every value is a
 * parameter, so its text is the same at every instant and it is built and
 * compiled once (db/compiled.ts); a literal `now` made a new text on each
 * request, and those texts pushed every other statement out of SQLite's
 * statement cache (src/sqlite/statements.ts).
 */
export function hitQuery(db: Db, key: string, now: number, stale: number) {
  return db
    .insertInto('rate_limits')
    .values({ key, window_start: now, count: 1 })
    .onConflict((oc) =>
      // Both CASEs read the row as it was, so they agree on whether the window ran out.
      oc.column('key').doUpdateSet((eb) => ({
        count: eb.case().when('rate_limits.window_start', '<=', stale).then(1).else(eb('rate_limits.count', '+', 1)).end(),
        window_start: eb.case().when('rate_limits.window_start', '<=', stale).then(eb.val(now)).else(eb.ref('rate_limits.window_start')).end(),
      })),
    )
    .returning(['count', 'window_start']);
}

const runHit = compiledOnce(hitQuery);

/** Counts one request under `key`; a window older than `windowMs` starts over at 1. */
export async function hit(db: Db, key: string, windowMs: number, now = Date.now()): Promise<Hit> {
  const [row] = await runHit(db, key, now, now - windowMs);
  if (!row) throw new Error('rate limit upsert answered no row');
  return { current: row.count, ttl: Math.max(0, row.window_start + windowMs - now) };
}

/** Drops windows that ended before `now - windowMs` (the sweeper calls it). */
export async function sweepRateLimits(db: Db, windowMs: number, now = Date.now()): Promise<void> {
  await db.deleteFrom('rate_limits').where('window_start', '<=', now - windowMs).execute();
}

/** The store class @fastify/rate-limit instantiates (it takes a constructor). */
export function databaseStore(db: Db): FastifyRateLimitStoreCtor {
  return class DatabaseStore implements FastifyRateLimitStore {
    incr(key: string, callback: (error: Error | null, result?: Hit) => void, timeWindow: number): void {
      hit(db, key, timeWindow).then((r) => callback(null, r), (err: Error) => callback(err));
    }

    child(): FastifyRateLimitStore {
      return this;
    }
  };
}
