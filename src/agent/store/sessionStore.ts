// The signed-in session: at most one, kept so that transfers survive restarts.
import type { AgentDb } from './db.js';
import type { Migration } from './migrations.js';

export const sessionMigration: Migration = {
  version: 1,
  name: 'session',
  sql: `CREATE TABLE session (
    id INTEGER PRIMARY KEY CHECK (id = 1),
    kind TEXT NOT NULL CHECK (kind IN ('api_key','credentials')),
    secret TEXT NOT NULL,
    user_json TEXT NOT NULL,
    created_at TEXT NOT NULL
  );`,
};

export interface StoredSession {
  kind: 'api_key' | 'credentials';
  /** The API key, or the user token from POST /v1/auth. */
  secret: string;
  user: { id: string; email: string; name: string };
}

export function loadSession(db: AgentDb): StoredSession | undefined {
  const row = db.sql('SELECT kind, secret, user_json FROM session WHERE id = 1').get() as
    | { kind: StoredSession['kind']; secret: string; user_json: string }
    | undefined;
  return row && { kind: row.kind, secret: row.secret, user: JSON.parse(row.user_json) };
}

export function saveSession(db: AgentDb, s: StoredSession): void {
  db.sql(
    `INSERT INTO session (id, kind, secret, user_json, created_at) VALUES (1, ?, ?, ?, ?)
     ON CONFLICT (id) DO UPDATE SET kind = excluded.kind, secret = excluded.secret, user_json = excluded.user_json, created_at = excluded.created_at`,
  ).run(s.kind, s.secret, JSON.stringify(s.user), new Date().toISOString());
}

export function clearSession(db: AgentDb): void {
  db.sql('DELETE FROM session').run();
}
