// The jobs table on a real SQLite file (or PostgreSQL database, on that run): jobs are enqueued with the change that
// raises them, claimed by one claimer at a time under a lease, taken over when a
// lease runs out, retried with back-off, given up after their last attempt,
// and the worker's stop() waits for the job in flight (within a grace, then
// hands it back).
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import Database from 'better-sqlite3';
import { Kysely, SqliteDialect } from 'kysely';
import pino from 'pino';
import { afterAll, beforeAll, beforeEach, expect, test } from 'vitest';
import type { Db } from '../../../src/hosted/db/open.js';
import { openTestDatabase } from '../../helpers/hosted.js';
import { migrate } from '../../../src/hosted/db/migrations.js';
import type { Database as Schema } from '../../../src/hosted/db/schema.js';
import { claimJob, completeJob, enqueueJob, failAbandoned, retryJob, type Job } from '../../../src/hosted/jobs/queue.js';
import { FinalJobError, InterruptedJobError, startJobWorker, type JobHandler, type JobWorker } from '../../../src/hosted/jobs/worker.js';
import { waitFor } from '../../helpers/downloads.js';

const log = pino({ level: 'silent' });
let dir: string;
let db: Db;
let closeDb: () => Promise<void>;
const workers: JobWorker[] = [];

beforeAll(async () => {
  dir = await fs.mkdtemp(path.join(os.tmpdir(), 'ferry-jobs-'));
  ({ db, close: closeDb } = await openTestDatabase(dir));
});
afterAll(async () => {
  for (const w of workers) await w.stop();
  await closeDb?.();
  await fs.rm(dir, { recursive: true, force: true });
});
beforeEach(async () => {
  for (const w of workers.splice(0)) await w.stop();
  await db.deleteFrom('jobs').execute();
});

const row = (id: string) => db.selectFrom('jobs').selectAll().where('id', '=', id).executeTakeFirst();
const start = (handlers: Record<string, JobHandler>, opts: Partial<{ pollMs: number; leaseMs: number; concurrency: number; owner: string }> = {}) => {
  const w = startJobWorker(db, log, handlers, { pollMs: 20, leaseMs: 5000, concurrency: 2, ...opts });
  workers.push(w);
  return w;
};

/** A promise with its resolve, to hold a handler in flight until the test lets it go. */
function gate() {
  let open!: () => void;
  const opened = new Promise<void>((r) => (open = r));
  return { open, opened };
}

test('a job enqueued in a transaction that rolls back does not exist; one that commits does', async () => {
  await expect(
    db.transaction().execute(async (trx) => {
      await enqueueJob(trx, { kind: 'k', payload: { n: 1 }, maxAttempts: 3 });
      throw new Error('the change failed');
    }),
  ).rejects.toThrow('the change failed');
  expect(await db.selectFrom('jobs').selectAll().execute()).toEqual([]);
  const id = await db.transaction().execute((trx) => enqueueJob(trx, { kind: 'k', payload: { n: 2 }, maxAttempts: 3 }));
  expect(await row(id)).toMatchObject({ kind: 'k', payload: '{"n":2}', state: 'queued', attempts: 0, max_attempts: 3, lease_owner: null });
});

test('one claimer wins a job; when its lease runs out another takes it over and the first can no longer settle it', async () => {
  const t0 = new Date('2030-01-01T00:00:00.000Z');
  const id = await enqueueJob(db, { kind: 'k', payload: {}, maxAttempts: 5 }, t0);
  const a = await claimJob(db, 'A', ['k'], 1000, t0);
  expect(a).toMatchObject({ id, state: 'running', lease_owner: 'A', attempts: 1, lease_until: '2030-01-01T00:00:01.000Z' });
  // Leased: nobody else gets it, nor a claimer of other kinds.
  expect(await claimJob(db, 'B', ['k'], 1000, new Date(t0.getTime() + 999))).toBeUndefined();
  expect(await claimJob(db, 'B', ['other'], 1000, new Date(t0.getTime() + 5000))).toBeUndefined();
  // A's process died: once the lease is past, B takes the job over, as a second attempt.
  const b = await claimJob(db, 'B', ['k'], 1000, new Date(t0.getTime() + 1000));
  expect(b).toMatchObject({ id, lease_owner: 'B', attempts: 2 });
  expect(await completeJob(db, id, 'A')).toBe(false);
  expect(await retryJob(db, id, 'A', 'late', t0)).toBe(false);
  expect(await row(id)).toMatchObject({ state: 'running', lease_owner: 'B' });
  expect(await completeJob(db, id, 'B')).toBe(true);
  expect(await row(id)).toBeUndefined();
});

