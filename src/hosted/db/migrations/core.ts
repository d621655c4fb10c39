// Migrations 1-4: accounts, Teams, Packages, files, Links, Portals, the jobs table.
import { type Migration } from './ddl.js';

export const coreMigrations: Migration[] = [
  {
    version: 1,
    name: 'accounts, packages, files, links',
    sql: `
CREATE TABLE users (
  id TEXT PRIMARY KEY,
  email TEXT NOT NULL UNIQUE COLLATE NOCASE,
  name TEXT NOT NULL,
  password_hash TEXT NOT NULL,
  created_at TEXT NOT NULL,
  updated_at TEXT NOT NULL
);
CREATE TABLE teams (
  id TEXT PRIMARY KEY,
  name TEXT NOT NULL,
  subdomain TEXT NOT NULL UNIQUE,
  max_email_recipients INTEGER NOT NULL DEFAULT 50,
  custom_expiry_enabled INTEGER NOT NULL DEFAULT 1,
  custom_expiry_default INTEGER NOT NULL DEFAULT 7,
  download_limit_enabled INTEGER NOT NULL DEFAULT 0,
  download_limit_default INTEGER NOT NULL DEFAULT 0,
  created_at TEXT NOT NULL,
  updated_at TEXT NOT NULL
);
CREATE TABLE memberships (
  id TEXT PRIMARY KEY,
  team_id TEXT NOT NULL REFERENCES teams(id) ON DELETE CASCADE,
  user_id TEXT NOT NULL REFERENCES users(id) ON DELETE CASCADE,
  policy_key TEXT NOT NULL CHECK (policy_key IN ('owner','admin','member')),
  approved INTEGER NOT NULL DEFAULT 1,
  invitation_accepted TEXT,
  created_at TEXT NOT NULL,
  UNIQUE (team_id, user_id)
);
CREATE TABLE api_keys (
  id TEXT PRIMARY KEY,
  team_id TEXT NOT NULL REFERENCES teams(id) ON DELETE CASCADE,
  user_id TEXT NOT NULL REFERENCES users(id) ON DELETE CASCADE,
  name TEXT NOT NULL,
  description TEXT NOT NULL DEFAULT '',
  key_hash TEXT NOT NULL UNIQUE,
  key_prefix TEXT NOT NULL,
  key_last4 TEXT NOT NULL,
  expiry TEXT,
  state TEXT NOT NULL CHECK (state IN ('active','inactive')),
  last_request_at TEXT,
  created_at TEXT NOT NULL,
  updated_at TEXT NOT NULL
);
CREATE INDEX api_keys_team ON api_keys(team_id, user_id);
CREATE TABLE tags (
  id TEXT PRIMARY KEY,
  team_id TEXT NOT NULL REFERENCES teams(id) ON DELETE CASCADE,
  name TEXT NOT NULL,
  active INTEGER NOT NULL DEFAULT 1,
  created_at TEXT NOT NULL,
  updated_at TEXT NOT NULL,
  UNIQUE (team_id, name)
);
CREATE TABLE packages (
  id TEXT PRIMARY KEY,
  team_id TEXT NOT NULL REFERENCES teams(id) ON DELETE CASCADE,
  portal_id TEXT,
  teamspace_id TEXT,
  created_by TEXT,
  name TEXT NOT NULL,
  description TEXT NOT NULL DEFAULT '',
  sender TEXT NOT NULL,
  recipients TEXT NOT NULL DEFAULT '[]',
  state TEXT NOT NULL CHECK (state IN ('new','finalized','expired','archived')),
  size INTEGER NOT NULL DEFAULT 0,
  total_files INTEGER NOT NULL DEFAULT 0,
  access_limit INTEGER,
  password_hash TEXT,
  contains_virus INTEGER NOT NULL DEFAULT 0,
  custom_expiry INTEGER NOT NULL DEFAULT 0,
  custom_metadata_id TEXT,
  expiry TEXT,
  unlimited_storage INTEGER NOT NULL DEFAULT 0,
  chunk_size INTEGER NOT NULL DEFAULT 0,
  tag_id TEXT REFERENCES tags(id) ON DELETE SET NULL,
  finalized_at TEXT,
  objects_deleted INTEGER NOT NULL DEFAULT 0,
  created_at TEXT NOT NULL,
  updated_at TEXT NOT NULL
);
CREATE INDEX packages_team ON packages(team_id, state, created_at);
CREATE INDEX packages_expiry ON packages(state, expiry);
CREATE TABLE files (
  id TEXT PRIMARY KEY,
  package_id TEXT NOT NULL REFERENCES packages(id) ON DELETE CASCADE,
  kind TEXT NOT NULL CHECK (kind IN ('file','directory')),
  name TEXT NOT NULL,
  path TEXT NOT NULL,
  last_modified TEXT NOT NULL,
  size INTEGER,
  chunk_size INTEGER NOT NULL,
  object_key TEXT,
  upload_id TEXT,
  state TEXT NOT NULL CHECK (state IN ('pending','finalized')),
  virus_detected INTEGER NOT NULL DEFAULT 0,
  created_at TEXT NOT NULL,
  updated_at TEXT NOT NULL
);
CREATE INDEX files_package ON files(package_id, state);
CREATE TABLE links (
  id TEXT PRIMARY KEY,
  package_id TEXT NOT NULL REFERENCES packages(id) ON DELETE CASCADE,
  secret_hash TEXT NOT NULL,
  email TEXT,
  access_limit INTEGER,
  access_count INTEGER NOT NULL DEFAULT 0,
  expiry TEXT,
  password_hash TEXT,
  active INTEGER NOT NULL DEFAULT 1,
  created_at TEXT NOT NULL
);
CREATE INDEX links_package ON links(package_id);
`,
  },
  {
    version: 2,
    name: 'portals',
    sql: `
CREATE TABLE portals (
  id TEXT PRIMARY KEY,
  team_id TEXT NOT NULL REFERENCES teams(id) ON DELETE CASCADE,
  name TEXT NOT NULL,
  subdomain TEXT NOT NULL UNIQUE,
  message TEXT NOT NULL DEFAULT '',
  access_code_hash TEXT,
  has_access_code INTEGER NOT NULL DEFAULT 0,
  active INTEGER NOT NULL DEFAULT 0,
  recipients TEXT NOT NULL DEFAULT '[]',
  download_password_hash TEXT,
  has_download_password INTEGER NOT NULL DEFAULT 0,
  custom_expiry_days INTEGER NOT NULL DEFAULT 0,
  access_level TEXT NOT NULL DEFAULT 'regular' CHECK (access_level IN ('regular','private')),
  package_size_restriction_enabled INTEGER NOT NULL DEFAULT 0,
  max_package_size INTEGER,
  max_file_size INTEGER,
  max_file_count INTEGER,
  file_type_restriction_enabled INTEGER NOT NULL DEFAULT 0,
  file_types TEXT NOT NULL DEFAULT '[]',
  expiry_enabled INTEGER NOT NULL DEFAULT 0,
  expiry TEXT,
  package_name_format TEXT NOT NULL DEFAULT '',
  user_authentication_required INTEGER NOT NULL DEFAULT 0,
  tag_id TEXT REFERENCES tags(id) ON DELETE SET NULL,
  created_at TEXT NOT NULL,
  updated_at TEXT NOT NULL
);
CREATE INDEX portals_team ON portals(team_id, name);
CREATE INDEX packages_portal ON packages(portal_id, state);
`,
  },
  {
    version: 3,
    name: 'files by place',
    // Registering a file looks for an entry at the same place in its Package; without
    // this index that scanned every file of the Package, O(n^2) for a large folder.
    sql: `CREATE INDEX files_place ON files(package_id, path, name);`,
  },
  {
    version: 4,
    name: 'jobs',
    // Background work, durable: a job is written in the same transaction as the
    // change that raised it. Portable SQL: timestamps are ISO-8601 text compared
    // as text, no SQLite functions (see jobs/queue.ts for the claim).
    sql: `
CREATE TABLE jobs (
  id TEXT PRIMARY KEY,
  kind TEXT NOT NULL,
  payload TEXT NOT NULL,
  state TEXT NOT NULL CHECK (state IN ('queued','running','failed')),
  attempts INTEGER NOT NULL DEFAULT 0,
  max_attempts INTEGER NOT NULL,
  run_after TEXT NOT NULL,
  lease_owner TEXT,
  lease_until TEXT,
  last_error TEXT,
  created_at TEXT NOT NULL,
  updated_at TEXT NOT NULL
);
CREATE INDEX jobs_due ON jobs(state, run_after);
CREATE INDEX jobs_lease ON jobs(state, lease_until);
`,
  },
];
