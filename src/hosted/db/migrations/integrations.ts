// Migrations 5-8 and 18: custom webhooks, filters, cloud connections and their transfers,
// storage gateways, and storage gateway transfers' own job kind.
import { type Migration } from './ddl.js';

export const integrationMigrations: Migration[] = [
  {
    version: 5,
    name: 'custom webhooks and their events',
    sql: `
CREATE TABLE custom_webhooks (
  id TEXT PRIMARY KEY,
  team_id TEXT NOT NULL REFERENCES teams(id) ON DELETE CASCADE,
  name TEXT NOT NULL DEFAULT '',
  active INTEGER NOT NULL,
  events TEXT NOT NULL,
  method TEXT NOT NULL CHECK (method IN ('POST','PUT')),
  url TEXT NOT NULL,
  headers TEXT NOT NULL DEFAULT '{}',
  body_extras TEXT NOT NULL DEFAULT '{}',
  created_at TEXT NOT NULL,
  updated_at TEXT NOT NULL
);
CREATE INDEX custom_webhooks_team ON custom_webhooks(team_id, created_at);
CREATE TABLE portal_custom_webhooks (
  portal_id TEXT NOT NULL REFERENCES portals(id) ON DELETE CASCADE,
  custom_webhook_id TEXT NOT NULL REFERENCES custom_webhooks(id) ON DELETE CASCADE,
  PRIMARY KEY (portal_id, custom_webhook_id)
);
CREATE INDEX portal_custom_webhooks_hook ON portal_custom_webhooks(custom_webhook_id);
CREATE TABLE webhook_events (
  id TEXT PRIMARY KEY,
  custom_webhook_id TEXT NOT NULL,
  team_id TEXT NOT NULL REFERENCES teams(id) ON DELETE CASCADE,
  package_id TEXT NOT NULL,
  event_type TEXT NOT NULL,
  method TEXT NOT NULL,
  url TEXT NOT NULL,
  headers TEXT NOT NULL,
  body TEXT NOT NULL,
  state TEXT NOT NULL CHECK (state IN ('pending','delivered','failed')),
  attempts INTEGER NOT NULL DEFAULT 0,
  created_at TEXT NOT NULL,
  updated_at TEXT NOT NULL
);
CREATE INDEX webhook_events_hook ON webhook_events(custom_webhook_id, created_at);
CREATE TABLE webhook_attempts (
  event_id TEXT NOT NULL REFERENCES webhook_events(id) ON DELETE CASCADE,
  attempt INTEGER NOT NULL,
  status INTEGER,
  error TEXT,
  started_at TEXT NOT NULL,
  finished_at TEXT,
  PRIMARY KEY (event_id, attempt)
);
`,
  },
  {
    version: 6,
    name: 'filters',
    sql: `
CREATE TABLE filters (
  id TEXT PRIMARY KEY,
  team_id TEXT NOT NULL REFERENCES teams(id) ON DELETE CASCADE,
  name TEXT NOT NULL,
  rules TEXT NOT NULL,
  created_at TEXT NOT NULL,
  updated_at TEXT NOT NULL
);
CREATE INDEX filters_team ON filters(team_id, created_at);
`,
  },
  {
    version: 7,
    name: 'cloud connections and their transfers',
    // A deleted connection keeps its row (deleted_at) while transfers of it are
    // queued or running, so that they finish; the last one to end removes it.
    sql: `
CREATE TABLE cloud_connections (
  id TEXT PRIMARY KEY,
  team_id TEXT NOT NULL REFERENCES teams(id) ON DELETE CASCADE,
  name TEXT NOT NULL DEFAULT '',
  provider TEXT NOT NULL,
  direction TEXT NOT NULL CHECK (direction IN ('svc_to_cloud','cloud_to_svc')),
  credentials TEXT NOT NULL,
  target_directory_id TEXT,
  source_directory_ids TEXT NOT NULL DEFAULT '[]',
  upload_transfer_manifest INTEGER NOT NULL DEFAULT 0,
  state TEXT NOT NULL CHECK (state IN ('ok','error','disconnected')),
  last_error TEXT,
  deleted_at TEXT,
  created_at TEXT NOT NULL,
  updated_at TEXT NOT NULL
);
CREATE INDEX cloud_connections_team ON cloud_connections(team_id, created_at);
CREATE TABLE portal_cloud_connections (
  portal_id TEXT NOT NULL REFERENCES portals(id) ON DELETE CASCADE,
  cloud_connection_id TEXT NOT NULL REFERENCES cloud_connections(id) ON DELETE CASCADE,
  target_action TEXT NOT NULL CHECK (target_action IN ('transfer')),
  filter_id TEXT REFERENCES filters(id),
  position INTEGER NOT NULL,
  PRIMARY KEY (portal_id, cloud_connection_id)
);
CREATE INDEX portal_cloud_connections_connection ON portal_cloud_connections(cloud_connection_id);
CREATE INDEX portal_cloud_connections_filter ON portal_cloud_connections(filter_id);
CREATE TABLE cloud_transfers (
  id TEXT PRIMARY KEY,
  team_id TEXT NOT NULL REFERENCES teams(id) ON DELETE CASCADE,
  package_id TEXT NOT NULL REFERENCES packages(id) ON DELETE CASCADE,
  cloud_connection_id TEXT NOT NULL,
  direction TEXT NOT NULL CHECK (direction IN ('svc_to_cloud','cloud_to_svc')),
  raised_by TEXT NOT NULL CHECK (raised_by IN ('portal','manual')),
  state TEXT NOT NULL CHECK (state IN ('queued','running','complete','error')),
  error TEXT,
  notify_email TEXT,
  filter_rules TEXT,
  requested_files TEXT,
  planned INTEGER NOT NULL DEFAULT 0,
  files_total INTEGER NOT NULL DEFAULT 0,
  files_done INTEGER NOT NULL DEFAULT 0,
  bytes_total INTEGER NOT NULL DEFAULT 0,
  bytes_done INTEGER NOT NULL DEFAULT 0,
  files_filtered_out INTEGER NOT NULL DEFAULT 0,
  attempts INTEGER NOT NULL DEFAULT 0,
  destination TEXT,
  manifest_key TEXT,
  created_at TEXT NOT NULL,
  updated_at TEXT NOT NULL
);
CREATE INDEX cloud_transfers_package ON cloud_transfers(package_id, created_at);
CREATE INDEX cloud_transfers_connection ON cloud_transfers(cloud_connection_id, state);
CREATE TABLE cloud_transfer_items (
  transfer_id TEXT NOT NULL REFERENCES cloud_transfers(id) ON DELETE CASCADE,
  seq INTEGER NOT NULL,
  file_id TEXT,
  source_key TEXT NOT NULL,
  dest_key TEXT,
  path TEXT NOT NULL,
  name TEXT NOT NULL,
  size INTEGER NOT NULL,
  last_modified TEXT NOT NULL,
  state TEXT NOT NULL CHECK (state IN ('pending','complete')),
  upload_id TEXT,
  part_size INTEGER,
  etag TEXT,
  PRIMARY KEY (transfer_id, seq)
);
CREATE TABLE cloud_transfer_parts (
  transfer_id TEXT NOT NULL,
  seq INTEGER NOT NULL,
  part_number INTEGER NOT NULL,
  etag TEXT NOT NULL,
  PRIMARY KEY (transfer_id, seq, part_number),
  FOREIGN KEY (transfer_id, seq) REFERENCES cloud_transfer_items(transfer_id, seq) ON DELETE CASCADE
);
`,
  },
  {
    version: 8,
    name: 'storage gateways: secret, attached socket',
    sql: `
ALTER TABLE cloud_connections ADD COLUMN gateway_secret_hash TEXT;
ALTER TABLE cloud_connections ADD COLUMN gateway_session TEXT;
ALTER TABLE cloud_connections ADD COLUMN gateway_connected_at TEXT;
ALTER TABLE cloud_connections ADD COLUMN gateway_info TEXT;
CREATE UNIQUE INDEX cloud_connections_gateway_secret ON cloud_connections(gateway_secret_hash) WHERE gateway_secret_hash IS NOT NULL;
`,
  },
  {
    version: 18,
    name: 'storage gateway transfers: a job kind of their own',
    // Run only by instances that can hold a gateway's socket (jobs/handlers.ts); the payload is
    // JSON.stringify({transfer_id}), as enqueueJob writes it.
    sql: `
UPDATE jobs SET kind = 'cloud.transfer.gateway'
  WHERE kind = 'cloud.transfer' AND payload IN (
    SELECT '{"transfer_id":"' || t.id || '"}' FROM cloud_transfers t
      JOIN cloud_connections c ON c.id = t.cloud_connection_id
      WHERE c.provider = 'storage_gateway');
`,
  },
];