test('a queued job is not claimed before its run_after', async () => {
  const t0 = new Date('2030-01-01T00:00:00.000Z');
  const id = await enqueueJob(db, { kind: 'k', payload: {}, maxAttempts: 5, runAfter: new Date(t0.getTime() + 10_000) }, t0);
  expect(await claimJob(db, 'A', ['k'], 1000, new Date(t0.getTime() + 9_999))).toBeUndefined();
  expect((await claimJob(db, 'A', ['k'], 1000, new Date(t0.getTime() + 10_000)))?.id).toBe(id);
});

test('the worker takes over a job whose process died with it leased, and runs it', async () => {
  const longAgo = new Date(Date.now() - 60_000);
  const id = await enqueueJob(db, { kind: 'k', payload: { x: 1 }, maxAttempts: 5 }, longAgo);
  // A crashed process claimed it long ago.
  expect((await claimJob(db, 'crashed', ['k'], 1000, longAgo))?.id).toBe(id);
  const seen: Job[] = [];
  start({ k: { retryDelayMs: () => 0, run: async (job) => void seen.push(job) } }, { owner: 'survivor' });
  await waitFor('the job to be done', async () => ((await row(id)) ? undefined : true));
  expect(seen).toHaveLength(1);
  expect(seen[0]).toMatchObject({ id, attempts: 2, lease_owner: 'survivor', payload: '{"x":1}' });
});

test('a failing job is retried after its back-off, counted, and given up after its last attempt', async () => {
  const id = await enqueueJob(db, { kind: 'k', payload: {}, maxAttempts: 3 });
  const attempts: number[] = [];
  const delays: number[] = [];
  const gaveUp: string[] = [];
  start({
    k: {
      retryDelayMs: (n) => (delays.push(n), 5 * n),
      run: async (job) => {
        attempts.push(job.attempts);
        throw new Error(`failure ${job.attempts}`);
      },
      gaveUp: async (job, error) => void gaveUp.push(`${job.id}: ${error}`),
    },
  });
  await waitFor('the job to be given up', async () => ((await row(id))?.state === 'failed' ? true : undefined));
  expect(attempts).toEqual([1, 2, 3]);
  expect(delays).toEqual([1, 2]);
  expect(gaveUp).toEqual([`${id}: failure 3`]);
  expect(await row(id)).toMatchObject({ state: 'failed', attempts: 3, last_error: 'failure 3', lease_owner: null });
});

test('a FinalJobError gives the job up at once', async () => {
  const id = await enqueueJob(db, { kind: 'k', payload: {}, maxAttempts: 5 });
  start({ k: { retryDelayMs: () => 0, run: async () => { throw new FinalJobError('cannot ever work'); } } });
  await waitFor('the job to be given up', async () => ((await row(id))?.state === 'failed' ? true : undefined));
  expect(await row(id)).toMatchObject({ attempts: 1, last_error: 'cannot ever work' });
});

test('a job whose process died during its last attempt is given up, not run again', async () => {
  const longAgo = new Date(Date.now() - 60_000);
  const id = await enqueueJob(db, { kind: 'k', payload: {}, maxAttempts: 1 }, longAgo);
  expect((await claimJob(db, 'crashed', ['k'], 1000, longAgo))?.id).toBe(id);
  expect(await claimJob(db, 'B', ['k'], 1000)).toBeUndefined();
  const failed = await failAbandoned(db, ['k']);
  expect(failed.map((j) => j.id)).toEqual([id]);
  expect(await row(id)).toMatchObject({ state: 'failed', attempts: 1, last_error: 'its process stopped during the last attempt' });
});

test('stop() claims nothing more and waits for the job in flight', async () => {
  const first = await enqueueJob(db, { kind: 'k', payload: { n: 1 }, maxAttempts: 5 });
  const started = gate();
  const release = gate();
  const ran: string[] = [];
  const worker = start(
    {
      k: {
        retryDelayMs: () => 0,
        run: async (job) => {
          ran.push(job.id);
          started.open();
          await release.opened;
        },
      },
    },
    { concurrency: 1 },
  );
  await started.opened;
  let stopped = false;
  const stopping = worker.stop().then(() => (stopped = true));
  const second = await enqueueJob(db, { kind: 'k', payload: { n: 2 }, maxAttempts: 5 });
  worker.wake();
  // Let every pending callback and timer of the worker run: stop() still waits.
  for (let i = 0; i < 20; i++) await new Promise((r) => setTimeout(r, 5));
  expect(stopped).toBe(false);
  expect(await row(first)).toMatchObject({ state: 'running' });
  release.open();
  await stopping;
  expect(stopped).toBe(true);
  expect(await row(first)).toBeUndefined(); // settled before stop() returned
  expect(ran).toEqual([first]);
  expect(await row(second)).toMatchObject({ state: 'queued', attempts: 0 });
});

