// The agent's durable state: one SQLite file (WAL) in the config dir. Calls are
// synchronous on purpose: a finished part is on disk before the engine counts it.
import Database from 'better-sqlite3';
import { migrations } from './migrations.js';

export type AgentDb = Database.Database;

export function openAgentDb(file: string): AgentDb {
  const db = new Database(file);
  db.pragma('journal_mode = WAL');
  // FULL: a part recorded as done must survive power loss, not only a crash.
  db.pragma('synchronous = FULL');
  db.pragma('foreign_keys = ON');
  db.pragma('busy_timeout = 5000');
  migrate(db);
  return db;
}

function migrate(db: AgentDb): void {
  db.exec('CREATE TABLE IF NOT EXISTS schema_migrations (version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at TEXT NOT NULL)');
  const done = new Set((db.prepare('SELECT version FROM schema_migrations').all() as { version: number }[]).map((r) => r.version));
  for (const m of [...migrations].sort((a, b) => a.version - b.version)) {
    if (done.has(m.version)) continue;
    db.transaction(() => {
      db.exec(m.sql);
      db.prepare('INSERT INTO schema_migrations (version, name, applied_at) VALUES (?, ?, ?)').run(m.version, m.name, new Date().toISOString());
    })();
  }
}
