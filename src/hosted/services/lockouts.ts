// Brute force on Link passwords and Portal access codes, counted per (Link or
// Portal, address) in the database, and on account passwords, counted per account
// from every address at once (EVERY_ADDRESS). After `freeFailures` wrong tries each
// further try must wait (1 s, 2 s, 4 s ... after the last wrong one) and is refused
// with 429 before that, unchecked; once the wait is over a right secret opens as
// usual. After `lockAfter` wrong tries the pair is locked for `lockMs`: even the
// right secret is refused until then. A right secret forgets the wrong ones.
import { sql } from 'kysely';
import type { HostedContext } from '../context.js';
import type { Db } from '../db/open.js';
import type { LockoutSettings } from '../config.js';
import type { SecretFailuresTable } from '../db/schema.js';
import { HttpError } from '../errors.js';

export interface SecretSubject {
  /** account: `id` is the SHA-256 of the normalized e-mail (services/sessions.ts), known user or not. */
  kind: 'link' | 'portal' | 'account';
  id: string;
}

/** The address of an account's count: wrong passwords count against it wherever they come from. */
export const EVERY_ADDRESS = '*';

const subjectKey = (s: SecretSubject) => `${s.kind}:${s.id}`;

/** A row whose lock ran out, or whose last wrong try is forgotten, counts as none. */
const isStale = (row: Pick<SecretFailuresTable, 'last_failure_at' | 'locked_until'>, s: LockoutSettings, now: number) =>
  row.locked_until !== null ? row.locked_until <= now : row.last_failure_at <= now - s.forgetMs;

const minutes = (ms: number) => Math.max(1, Math.ceil(ms / 60_000));

/** The wait a pair owes after `failures` wrong tries: none for the free ones, then doubling. */
const waitAfter = (s: LockoutSettings, failures: number) => (failures < s.freeFailures ? 0 : s.delayMs * 2 ** (failures - s.freeFailures));

const LOCKED = {
  link: 'this link is locked for your address',
  portal: 'this Portal is locked for your address',
  // The same words for an e-mail that is no one's: the answer tells nothing of who has an account.
  account: 'signing in with this e-mail is locked',
} as const;

const lockedOut = (subject: SecretSubject, ms: number) =>
  new HttpError(429, 'locked_out', `too many wrong attempts: ${LOCKED[subject.kind]} for ${minutes(ms)} min`, {
    'retry-after': String(Math.max(1, Math.ceil(ms / 1000))),
  });

const mustWait = (ms: number) =>
  new HttpError(429, 'too_many_attempts', `too many wrong attempts: wait ${Math.max(1, Math.ceil(ms / 1000))} s before trying again`, {
    'retry-after': String(Math.max(1, Math.ceil(ms / 1000))),
  });

/** 429 when this address is locked out of the subject or must still wait; else the wrong tries counted so far. */
async function refuseIfHeld(db: Db, s: LockoutSettings, subject: SecretSubject, address: string, now: number): Promise<number> {
  const row = await db
    .selectFrom('secret_failures')
    .selectAll()
    .where('subject', '=', subjectKey(subject))
    .where('address', '=', address)
    .executeTakeFirst();
  if (!row || isStale(row, s, now)) return 0;
  if (row.locked_until !== null) throw lockedOut(subject, row.locked_until - now);
  const ms = row.last_failure_at + waitAfter(s, row.failures) - now;
  if (ms > 0) throw mustWait(ms);
  return row.failures;
}

/** Counts one try as wrong in one statement (concurrent tries each count); locks at `lockAfter`. Returns the count. */
async function countTry(db: Db, s: LockoutSettings, subject: SecretSubject, address: string, now: number): Promise<number> {
  const stale = sql<boolean>`(secret_failures.locked_until IS NOT NULL AND secret_failures.locked_until <= ${now})
    OR (secret_failures.locked_until IS NULL AND secret_failures.last_failure_at <= ${now - s.forgetMs})`;
  const failures = sql<number>`CASE WHEN ${stale} THEN 1 ELSE secret_failures.failures + 1 END`;
  const row = await db
    .insertInto('secret_failures')
    .values({ subject: subjectKey(subject), address, failures: 1, last_failure_at: now, locked_until: s.lockAfter <= 1 ? now + s.lockMs : null })
    .onConflict((oc) =>
      oc.columns(['subject', 'address']).doUpdateSet({
        failures,
        last_failure_at: now,
        // The cast: beside a NULL, PostgreSQL would take the parameter for text.
        locked_until: sql<number | null>`CASE WHEN ${failures} >= ${s.lockAfter} THEN CAST(${now + s.lockMs} AS BIGINT) ELSE NULL END`,
      }),
    )
    .returning('failures')
    .executeTakeFirstOrThrow();
  return row.failures;
}

/**
 * The one gate of a secret a caller guesses: refuses (429) while the address must
 * wait or is locked out, else counts the try as wrong *before* running `check`, so
 * that concurrent guesses cannot all pass on one look at the count: a try that finds
 * others counted since its look, past the free ones, is refused unchecked. A right
 * secret then forgets the wrong ones. Returns what `check` said; the caller answers 401.
 */
export async function guardSecret(ctx: HostedContext, subject: SecretSubject, address: string, check: () => Promise<boolean>): Promise<boolean> {
  const s = ctx.config.lockout;
  const seen = await refuseIfHeld(ctx.db, s, subject, address, Date.now());
  const now = Date.now();
  const counted = await countTry(ctx.db, s, subject, address, now);
  if (counted > seen + 1 && counted > s.freeFailures) {
    throw counted >= s.lockAfter ? lockedOut(subject, s.lockMs) : mustWait(waitAfter(s, counted));
  }
  const right = await check();
  if (right) await forgetFailures(ctx.db, subject, address);
  return right;
}

/** Forgets the wrong tries of a subject from an address (a right secret; an operator's password reset). */
export async function forgetFailures(db: Db, subject: SecretSubject, address: string): Promise<void> {
  await db.deleteFrom('secret_failures').where('subject', '=', subjectKey(subject)).where('address', '=', address).execute();
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
