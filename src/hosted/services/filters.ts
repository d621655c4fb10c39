// Filters of a Team: create, get, update (rules replaced whole), delete, list,
// and the checks every set of rules passes on write.
import type { HostedContext } from '../context.js';
import type { FiltersTable, Role } from '../db/schema.js';
import type { CreateFilterBody, Filter, FilterRule, UpdateFilterBody } from '../../api/hosted/filters.js';
import type { UserPrincipal } from '../auth/credentials.js';
import { requireRole, teamRole } from '../auth/credentials.js';
import { badRequest, conflict, notFound } from '../errors.js';
import { newId, nowIso } from '../ids.js';
import { patternProblem } from '../../api/hosted/patterns.js';

function parseRules(json: string): FilterRule[] {
  try {
    const v: unknown = JSON.parse(json);
    return Array.isArray(v) ? (v as FilterRule[]) : [];
  } catch {
    return [];
  }
}

export const filterDto = (row: FiltersTable): Filter => ({
  id: row.id,
  name: row.name,
  rules: parseRules(row.rules),
  created_at: row.created_at,
  updated_at: row.updated_at,
});

/**
 * The schema has checked shapes and counts (1 to 20 rules); here: one rule per
 * criterion, and every value a pattern RE2 accepts. Values are de-duplicated.
 */
export function checkRules(rules: FilterRule[]): FilterRule[] {
  const seen = new Set<string>();
  rules.forEach((rule, i) => {
    if (seen.has(rule.criterion)) throw badRequest(`rules[${i}]: each rule needs its own criterion; ${rule.criterion} is used twice`, 'duplicate_criterion');
    seen.add(rule.criterion);
    rule.values.forEach((v, j) => {
      const problem = patternProblem(v);
      if (problem) throw badRequest(`rules[${i}].values[${j}] is not a usable regular expression: ${problem}`, 'invalid_regex');
    });
  });
  return rules.map((r) => ({ action: r.action, criterion: r.criterion, operator: r.operator, values: [...new Set(r.values)] }));
}

/** The filter when the caller belongs to its Team (404 otherwise), checked against `allowed` roles. */
export async function memberFilter(ctx: HostedContext, who: UserPrincipal, filterId: string, allowed?: Role[]): Promise<FiltersTable> {
  const row = await ctx.db.selectFrom('filters').selectAll().where('id', '=', filterId).executeTakeFirst();
  if (!row) throw notFound('filter');
  const role = await teamRole(ctx, who, row.team_id, 'filter');
  if (allowed) requireRole(role, allowed);
  return row;
}

export async function createFilter(ctx: HostedContext, teamId: string, body: CreateFilterBody): Promise<Filter> {
  const rules = checkRules(body.rules);
  const now = nowIso();
  const row: FiltersTable = { id: newId('flt'), team_id: teamId, name: body.name, rules: JSON.stringify(rules), created_at: now, updated_at: now };
  await ctx.db.insertInto('filters').values(row).execute();
  return filterDto(row);
}

export async function updateFilter(ctx: HostedContext, filter: FiltersTable, body: UpdateFilterBody): Promise<Filter> {
  const rules = checkRules(body.rules);
  const set = { name: body.name ?? filter.name, rules: JSON.stringify(rules), updated_at: nowIso() };
  const res = await ctx.db.updateTable('filters').set(set).where('id', '=', filter.id).executeTakeFirst();
  if (res.numUpdatedRows === 0n) throw notFound('filter');
  return filterDto({ ...filter, ...set });
}

/**
 * 409 filter_in_use while a Portal's cloud connection uses it: dropping it would
 * silently widen what goes to that bucket. Transfers already raised keep the
 * rules they were raised with.
 */
export async function deleteFilter(ctx: HostedContext, filterId: string): Promise<void> {
  await ctx.db.transaction().execute(async (trx) => {
    const users = await trx.selectFrom('portal_cloud_connections').select('portal_id').distinct().where('filter_id', '=', filterId).orderBy('portal_id').limit(10).execute();
    if (users.length > 0) {
      throw conflict(`the filter is applied to cloud connections of Portal ${users.map((u) => u.portal_id).join(', ')}; remove it there first`, 'filter_in_use');
    }
    const res = await trx.deleteFrom('filters').where('id', '=', filterId).executeTakeFirst();
    if (res.numDeletedRows === 0n) throw notFound('filter');
  });
}

export async function listFilters(ctx: HostedContext, teamId: string): Promise<Filter[]> {
  const rows = await ctx.db.selectFrom('filters').selectAll().where('team_id', '=', teamId).orderBy('created_at').orderBy('id').execute();
  return rows.map(filterDto);
}
