// Brute force on Link passwords and Portal access codes, counted per (Link or
// Portal, address) in the database. After `freeFailures` wrong tries each further
// try must wait (1 s, 2 s, 4 s ... after the last wrong one) and is refused with
// 429 before that, unchecked; once the wait is over a right secret opens as usual.
// After `lockAfter` wrong tries the pair is locked for `lockMs`: even the right
// secret is refused until then. A right secret forgets the wrong ones.
import { sql } from 'kysely';
import type { HostedContext } from '../context.js';
import type { Db } from '../db/open.js';
import type { LockoutSettings } from '../config.js';
import type { SecretFailuresTable } from '../db/schema.js';
import { HttpError } from '../errors.js';

export interface SecretSubject {
  kind: 'link' | 'portal';
  id: string;
}

const subjectKey = (s: SecretSubject) => `${s.kind}:${s.id}`;
const WHAT = { link: 'link', portal: 'Portal' } as const;

/** A row whose lock ran out, or whose last wrong try is forgotten, counts as none. */
const isStale = (row: Pick<SecretFailuresTable, 'last_failure_at' | 'locked_until'>, s: LockoutSettings, now: number) =>
  row.locked_until !== null ? row.locked_until <= now : row.last_failure_at <= now - s.forgetMs;

const minutes = (ms: number) => Math.max(1, Math.ceil(ms / 60_000));

/** 429 when this address is locked out of the subject or must still wait; else nothing. */
async function refuseIfHeld(db: Db, s: LockoutSettings, subject: SecretSubject, address: string, now: number): Promise<void> {
  const row = await db
    .selectFrom('secret_failures')
    .selectAll()
    .where('subject', '=', subjectKey(subject))
    .where('address', '=', address)
    .executeTakeFirst();
  if (!row || isStale(row, s, now)) return;
  if (row.locked_until !== null) {
    const ms = row.locked_until - now;
    throw new HttpError(429, 'locked_out', `too many wrong attempts: this ${WHAT[subject.kind]} is locked for your address for ${minutes(ms)} min`, {
      'retry-after': String(Math.ceil(ms / 1000)),
    });
  }
  if (row.failures < s.freeFailures) return;
  const wait = s.delayMs * 2 ** (row.failures - s.freeFailures);
  const ms = row.last_failure_at + wait - now;
  if (ms > 0) {
    throw new HttpError(429, 'too_many_attempts', `too many wrong attempts: wait ${Math.ceil(ms / 1000)} s before trying again`, {
      'retry-after': String(Math.ceil(ms / 1000)),
    });
  }
}

/** Counts one wrong try in one statement (concurrent tries each count); locks at `lockAfter`. */
async function recordFailure(db: Db, s: LockoutSettings, subject: SecretSubject, address: string, now: number): Promise<void> {
  const stale = sql<boolean>`(secret_failures.locked_until IS NOT NULL AND secret_failures.locked_until <= ${now})
    OR (secret_failures.locked_until IS NULL AND secret_failures.last_failure_at <= ${now - s.forgetMs})`;
  const failures = sql<number>`CASE WHEN ${stale} THEN 1 ELSE secret_failures.failures + 1 END`;
  await db
    .insertInto('secret_failures')
    .values({ subject: subjectKey(subject), address, failures: 1, last_failure_at: now, locked_until: s.lockAfter <= 1 ? now + s.lockMs : null })
    .onConflict((oc) =>
      oc.columns(['subject', 'address']).doUpdateSet({
        failures,
        last_failure_at: now,
        locked_until: sql<number | null>`CASE WHEN ${failures} >= ${s.lockAfter} THEN ${now + s.lockMs} ELSE NULL END`,
      }),
    )
    .execute();
}

/**
 * The one gate of a secret a caller guesses: refuses (429) while the address must
 * wait or is locked out, else runs `check`, counts a wrong answer and forgets the
 * wrong ones after a right one. Returns what `check` said; the caller answers 401.
 */
export async function guardSecret(ctx: HostedContext, subject: SecretSubject, address: string, check: () => Promise<boolean>): Promise<boolean> {
  const s = ctx.config.lockout;
  await refuseIfHeld(ctx.db, s, subject, address, Date.now());
  const right = await check();
  if (right) {
    await ctx.db.deleteFrom('secret_failures').where('subject', '=', subjectKey(subject)).where('address', '=', address).execute();
  } else {
    await recordFailure(ctx.db, s, subject, address, Date.now());
  }
  return right;
}

/** Drops rows that no longer hold anyone back (the sweeper calls it). */
export async function sweepSecretFailures(db: Db, s: LockoutSettings, now = Date.now()): Promise<void> {
  await db
    .deleteFrom('secret_failures')
    .where((eb) =>
      eb.or([
        eb.and([eb('locked_until', 'is not', null), eb('locked_until', '<=', now)]),
        eb.and([eb('locked_until', 'is', null), eb('last_failure_at', '<=', now - s.forgetMs)]),
      ]),
    )
    .execute();
}
