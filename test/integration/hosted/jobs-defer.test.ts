// A job that cannot run yet through no fault of its own (a storage gateway that
// is not connected) is deferred: queued again for later, its attempt not
// counted, however many times that happens, and it runs at once when something
// sets its run_after to now and wakes the worker.
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import pino from 'pino';
import { afterAll, beforeAll, expect, test } from 'vitest';
import type { Db } from '../../../src/hosted/db/open.js';
import { openTestDatabase } from '../../helpers/hosted.js';
import { enqueueJob } from '../../../src/hosted/jobs/queue.js';
import { DeferredJobError, startJobWorker, type JobWorker } from '../../../src/hosted/jobs/worker.js';
import { waitFor } from '../../helpers/downloads.js';

let dir: string;
let db: Db;
let closeDb: () => Promise<void>;
let worker: JobWorker | undefined;

beforeAll(async () => {
  dir = await fs.mkdtemp(path.join(os.tmpdir(), 'ferry-jobs-defer-'));
  ({ db, close: closeDb } = await openTestDatabase(dir));
});
afterAll(async () => {
  await worker?.stop();
  await closeDb?.();
  await fs.rm(dir, { recursive: true, force: true });
});

test('a deferred job is queued again uncounted, past its max attempts, and runs when woken', async () => {
  let ready = false;
  const runs: number[] = [];
  worker = startJobWorker(
    db,
    pino({ level: 'silent' }),
    {
      k: {
        retryDelayMs: () => 10,
        async run(job) {
          runs.push(job.attempts);
          if (!ready) throw new DeferredJobError('waiting for its gateway', 60_000);
        },
      },
    },
    { pollMs: 20, leaseMs: 5000, concurrency: 1 },
  );
  const id = await enqueueJob(db, { kind: 'k', payload: {}, maxAttempts: 2 }, new Date());
  worker.wake();
  const deferred = await waitFor('the job deferred', async () => {
    const r = await db.selectFrom('jobs').selectAll().where('id', '=', id).executeTakeFirst();
    return r?.state === 'queued' && r.last_error === 'waiting for its gateway' ? r : undefined;
  });
  expect(deferred.attempts).toBe(0);
  expect(Date.parse(deferred.run_after)).toBeGreaterThan(Date.now() + 30_000);
  // Woken three times while it still cannot run: never counted, never given up.
  for (let i = 0; i < 3; i++) {
    const before = runs.length;
    await db.updateTable('jobs').set({ run_after: new Date().toISOString() }).where('id', '=', id).execute();
    worker.wake();
    await waitFor('another run', () => (runs.length > before ? true : undefined));
    await waitFor('deferred again', async () => ((await db.selectFrom('jobs').select('state').where('id', '=', id).executeTakeFirst())?.state === 'queued' ? true : undefined));
  }
  expect(runs).toEqual([1, 1, 1, 1]);
  ready = true;
  await db.updateTable('jobs').set({ run_after: new Date().toISOString() }).where('id', '=', id).execute();
  worker.wake();
  await waitFor('the job done', async () => ((await db.selectFrom('jobs').select('id').where('id', '=', id).executeTakeFirst()) === undefined ? true : undefined));
  expect(runs).toEqual([1, 1, 1, 1, 1]);
});
