// The jobs table: enqueue (inside the caller's transaction), claim with a lease,
// and the three ends of an attempt (done, retry later, give up). Every statement
// is plain, portable SQL over ISO-8601 text timestamps; only claimJob() differs
// on PostgreSQL (FOR UPDATE SKIP LOCKED in its subqueries).
import type { Expression, ExpressionBuilder, Kysely, SqlBool, Transaction } from 'kysely';
import type { Database, JobsTable } from '../db/schema.js';
import { newId } from '../ids.js';
import { isPostgres } from '../db/dialect.js';

type Conn = Kysely<Database> | Transaction<Database>;
export type Job = JobsTable;

const iso = (d: Date) => d.toISOString();
const later = (now: Date, ms: number) => iso(new Date(now.getTime() + ms));

export interface NewJob {
  kind: string;
  payload: unknown;
  maxAttempts: number;
  /** Not before this instant; now when omitted. */
  runAfter?: Date;
}

/** Writes a job with `db`, which should be the transaction of the change that raises it. */
export async function enqueueJob(db: Conn, job: NewJob, now = new Date()): Promise<string> {
  const id = newId('job');
  await db
    .insertInto('jobs')
    .values({
      id,
      kind: job.kind,
      payload: JSON.stringify(job.payload),
      state: 'queued',
      attempts: 0,
      max_attempts: job.maxAttempts,
      run_after: iso(job.runAfter ?? now),
      lease_owner: null,
      lease_until: null,
      last_error: null,
      created_at: iso(now),
      updated_at: iso(now),
    })
    .execute();
  return id;
}

/**
 * Claims one due job of `kinds` for `owner` until now + leaseMs, counting the
 * attempt: first a running job whose lease ran out (its process died) with
 * attempts left, else the queued job due the longest. Each is one conditional
 * UPDATE: the condition is checked again on the row, so two claimers never both
 * win. On PostgreSQL the subqueries gain FOR UPDATE SKIP LOCKED so that claimers
 * do not queue behind each other's row locks; nothing else changes.
 */
export async function claimJob(db: Conn, owner: string, kinds: string[], leaseMs: number, now = new Date()): Promise<Job | undefined> {
  if (kinds.length === 0) return undefined;
  const at = iso(now);
  type Due = (eb: ExpressionBuilder<Database, 'jobs'>) => Expression<SqlBool>;
  const abandoned: Due = (eb) => eb.and([eb('kind', 'in', kinds), eb('state', '=', 'running'), eb('lease_until', '<=', at), eb('attempts', '<', eb.ref('max_attempts'))]);
  const queued: Due = (eb) => eb.and([eb('kind', 'in', kinds), eb('state', '=', 'queued'), eb('run_after', '<=', at)]);
  const pg = isPostgres(db);
  const take = (due: Due, order: 'lease_until' | 'run_after') =>
    db
      .updateTable('jobs')
      .set((eb) => ({ state: 'running', lease_owner: owner, lease_until: later(now, leaseMs), attempts: eb('attempts', '+', 1), updated_at: at }))
      .where('id', '=', (eb) =>
        eb.selectFrom('jobs').select('id').where(due).orderBy(order).limit(1).$if(pg, (q) => q.forUpdate().skipLocked()),
      )
      .where(due)
      .returningAll()
      .executeTakeFirst();
  return (await take(abandoned, 'lease_until')) ?? (await take(queued, 'run_after'));
}

/** Keeps a long attempt's lease; false when the job is no longer this owner's. */
export async function renewLease(db: Conn, id: string, owner: string, leaseMs: number, now = new Date()): Promise<boolean> {
  const r = await db
    .updateTable('jobs')
    .set({ lease_until: later(now, leaseMs), updated_at: iso(now) })
    .where('id', '=', id)
    .where('state', '=', 'running')
    .where('lease_owner', '=', owner)
    .executeTakeFirst();
  return r.numUpdatedRows > 0n;
}

