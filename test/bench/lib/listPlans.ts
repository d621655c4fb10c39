// The list routes' queries as the service builds them (its own applyFilters,
// applySort and visiblePackages, for an Owner), and SQLite's plan for each:
// whether it walks an index in order or scans the Team's Packages and sorts them.
import SQLite from 'better-sqlite3';
import { Kysely, SqliteDialect, type Compilable } from 'kysely';
import type { Database } from '../../../src/hosted/db/schema.js';
import type { PackageListQuery } from '../../../src/api/hosted/packages.js';
import { applyFilters, applySort } from '../../../src/hosted/services/packageList.js';
import { visiblePackages, type Viewer } from '../../../src/hosted/services/visibility.js';
import type { NamePlan } from '../../../src/hosted/services/nameSearch.js';

export interface ListIds { teamId: string; userId: string; portalId: string; teamspaceId: string }

export interface Plan { query: string; plan: string[]; scans: boolean; tempSort: boolean }

/** The list queries, each compiled by Kysely exactly as the routes compile them. */
export function listQueries(db: Kysely<Database>, ids: ListIds, deepOffset: number): Record<string, Compilable> {
  const viewer: Viewer = { userId: ids.userId, teamId: ids.teamId, role: 'owner' };
  const q = (extra: Partial<PackageListQuery> = {}, names?: NamePlan, fromCandidates = false) =>
    applyFilters(db.selectFrom('packages'), ids.teamId, { page: 1, limit: 50, ...extra }, names, fromCandidates).where(visiblePackages(viewer));
  const count = <T extends ReturnType<typeof q>>(b: T) => b.select((eb) => eb.fn.countAll<number>().as('n'));
  const page = <T extends ReturnType<typeof q>>(b: T, offset = 0, sort?: string) => applySort(b.selectAll(), sort).limit(50).offset(offset);
  const portal = q().where('portal_id', '=', ids.portalId);
  const space = q().where('teamspace_id', '=', ids.teamspaceId);
  return {
    'team list: count (a member\'s, or filtered)': count(q()),
    'team list: page 1': page(q()),
    'team list: deep page': page(q(), deepOffset),
    'team list, by name: page 1': page(q(), 0, 'name'),
    'team list, by size: page 1': page(q(), 0, '-size'),
    'team list, by sender: page 1': page(q(), 0, 'sender'),
    'team list, name filter: count': count(q({ name: 'reel 7' })),
    'team list, name filter: page 1': page(q({ name: 'reel 7' })),
    // When a trigram of the name is in few names (nameSearch.ts): the count looks them up by rowid, the page passes over the others in the index.
    'team list, name filter from a trigram: count': count(q({ name: 'reel 7' }, { trigram: 'l 7' }, true)),
    'team list, name filter from a trigram: page 1': page(q({ name: 'reel 7' }, { trigram: 'l 7' })),
    'portal list: count': count(portal),
    'portal list: page 1': page(portal),
    'teamspace list: page 0': page(space),
  };
}

/** EXPLAIN QUERY PLAN of each list query against the SQLite database file (read only). */
export function sqlitePlans(file: string, ids: ListIds, deepOffset: number): Plan[] {
  const sqlite = new SQLite(file, { readonly: true });
  try {
    const db = new Kysely<Database>({ dialect: new SqliteDialect({ database: sqlite }) });
    return Object.entries(listQueries(db, ids, deepOffset)).map(([query, built]) => {
      const { sql, parameters } = built.compile();
      const rows = sqlite.prepare(`EXPLAIN QUERY PLAN ${sql}`).all(...(parameters as unknown[])) as { detail: string }[];
      const plan = rows.map((r) => r.detail);
      // "SCAN packages" reads every row; "SCAN packages USING [COVERING] INDEX" walks an index whole
      // (fine when it is in the order asked and stops at the page, which the temp B-tree would prevent).
      return { query, plan, scans: plan.some((d) => /^SCAN packages$/.test(d)), tempSort: plan.some((d) => d.includes('TEMP B-TREE FOR ORDER BY')) };
    });
  } finally {
    sqlite.close();
  }
}
