// Migrations 13 and 15 (14 is unused): realtime events, and the leases that
// share work between instances.
import { type Migration } from './ddl.js';

export const realtimeMigrations: Migration[] = [
  {
    version: 13,
    name: 'realtime events',
    // AUTOINCREMENT: an id is never used twice, even after the retention sweep
    // deleted the newest rows, so a client's Last-Event-ID stays meaningful.
    // No foreign keys: events are swept by age, and outlive nothing but themselves.
    sql: `
CREATE TABLE events (
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  team_id TEXT NOT NULL,
  package_id TEXT NOT NULL,
  portal_id TEXT,
  type TEXT NOT NULL,
  payload TEXT NOT NULL,
  created_at TEXT NOT NULL
);
CREATE INDEX events_team ON events(team_id, id);
CREATE INDEX events_package ON events(package_id, id);
CREATE INDEX events_created ON events(created_at);
`,
  },
  {
    version: 15,
    name: 'leases',
    // Work that one instance at a time does (the sweeper): who holds it, until when (ISO 8601 text).
    sql: `
CREATE TABLE leases (
  name TEXT PRIMARY KEY,
  owner TEXT NOT NULL,
  lease_until TEXT NOT NULL
);
`,
  },
];
