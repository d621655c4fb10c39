// metadata.total of the Team Package list without counting the Team's Packages:
// for a viewer who sees every Package and a query that filters on status only
// (the list as it opens), the total is a sum over package_counts, which triggers
// on packages keep (migration 16). Any other query counts its matches.
import type { HostedContext } from '../context.js';
import type { Db } from '../db/open.js';
import type { PackageListQuery } from '../../api/hosted/packages.js';
import type { PackageState } from '../db/schema.js';
import { seesEverything, type Viewer } from './visibility.js';

/** Whether the query narrows the Team's Packages by anything but status. */
function filtersBeyondStatus(q: PackageListQuery): boolean {
  return Boolean(
    q.name || q.sender || q.tags || q.teamspaces || q.created_at_start || q.created_at_end ||
      q.expiry_start || q.expiry_end || q.extra_storage !== undefined,
  );
}

/** How many Packages the Team has in these states, from package_counts. */
export async function teamTotal(db: Db, teamId: string, states: PackageState[]): Promise<number> {
  const { n } = await db
    .selectFrom('package_counts')
    .select((eb) => eb.fn.coalesce(eb.fn.sum<number | string>('n'), eb.lit(0)).as('n'))
    .where('team_id', '=', teamId)
    .where('state', 'in', states)
    .executeTakeFirstOrThrow();
  return Number(n);
}

/** The total from package_counts, or undefined when the query's matches must be counted. */
export async function keptTotal(ctx: HostedContext, viewer: Viewer, query: PackageListQuery, states: PackageState[]): Promise<number | undefined> {
  if (!seesEverything(viewer) || filtersBeyondStatus(query)) return undefined;
  return teamTotal(ctx.db, viewer.teamId, states);
}
