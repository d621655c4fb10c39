// The Package lists' name filter: the name contains the text, letter case
// ignored (`lower(name) LIKE lower('%text%')`, the exact check on both
// databases), served by a trigram index (migration 17).
//
// PostgreSQL's planner uses its pg_trgm index by itself, from statistics.
// SQLite's knows nothing of the FTS5 trigram table, whose own LIKE and phrase
// queries read the whole list of every trigram of the text (in "reel 7", "ree"
// is in every name): so the choice is made here. Each trigram of the text is
// probed for its first few names; the sparsest one, when it is in few enough
// names against the Team's, gives the candidates: the count looks each up by
// rowid, and the page walks the Team's index in its order, passing over what is
// not a candidate without reading the row. Otherwise every name of the Team is
// checked from the (team_id, lower(name)) index, as for any filter.
import { sql, type Expression, type ExpressionBuilder, type SqlBool } from 'kysely';
import type { Db } from '../db/open.js';
import type { Database, PackageState } from '../db/schema.js';
import { containsIgnoringCase, isPostgres } from '../db/dialect.js';
import { teamTotal } from './packageCounts.js';

/** SQLite: the trigram whose names are the candidates; undefined: every name is checked (and on PostgreSQL, always). */
export type NamePlan = { trigram: string } | undefined;

/**
 * Candidates up to this share of the Team's Packages: looking one up costs about
 * 15 times checking one name in the index (SQLite, 100,000 Packages: 1.2 µs
 * against 0.08), so beyond it checking every name costs less.
 */
const MAX_SHARE = 0.07;
/** Names read per trigram to estimate how many hold it. */
const PROBE = 64;
/** Trigrams probed at most, spread over a long text. */
const MAX_PROBES = 12;

/** An FTS5 phrase of the text, quotes doubled; with the trigram tokenizer, case folded. */
const phrase = (text: string) => `"${text.replace(/"/g, '""')}"`;

/** The text's distinct trigrams (of characters, as the tokenizer counts them; it folds their case), at most MAX_PROBES spread along it. */
function trigramsOf(text: string): string[] {
  const chars = [...text];
  const all = [...new Set(chars.slice(0, -2).map((_, i) => chars.slice(i, i + 3).join('')))];
  if (all.length <= MAX_PROBES) return all;
  return Array.from({ length: MAX_PROBES }, (_, i) => all[Math.floor((i * all.length) / MAX_PROBES)]!);
}

const lastRowid = async (db: Db) => (await db.selectFrom('packages').select((eb) => eb.fn.max<number>(sql`rowid`).as('r')).executeTakeFirstOrThrow()).r;

export async function planNameFilter(db: Db, teamId: string, states: PackageState[], text: string | undefined): Promise<NamePlan> {
  if (!text || isPostgres(db)) return undefined;
  const grams = trigramsOf(text);
  if (grams.length === 0) return undefined; // under three characters: no trigram to look up
  const bound = (await teamTotal(db, teamId, states)) * MAX_SHARE;
  let top: number | undefined;
  let best: { trigram: string; names: number } | undefined;
  for (const gram of grams) {
    // Names come in rowid order: how far the PROBE-th one lies tells how sparse the trigram is.
    const { rows } = await sql<{ n: number; last: number | null }>`SELECT count(*) AS n, max(rowid) AS last FROM (SELECT rowid FROM package_names WHERE package_names MATCH ${phrase(gram)} ORDER BY rowid LIMIT ${PROBE})`.execute(db);
    const { n, last } = rows[0]!;
    // Fewer than a probe's worth is the exact count; otherwise scaled by how far into the table the last one lies.
    const names = n < PROBE ? n : (PROBE * (top ??= await lastRowid(db))) / (last ?? 1);
    if (!best || names < best.names) best = { trigram: gram, names };
    if (n < PROBE) break; // fewer than a probe's worth in the whole table: none sparser is worth finding
  }
  return best && best.names <= bound ? { trigram: best.trigram } : undefined;
}

/** The name filter as a condition: the exact check, and on SQLite the candidates when planned. */
export function nameMatches(eb: ExpressionBuilder<Database, 'packages'>, text: string, plan: NamePlan): Expression<SqlBool> {
  const exact = containsIgnoringCase(eb.ref('packages.name'), text);
  if (!plan) return exact;
  // The table folds case more widely than SQLite's lower() (all of Unicode): its candidates hold every match, and the exact check decides.
  return eb.and([sql<SqlBool>`packages.rowid IN (SELECT rowid FROM package_names WHERE package_names MATCH ${phrase(plan.trigram)})`, exact]);
}
