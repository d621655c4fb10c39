// State changes of a Package after creation: expiry, delete (-> expired),
// archive and unarchive, one at a time or in bulk by expiry range.
import type { HostedContext } from '../context.js';
import type { PackageState, PackagesTable } from '../db/schema.js';
import type { BulkArchiveBody, ExpiryBody, Package } from '../../api/hosted/packages.js';
import { badRequest, conflict, forbidden } from '../errors.js';
import { nowIso } from '../ids.js';
import { expirePackage } from './expiry.js';
import { getPackageRow, packageDto } from './packages.js';
import { raisePackageStates } from './events.js';

const LIVE: PackageState[] = ['new', 'finalized'];

/** Sets a custom expiry (or unlimited storage) on a new or finalized Package. */
export async function setPackageExpiry(ctx: HostedContext, pkg: PackagesTable, body: ExpiryBody): Promise<Package> {
  const unlimited = body.unlimited_storage === true;
  let expiry: string | null = null;
  if (!unlimited) {
    if (!body.expiry) throw badRequest('expiry is required unless unlimited_storage is true');
    expiry = new Date(body.expiry).toISOString();
    if (expiry <= nowIso()) throw badRequest('expiry must be in the future');
  }
  if (!LIVE.includes(pkg.state)) throw conflict(`the expiry of a ${pkg.state} package cannot change`, 'wrong_state');
  const team = await ctx.db.selectFrom('teams').select('custom_expiry_enabled').where('id', '=', pkg.team_id).executeTakeFirstOrThrow();
  if (!team.custom_expiry_enabled) throw forbidden('custom expiry is disabled for this Team');
  const res = await ctx.db
    .updateTable('packages')
    .set({ expiry, unlimited_storage: unlimited ? 1 : 0, custom_expiry: 1, updated_at: nowIso() })
    .where('id', '=', pkg.id)
    .where('state', 'in', LIVE)
    .executeTakeFirst();
  if (Number(res.numUpdatedRows) === 0) throw conflict('the package changed state; retry', 'wrong_state');
  return packageDto(ctx, await getPackageRow(ctx, pkg.id));
}

/**
 * DELETE: a new or finalized Package becomes expired now (its objects are deleted).
 * Its expiry is moved to the moment of deletion so that range-based archiving finds it.
 */
export async function deletePackage(ctx: HostedContext, pkg: PackagesTable): Promise<void> {
  if (!LIVE.includes(pkg.state)) throw conflict(`the package is already ${pkg.state}`, 'wrong_state');
  const now = nowIso();
  await ctx.db
    .updateTable('packages')
    .set({ expiry: now })
    .where('id', '=', pkg.id)
    .where('state', 'in', LIVE)
    .where((eb) => eb.or([eb('expiry', 'is', null), eb('expiry', '>', now)]))
    .execute();
  await expirePackage(ctx, pkg, 'deleted');
}

const MOVED = { archived: 'package.archived', expired: 'package.unarchived' } as const;

async function move(ctx: HostedContext, pkg: PackagesTable, from: PackageState, to: 'archived' | 'expired'): Promise<void> {
  await ctx.db.transaction().execute(async (trx) => {
    const res = await trx
      .updateTable('packages')
      .set({ state: to, updated_at: nowIso() })
      .where('id', '=', pkg.id)
      .where('state', '=', from)
      .executeTakeFirst();
    if (Number(res.numUpdatedRows) === 0) throw conflict(`only ${from} packages can become ${to}`, 'wrong_state');
    await raisePackageStates(ctx, trx, MOVED[to], [pkg.id]);
  });
}

export const archivePackage = (ctx: HostedContext, pkg: PackagesTable) => move(ctx, pkg, 'expired', 'archived');
export const unarchivePackage = (ctx: HostedContext, pkg: PackagesTable) => move(ctx, pkg, 'archived', 'expired');

/**
 * Bulk (un)archive of a Team's Packages whose expiry lies in [start, end]:
 * `sent` are the Team's own Packages, `inbox` those received through Portals.
 */
export async function bulkArchive(
  ctx: HostedContext,
  teamId: string,
  box: 'sent' | 'inbox',
  direction: 'archive' | 'unarchive',
  range: BulkArchiveBody,
): Promise<number> {
  const start = new Date(range.expiry_start).toISOString();
  const end = new Date(range.expiry_end).toISOString();
  if (start > end) throw badRequest('expiry_start must not be after expiry_end');
  const [from, to]: [PackageState, 'archived' | 'expired'] = direction === 'archive' ? ['expired', 'archived'] : ['archived', 'expired'];
  return ctx.db.transaction().execute(async (trx) => {
    // The ids first, for their events; the update then takes only those still in `from`.
    const ids = (
      await trx
        .selectFrom('packages')
        .select('id')
        .where('team_id', '=', teamId)
        .where('state', '=', from)
        .where('portal_id', box === 'sent' ? 'is' : 'is not', null)
        .where('expiry', '>=', start)
        .where('expiry', '<=', end)
        .execute()
    ).map((r) => r.id);
    let count = 0;
    for (let i = 0; i < ids.length; i += 500) {
      const res = await trx
        .updateTable('packages')
        .set({ state: to, updated_at: nowIso() })
        .where('id', 'in', ids.slice(i, i + 500))
        .where('state', '=', from)
        .executeTakeFirst();
      count += Number(res.numUpdatedRows);
    }
    await raisePackageStates(ctx, trx, MOVED[to], ids);
    return count;
  });
}
