// Tags of a Team, and the rules by which a tag reference on a Package or
// Portal picks (or creates) a tag.
import type { Kysely } from 'kysely';
import type { HostedContext } from '../context.js';
import type { Database, TagsTable } from '../db/schema.js';
import type { Tag, TagRef } from '../../api/hosted/tags.js';
import { conflict, notFound } from '../errors.js';
import { newId, nowIso } from '../ids.js';

export const tagDto = (row: TagsTable): Tag => ({
  id: row.id,
  name: row.name,
  team_id: row.team_id,
  active: row.active === 1,
  created_at: row.created_at,
  updated_at: row.updated_at,
});

export async function listTags(ctx: HostedContext, teamId: string): Promise<Tag[]> {
  const rows = await ctx.db.selectFrom('tags').selectAll().where('team_id', '=', teamId).orderBy('name').orderBy('id').execute();
  return rows.map(tagDto);
}

export async function createTag(ctx: HostedContext, teamId: string, name: string): Promise<Tag> {
  const now = nowIso();
  const row: TagsTable = { id: newId('tag'), team_id: teamId, name, active: 1, created_at: now, updated_at: now };
  const inserted = await ctx.db
    .insertInto('tags')
    .values(row)
    .onConflict((oc) => oc.columns(['team_id', 'name']).doNothing())
    .executeTakeFirst();
  if (Number(inserted.numInsertedOrUpdatedRows ?? 0n) === 0) throw conflict(`a tag named "${name}" already exists`, 'tag_exists');
  return tagDto(row);
}

/** Deletes a tag of a Team the caller belongs to; Packages carrying it lose it. */
export async function deleteTag(ctx: HostedContext, tagId: string): Promise<void> {
  await ctx.db.transaction().execute(async (trx) => {
    await trx.updateTable('packages').set({ tag_id: null }).where('tag_id', '=', tagId).execute();
    const res = await trx.deleteFrom('tags').where('id', '=', tagId).executeTakeFirst();
    if (Number(res.numDeletedRows) === 0) throw notFound('tag');
  });
}

export async function findTag(ctx: HostedContext, tagId: string) {
  return ctx.db.selectFrom('tags').selectAll().where('id', '=', tagId).executeTakeFirst();
}

/**
 * The spec's three rules: a known id of the Team names the tag; otherwise a name
 * names it (created when missing); an unknown id alone means no tag and no error.
 * `db` lets a caller run this inside its own transaction.
 */
export async function resolveTagRef(
  ctx: HostedContext,
  teamId: string,
  ref: TagRef | null | undefined,
  db: Kysely<Database> = ctx.db,
): Promise<TagsTable | null> {
  if (!ref) return null;
  if (ref.id) {
    const byId = await db.selectFrom('tags').selectAll().where('id', '=', ref.id).where('team_id', '=', teamId).executeTakeFirst();
    if (byId) return byId;
  }
  if (!ref.name) return null;
  const byName = () => db.selectFrom('tags').selectAll().where('team_id', '=', teamId).where('name', '=', ref.name!).executeTakeFirst();
  const found = await byName();
  if (found) return found;
  const now = nowIso();
  // A concurrent request may create the same name: ignore the clash and read the winner.
  await db
    .insertInto('tags')
    .values({ id: newId('tag'), team_id: teamId, name: ref.name, active: 1, created_at: now, updated_at: now })
    .onConflict((oc) => oc.columns(['team_id', 'name']).doNothing())
    .execute();
  return (await byName()) ?? null;
}
