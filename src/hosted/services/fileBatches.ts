// Ferry's batch routes: several registrations or file finalizes in one request,
// each answered as its own request would have been (docs/hosted-api-notes/
// uploads-downloads.md). Their rows are written in one transaction.
import { sql } from 'kysely';
import type { HostedContext } from '../context.js';
import type { FilesTable } from '../db/schema.js';
import type { Db } from '../db/open.js';
import type { FileOutcome, FinalizeFilesBody, RegisterFilesBody, RegisterOutcome } from '../../api/hosted/files.js';
import { HttpError } from '../errors.js';
import { abortQuietly, answer, insert, prepare, type Pkg } from './files.js';
import { completeFile, holdPackage, markFinalized, notMarked } from './fileFinalize.js';

type Refusal = { status: number; code: string; message: string };

/**
 * One entry of a batch: what `run` answers, or its refusal as the error handler
 * would have sent it (unexpected failures are logged and answered as 500).
 */
async function orRefusal<T>(ctx: HostedContext, what: string, run: () => Promise<T>): Promise<T | Refusal> {
  try {
    return await run();
  } catch (err) {
    if (err instanceof HttpError) return { status: err.status, code: err.code, message: err.message };
    ctx.log.error({ err, what }, 'unexpected error in a batch');
    return { status: 500, code: 'internal', message: 'internal error' };
  }
}

const isRefusal = (x: unknown): x is Refusal => typeof x === 'object' && x !== null && 'code' in x && 'status' in x;

/** `run` in a savepoint of `trx`: when it throws, only its own writes are undone. */
async function inSavepoint<T>(trx: Db, run: () => Promise<T>): Promise<T> {
  await sql`savepoint entry`.execute(trx);
  try {
    const out = await run();
    await sql`release entry`.execute(trx);
    return out;
  } catch (err) {
    await sql`rollback to entry`.execute(trx);
    await sql`release entry`.execute(trx);
    throw err;
  }
}

/**
 * Registers each entry as registerFile does; one entry's refusal is its outcome
 * and does not stop the others. The entries are checked and signed side by side,
 * and their rows go in as one transaction with a savepoint each: one commit
 * instead of one per entry (docs/benchmarks.md).
 */
export async function registerFiles(ctx: HostedContext, pkg: Pkg, files: RegisterFilesBody['files']): Promise<RegisterOutcome[]> {
  const prepared = await Promise.all(files.map(({ count, single, ...body }) => orRefusal(ctx, body.name, () => prepare(ctx, pkg, body, { count, single }))));
  const inserted = await ctx.db
    .transaction()
    .execute(async (trx) => {
      const out: (FilesTable[] | Refusal)[] = [];
      for (const p of prepared) out.push(isRefusal(p) ? p : await orRefusal(ctx, p.body.name, () => inSavepoint(trx, () => insert(ctx, trx, pkg, p))));
      return out;
    })
    .catch(async (err: unknown) => {
      for (const p of prepared) if (!isRefusal(p)) await abortQuietly(ctx, p.row);
      throw err;
    });
  return Promise.all(
    prepared.map(async (p, i): Promise<RegisterOutcome> => {
      if (isRefusal(p)) return p;
      const replaced = inserted[i]!;
      if (!isRefusal(replaced)) return orRefusal(ctx, p.body.name, async () => ({ status: 201, registration: await answer(ctx, p, replaced) }));
      await abortQuietly(ctx, p.row);
      return replaced;
    }),
  );
}

/**
 * Finalizes each file as finalizeFile does; one file's refusal is its outcome and
 * does not stop the others. The uploads are completed side by side, and the rows
 * marked in one transaction.
 */
export async function finalizeFiles(ctx: HostedContext, pkg: Pkg, files: FinalizeFilesBody['files']): Promise<FileOutcome[]> {
  const completed = await Promise.all(files.map((f) => orRefusal(ctx, f.file_id, () => completeFile(ctx, pkg, f.file_id, f))));
  // Completed files no longer pending: finalized by a concurrent request, or dropped by the Package's finalize.
  const gone = await ctx.db.transaction().execute(async (trx) => {
    const out = new Set<FilesTable>();
    await holdPackage(trx, pkg);
    for (const [i, f] of completed.entries()) if (f && !isRefusal(f) && !(await markFinalized(ctx, trx, pkg, f, files[i]!))) out.add(f);
    return out;
  });
  if (ctx.config.clamd) ctx.jobs.notify();
  return Promise.all(
    files.map(async ({ file_id }, i) => {
      const f = completed[i];
      if (isRefusal(f)) return { file_id, ...f };
      const outcome = await orRefusal(ctx, file_id, async () => {
        if (f && gone.has(f)) await notMarked(ctx, f, files[i]!);
        return { status: 204 };
      });
      return { file_id, ...outcome };
    }),
  );
}
