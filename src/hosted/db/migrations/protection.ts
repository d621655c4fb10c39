// Migrations 11-12: malware scanning (a file's scan state); rate limit counters
// and wrong-secret lockouts.
import { type Migration } from './ddl.js';

export const protectionMigrations: Migration[] = [
  {
    version: 11,
    name: 'malware scanning: a file\'s scan state',
    sql: `
ALTER TABLE files ADD COLUMN scan_state TEXT CHECK (scan_state IN ('pending','clean','infected','failed'));
ALTER TABLE files ADD COLUMN scan_result TEXT;
`,
  },
  {
    version: 12,
    name: 'rate limit counters, wrong-secret lockouts',
    sql: `
CREATE TABLE rate_limits (
  key TEXT PRIMARY KEY,
  window_start INTEGER NOT NULL,
  count INTEGER NOT NULL
);
CREATE INDEX rate_limits_window ON rate_limits(window_start);
CREATE TABLE secret_failures (
  subject TEXT NOT NULL,
  address TEXT NOT NULL,
  failures INTEGER NOT NULL,
  last_failure_at INTEGER NOT NULL,
  locked_until INTEGER,
  PRIMARY KEY (subject, address)
);
CREATE INDEX secret_failures_last ON secret_failures(last_failure_at);
`,
  },
];