test("stop() aborts the jobs' signal: a job that stops early with InterruptedJobError is queued again, its attempt not counted; one that fails otherwise is retried as usual", async () => {
  const [long, plain] = [await enqueueJob(db, { kind: 'long', payload: {}, maxAttempts: 3 }), await enqueueJob(db, { kind: 'plain', payload: {}, maxAttempts: 3 })];
  let started = 0;
  const w = start(
    {
      long: {
        retryDelayMs: () => 60_000,
        run: (_job, signal) =>
          new Promise<void>((_ok, fail) => {
            started++;
            signal.addEventListener('abort', () => fail(new InterruptedJobError('stopped')), { once: true });
          }),
      },
      plain: {
        retryDelayMs: () => 60_000,
        run: (_job, signal) =>
          new Promise<void>((_ok, fail) => {
            started++;
            signal.addEventListener('abort', () => fail(new Error('broke on the way down')), { once: true });
          }),
      },
    },
    { concurrency: 2 },
  );
  await waitFor('both jobs to run', () => (started === 2 ? true : undefined));
  await w.stop();
  expect(await row(long)).toMatchObject({ state: 'queued', attempts: 0, lease_owner: null, last_error: expect.stringMatching(/interrupted by a shutdown/) });
  expect(await row(plain)).toMatchObject({ state: 'queued', attempts: 1, last_error: 'broke on the way down' });
  expect(Date.parse((await row(long))!.run_after)).toBeLessThanOrEqual(Date.now());
});

test('stop(graceMs) lets a job in flight finish within the grace, its signal untouched', async () => {
  const id = await enqueueJob(db, { kind: 'k', payload: {}, maxAttempts: 3 });
  const started = gate();
  const release = gate();
  let aborted = false;
  const w = start({
    k: {
      retryDelayMs: () => 60_000,
      run: async (_job, signal) => {
        started.open();
        await release.opened;
        aborted = signal.aborted;
      },
    },
  });
  await started.opened;
  const stopping = w.stop(30_000);
  setTimeout(release.open, 50);
  await stopping;
  expect(aborted).toBe(false);
  expect(await row(id)).toBeUndefined(); // completed
});

test('stop(graceMs): a job that ignores its signal and outlasts the grace is handed back uncounted, for another worker at once; its late end changes nothing', async () => {
  const id = await enqueueJob(db, { kind: 'k', payload: {}, maxAttempts: 3 });
  const started = gate();
  const release = gate();
  let ended = false;
  const first = start(
    {
      k: {
        retryDelayMs: () => 60_000,
        run: async () => {
          started.open();
          await release.opened;
          ended = true;
        },
      },
    },
    { leaseMs: 600_000 },
  );
  await started.opened;
  await first.stop(100);
  expect(ended).toBe(false);
  expect(await row(id)).toMatchObject({ state: 'queued', attempts: 0, lease_owner: null, lease_until: null, last_error: 'handed back by a shutdown' });
  release.open();
  await waitFor('the late end to settle', () => (ended ? true : undefined));
  expect(await row(id)).toMatchObject({ state: 'queued', attempts: 0 });

  const ran: string[] = [];
  start({ k: { retryDelayMs: () => 60_000, run: async (job) => void ran.push(job.id) } }, { leaseMs: 600_000 });
  await waitFor('another worker to run it', async () => ((await row(id)) === undefined ? true : undefined));
  expect(ran).toEqual([id]);
});

test('claiming searches the indexes: no scan and no sort, however many jobs wait', async () => {
  const sqlite = new Database(':memory:');
  migrate(sqlite);
  const plans: string[] = [];
  const logged = new Kysely<Schema>({
    dialect: new SqliteDialect({ database: sqlite }),
    log: (e) => {
      if (e.level !== 'query') return;
      const rows = sqlite.prepare(`EXPLAIN QUERY PLAN ${e.query.sql}`).all(...(e.query.parameters as unknown[])) as { detail: string }[];
      plans.push(rows.map((r) => r.detail).join('\n'));
    },
  });
  await claimJob(logged, 'me', ['k'], 1000);
  expect(plans).toHaveLength(2);
  expect(plans[0]).toMatch(/SEARCH jobs USING INDEX jobs_lease \(state=\? AND lease_until<\?\)/);
  expect(plans[1]).toMatch(/SEARCH jobs USING INDEX jobs_due \(state=\? AND run_after<\?\)/);
  for (const p of plans) expect(p).not.toMatch(/SCAN|TEMP B-TREE/);
  await logged.destroy();
});
