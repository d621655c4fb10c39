// Queries whose shape never changes, built and compiled by Kysely once per
// dialect; each run only binds its values. Building and compiling a query costs
// the service more CPU than SQLite takes to run the small ones that every
// request and every file makes (the rate-limit count, the Package, the Link, the
// file, the event): docs/benchmarks.md, "Datasets".
import { CompiledQuery, type Compilable, type Kysely } from 'kysely';
import { dialectOf, type DialectName } from './dialect.js';

/** Stands for argument `i` while the query is built: the compiled parameters say where each one goes. */
class Slot {
  constructor(readonly i: number) {}
}

/**
 * `build` must use each argument as a value only (never to choose the query's
 * shape): it is called once per dialect with placeholders, and its compiled
 * SQL runs with the real values from then on. Answers the rows.
 */
export function compiledOnce<DB, A extends unknown[], R>(build: (db: Kysely<DB>, ...args: A) => Compilable<R>): (db: Kysely<DB>, ...args: A) => Promise<R[]> {
  const compiled = new Map<DialectName, CompiledQuery<R>>();
  return async (db, ...args) => {
    const dialect = dialectOf(db);
    let q = compiled.get(dialect);
    if (!q) {
      q = build(db, ...(args.map((_, i) => new Slot(i)) as A)).compile();
      const used = new Set(q.parameters.filter((p): p is Slot => p instanceof Slot).map((p) => p.i));
      if (used.size !== args.length) throw new Error(`compiledOnce: an argument is not a value of the query: ${q.sql}`);
      compiled.set(dialect, q);
    }
    const parameters = q.parameters.map((p) => (p instanceof Slot ? args[p.i] : p));
    return (await db.executeQuery(CompiledQuery.raw(q.sql, parameters as unknown[]))).rows as R[];
  };
}
