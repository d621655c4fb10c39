// Compiled statements kept by their SQL text, for the service's and the agent's
// SQLite files: compiling costs more than running the small queries each
// request and each progress read makes. Bounded, since text with inlined values
// would otherwise grow the cache without end. Nothing streams results and every
// use is synchronous, so a kept statement is never busy when reused.
import type Database from 'better-sqlite3';

export function statementCache(db: Database.Database, limit = 500): (sql: string) => Database.Statement {
  const cache = new Map<string, Database.Statement>();
  return (sql) => {
    let stmt = cache.get(sql);
    if (!stmt) {
      if (cache.size >= limit) cache.clear();
      cache.set(sql, (stmt = db.prepare(sql)));
    }
    return stmt;
  };
}