/** The attempt succeeded: the job is deleted (its effects are the record). */
export async function completeJob(db: Conn, id: string, owner: string): Promise<boolean> {
  const r = await db.deleteFrom('jobs').where('id', '=', id).where('state', '=', 'running').where('lease_owner', '=', owner).executeTakeFirst();
  return r.numDeletedRows > 0n;
}

/** The attempt failed with attempts left: queued again, not before `runAfter`. */
export async function retryJob(db: Conn, id: string, owner: string, error: string, runAfter: Date, now = new Date()): Promise<boolean> {
  const r = await db
    .updateTable('jobs')
    .set({ state: 'queued', run_after: iso(runAfter), lease_owner: null, lease_until: null, last_error: error, updated_at: iso(now) })
    .where('id', '=', id)
    .where('state', '=', 'running')
    .where('lease_owner', '=', owner)
    .executeTakeFirst();
  return r.numUpdatedRows > 0n;
}

/**
 * The attempt was stopped by this process's shutdown, not by a failure: the job
 * is queued again at once and the attempt is not counted.
 */
export async function releaseJob(db: Conn, id: string, owner: string, note: string, now = new Date()): Promise<boolean> {
  const r = await db
    .updateTable('jobs')
    .set((eb) => ({ state: 'queued', run_after: iso(now), lease_owner: null, lease_until: null, attempts: eb('attempts', '-', 1), last_error: note, updated_at: iso(now) }))
    .where('id', '=', id)
    .where('state', '=', 'running')
    .where('lease_owner', '=', owner)
    .executeTakeFirst();
  return r.numUpdatedRows > 0n;
}

/**
 * The attempt could not run through no fault of its own (what it needs is not
 * there yet, such as a storage gateway that is not connected): the job is queued
 * again for `runAfter` and the attempt is not counted. Something that makes it
 * able to run may set its run_after to now and wake the worker.
 */
export async function deferJob(db: Conn, id: string, owner: string, note: string, runAfter: Date, now = new Date()): Promise<boolean> {
  const r = await db
    .updateTable('jobs')
    .set((eb) => ({ state: 'queued', run_after: iso(runAfter), lease_owner: null, lease_until: null, attempts: eb('attempts', '-', 1), last_error: note, updated_at: iso(now) }))
    .where('id', '=', id)
    .where('state', '=', 'running')
    .where('lease_owner', '=', owner)
    .executeTakeFirst();
  return r.numUpdatedRows > 0n;
}

/** The last attempt failed (or the error is final): the job is kept as failed, for the record. */
export async function failJob(db: Conn, id: string, owner: string, error: string, now = new Date()): Promise<boolean> {
  const r = await db
    .updateTable('jobs')
    .set({ state: 'failed', lease_owner: null, lease_until: null, last_error: error, updated_at: iso(now) })
    .where('id', '=', id)
    .where('state', '=', 'running')
    .where('lease_owner', '=', owner)
    .executeTakeFirst();
  return r.numUpdatedRows > 0n;
}

/**
 * Running jobs whose lease ran out during their last attempt: nobody may run
 * them again, so they are given up. Answers the jobs it failed.
 */
export async function failAbandoned(db: Conn, kinds: string[], now = new Date()): Promise<Job[]> {
  if (kinds.length === 0) return [];
  const at = iso(now);
  return db
    .updateTable('jobs')
    .set({ state: 'failed', lease_owner: null, lease_until: null, last_error: 'its process stopped during the last attempt', updated_at: at })
    .where('kind', 'in', kinds)
    .where('state', '=', 'running')
    .where('lease_until', '<=', at)
    .where((eb) => eb('attempts', '>=', eb.ref('max_attempts')))
    .returningAll()
    .execute();
}

/** When the next queued job of `kinds` falls due, if any (to sleep no longer than needed). */
export async function nextRunAfter(db: Conn, kinds: string[]): Promise<string | undefined> {
  if (kinds.length === 0) return undefined;
  const r = await db
    .selectFrom('jobs')
    .select((eb) => eb.fn.min('run_after').as('next'))
    .where('kind', 'in', kinds)
    .where('state', '=', 'queued')
    .executeTakeFirst();
  return r?.next ?? undefined;
}
