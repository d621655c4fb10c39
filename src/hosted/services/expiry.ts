// Moving Packages to `expired`: their objects are deleted, their name and
// recipients kept. Used by DELETE, by the sweeper at expiry time, and by the
// sweeper for Packages left unfinished.
import type { HostedContext } from '../context.js';
import type { Expression, ExpressionBuilder, SqlBool } from 'kysely';
import type { Database, FilesTable, PackagesTable } from '../db/schema.js';
import { abortQuietly } from './files.js';
import { nowIso } from '../ids.js';
import { raisePackageStates } from './events.js';

/**
 * Marks the Package expired first, so no new download starts, then deletes its
 * objects. `reason` is what its package.expired event says.
 */
export async function expirePackage(ctx: HostedContext, pkg: Pick<PackagesTable, 'id' | 'state'>, reason: 'deleted' | 'expired' = 'expired'): Promise<void> {
  if (pkg.state === 'new' || pkg.state === 'finalized') {
    await ctx.db.transaction().execute(async (trx) => {
      const r = await trx
        .updateTable('packages')
        .set({ state: 'expired', custom_metadata_id: null, updated_at: nowIso() })
        .where('id', '=', pkg.id)
        .where('state', 'in', ['new', 'finalized'])
        .executeTakeFirst();
      if (r.numUpdatedRows > 0n) await raisePackageStates(ctx, trx, 'package.expired', [pkg.id], reason);
    });
  }
  // "files and custom metadata deleted": the form response goes with the files.
  await ctx.db.deleteFrom('form_responses').where('package_id', '=', pkg.id).execute();
  await deletePackageObjects(ctx, pkg.id);
}

/** Rows read at a time by deletePackageObjects, and objects removed in one DeleteObjects request. */
const DELETE_PAGE = 1000;

type Place = [state: FilesTable['state'], path: string, kind: FilesTable['kind'], name: string, id: string];

/**
 * Idempotent: retried by the sweeper until every object is gone. A Package of a
 * million files is read a page at a time (in the files_listing index's order, so
 * each page starts where the last stopped), and each page's objects go in one
 * DeleteObjects request; an unfinished upload is aborted first, one by one.
 */
export async function deletePackageObjects(ctx: HostedContext, packageId: string): Promise<void> {
  let after: Place | undefined;
  for (;;) {
    let q = ctx.db.selectFrom('files').select(['id', 'object_key', 'upload_id', 'state', 'path', 'kind', 'name']).where('package_id', '=', packageId);
    if (after) q = q.where(({ eb, refTuple, tuple }) => eb(refTuple('state', 'path', 'kind', 'name', 'id'), '>', tuple(...after!)));
    const rows = await q.orderBy('state').orderBy('path').orderBy('kind').orderBy('name').orderBy('id').limit(DELETE_PAGE).execute();
    // What an unfinished upload left (abortQuietly knows each kind); then the objects, which may exist either way.
    for (const f of rows) if (f.state === 'pending' && f.object_key) await abortQuietly(ctx, f);
    await ctx.storage.removeMany(rows.filter((f) => f.object_key !== null).map((f) => f.object_key!));
    if (rows.length < DELETE_PAGE) break;
    const last = rows[rows.length - 1]!;
    after = [last.state, last.path, last.kind, last.name, last.id];
  }
  await ctx.db.updateTable('packages').set({ objects_deleted: 1 }).where('id', '=', packageId).execute();
}

/** Expires finalized Packages whose time has come and finishes deletes left half-done. */
export async function sweepExpired(ctx: HostedContext, now = nowIso()): Promise<number> {
  const due = await ctx.db
    .selectFrom('packages')
    .select(['id', 'state'])
    .where((eb) =>
      eb.or([
        eb.and([eb('state', '=', 'finalized'), eb('expiry', 'is not', null), eb('expiry', '<=', now)]),
        eb.and([eb('state', 'in', ['expired', 'archived']), eb('objects_deleted', '=', 0)]),
      ]),
    )
    .limit(100)
    .execute();
  for (const pkg of due) {
    try {
      await expirePackage(ctx, pkg);
    } catch (err) {
      ctx.log.warn({ err, packageId: pkg.id }, 'expiring package failed; will retry');
    }
  }
  return due.length;
}

/**
 * Expires Packages left unfinished: still new, with no activity for `ttlMs` (the
 * Package's own updated_at and its files', which registrations, file finalizes
 * and blueprint requests move). An abandoned upload, or one whose files were
 * refused, would otherwise keep its parts and objects for ever. The state moves
 * only if no activity came in meanwhile; then the objects go as for any expiry.
 */
export async function sweepUnfinished(ctx: HostedContext, ttlMs: number, now = nowIso()): Promise<number> {
  if (ttlMs <= 0) return 0;
  const idle = idleSince(new Date(Date.parse(now) - ttlMs).toISOString());
  const due = await ctx.db.selectFrom('packages').select('id').where(idle).limit(100).execute();
  let swept = 0;
  for (const { id } of due) {
    try {
      const moved = await ctx.db.transaction().execute(async (trx) => {
        const r = await trx.updateTable('packages').set({ state: 'expired', custom_metadata_id: null, updated_at: nowIso() }).where('id', '=', id).where(idle).executeTakeFirst();
        if (r.numUpdatedRows === 0n) return false;
        await raisePackageStates(ctx, trx, 'package.expired', [id], 'expired');
        return true;
      });
      if (!moved) continue;
      swept++;
      await expirePackage(ctx, { id, state: 'expired' });
    } catch (err) {
      ctx.log.warn({ err, packageId: id }, 'sweeping an unfinished package failed; will retry');
    }
  }
  return swept;
}

/** A new Package with no change of its own or of any of its files since `cutoff`. */
const idleSince =
  (cutoff: string) =>
  (eb: ExpressionBuilder<Database, 'packages'>): Expression<SqlBool> =>
    eb.and([
      eb('packages.state', '=', 'new'),
      eb('packages.updated_at', '<', cutoff),
      eb.not(eb.exists(eb.selectFrom('files').select('files.id').whereRef('files.package_id', '=', 'packages.id').where('files.updated_at', '>=', cutoff))),
    ]);
