// The wire Packages of a list page: their tags and Teamspaces read in one query
// each, not one per Package (a round trip each on PostgreSQL).
import type { HostedContext } from '../context.js';
import type { PackagesTable } from '../db/schema.js';
import type { Package } from '../../api/hosted/packages.js';
import type { TagSummary } from '../../api/hosted/tags.js';
import { packageDto } from './packages.js';

const idsOf = (values: (string | null)[]) => [...new Set(values.filter((v): v is string => v !== null))];

export async function pageRecords(ctx: HostedContext, rows: PackagesTable[]): Promise<Package[]> {
  const tagIds = idsOf(rows.map((r) => r.tag_id));
  const spaceIds = idsOf(rows.map((r) => r.teamspace_id));
  const tags = new Map<string, TagSummary>();
  const spaces = new Map<string, string>();
  if (tagIds.length) {
    for (const t of await ctx.db.selectFrom('tags').select(['id', 'name']).where('id', 'in', tagIds).execute()) tags.set(t.id, t);
  }
  if (spaceIds.length) {
    for (const t of await ctx.db.selectFrom('teamspaces').select(['id', 'name']).where('id', 'in', spaceIds).execute()) spaces.set(t.id, t.name);
  }
  return Promise.all(rows.map((r) => packageDto(ctx, r, r.tag_id ? (tags.get(r.tag_id) ?? null) : null, 'full', spaces)));
}
