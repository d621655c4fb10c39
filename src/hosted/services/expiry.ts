// Moving Packages to `expired`: their objects are deleted, their name and
// recipients kept. Used by DELETE and by the sweeper at expiry time.
import type { HostedContext } from '../context.js';
import type { PackagesTable } from '../db/schema.js';
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

/** Idempotent: retried by the sweeper until every object is gone. */
export async function deletePackageObjects(ctx: HostedContext, packageId: string): Promise<void> {
  const files = await ctx.db
    .selectFrom('files')
    .select(['id', 'object_key', 'upload_id', 'state'])
    .where('package_id', '=', packageId)
    .where('object_key', 'is not', null)
    .execute();
  for (const f of files) {
    // What an unfinished upload left (abortQuietly knows each kind); then the object, which may exist either way.
    if (f.state === 'pending') await abortQuietly(ctx, f);
    await ctx.storage.remove(f.object_key!);
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
