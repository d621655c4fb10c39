// The paged list of one Portal's Packages (/v1.1/portals/{portal_id}/packages):
// the Team list's filters and sorts, narrowed to the Portal, plus Ferry's
// finalized_at_start filter and finalized_at sort.
import type { HostedContext } from '../context.js';
import type { PortalsTable } from '../db/schema.js';
import type { PortalPackageListPage, PortalPackageListQuery } from '../../api/hosted/portalPackages.js';
import type { PackageListQuery } from '../../api/hosted/packages.js';
import { applySort, matchingPackages } from './packageList.js';
import { pageRecords } from './packageRecords.js';
import { visiblePackages, type Viewer } from './visibility.js';

/** Narrowed to what the viewer may read: a private Portal lists nothing to a member outside its Teamspace. */
export async function listPortalPackages(ctx: HostedContext, viewer: Viewer, portal: PortalsTable, query: PortalPackageListQuery): Promise<PortalPackageListPage> {
  const { page, limit } = query;
  const { finalized_at_start: finalizedStart, sort, ...rest } = query;
  const matching = await matchingPackages(ctx.db, portal.team_id, rest as PackageListQuery);
  const narrow = (q: typeof matching.rows) => {
    q = q.where('portal_id', '=', portal.id).where(visiblePackages(viewer));
    return finalizedStart === undefined ? q : q.where('finalized_at', '>=', new Date(finalizedStart).toISOString());
  };
  const base = narrow(matching.rows);
  const { n } = await narrow(matching.count).select((eb) => eb.fn.countAll<number | string>().as('n')).executeTakeFirstOrThrow();
  const field = sort?.replace(/^-/, '');
  const dir = sort?.startsWith('-') ? 'desc' : 'asc';
  // By finalization: Packages not finalized (null) last either way, the id breaking ties so pages never overlap.
  const ordered =
    field === 'finalized_at'
      ? base
          .selectAll()
          .orderBy((eb) => eb.case().when('finalized_at', 'is', null).then(1).else(0).end(), 'asc')
          .orderBy('finalized_at', dir)
          .orderBy('id', dir)
      : applySort(base.selectAll(), sort);
  const rows = await ordered.limit(limit).offset((page - 1) * limit).execute();
  const records = (await pageRecords(ctx, rows)).map((p, i) => ({ ...p, portal_id: portal.id, finalized_at: rows[i]!.finalized_at }));
  return { metadata: { total: Number(n), page, limit }, records };
}
