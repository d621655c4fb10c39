// Kysely table types of the hosted service. Timestamps are ISO-8601 UTC strings
// (they sort as text on SQLite and PostgreSQL alike); booleans are 0/1 integers.
import type { Generated } from 'kysely';

export interface UsersTable {
  id: string;
  email: string;
  name: string;
  password_hash: string;
  /** Raised to revoke every user token signed before (services/sessions.ts). */
  token_generation: Generated<number>;
  created_at: string;
  updated_at: string;
}

export interface TeamsTable {
  id: string;
  name: string;
  subdomain: string;
  max_email_recipients: number;
  custom_expiry_enabled: number;
  custom_expiry_default: number;
  download_limit_enabled: number;
  download_limit_default: number;
  created_at: string;
  updated_at: string;
}

export type Role = 'owner' | 'admin' | 'member';

export interface MembershipsTable {
  id: string;
  team_id: string;
  user_id: string;
  policy_key: Role;
  approved: number;
  invitation_accepted: string | null;
  created_at: string;
}

export interface ApiKeysTable {
  id: string;
  team_id: string;
  user_id: string;
  name: string;
  description: string;
  key_hash: string;
  key_prefix: string;
  key_last4: string;
  expiry: string | null;
  state: 'active' | 'inactive';
  last_request_at: string | null;
  created_at: string;
  updated_at: string;
}

export interface TagsTable {
  id: string;
  team_id: string;
  name: string;
  active: number;
  created_at: string;
  updated_at: string;
}

export type PackageState = 'new' | 'finalized' | 'expired' | 'archived';

export interface PackagesTable {
  id: string;
  team_id: string;
  portal_id: string | null;
  teamspace_id: string | null;
  created_by: string | null;
  name: string;
  description: string;
  sender: string;
  recipients: string; // JSON array of e-mails
  state: PackageState;
  size: number;
  total_files: number;
  access_limit: number | null;
  password_hash: string | null;
  contains_virus: number;
  custom_expiry: number;
  custom_metadata_id: string | null;
  expiry: string | null;
  unlimited_storage: number;
  chunk_size: number;
  tag_id: string | null;
  finalized_at: string | null;
  objects_deleted: number;
  created_at: string;
  updated_at: string;
  /** 1 once the private Portal it came through is deleted: it stays private (services/visibility.ts). */
  private_access?: number;
  /** When the uploader accepted the Portal's terms of service; null when it had none. */
  terms_accepted_at?: string | null;
}

export interface FilesTable {
  id: string;
  package_id: string;
  kind: 'file' | 'directory';
  name: string;
  path: string;
  last_modified: string;
  size: number | null;
  chunk_size: number;
  object_key: string | null;
  upload_id: string | null;
  state: 'pending' | 'finalized';
  virus_detected: number;
  /** Malware scan (migration 11): null when no scanner was configured at its finalize. */
  scan_state?: ScanState | null;
  /** The scanner's signature name when infected, or why the scan failed. */
  scan_result?: string | null;
  created_at: string;
  updated_at: string;
}

export type ScanState = 'pending' | 'clean' | 'infected' | 'failed';

export interface LinksTable {
  id: string;
  package_id: string;
  secret_hash: string;
  email: string | null;
  access_limit: number | null;
  access_count: number;
  expiry: string | null;
  password_hash: string | null;
  active: number;
  created_at: string;
}

export interface PortalsTable {
  id: string;
  team_id: string;
  name: string;
  /** A DNS label, stored lower-cased; unique across the service. */
  subdomain: string;
  message: string;
  /** scrypt hash; null when the Portal has no access code. */
  access_code_hash: string | null;
  has_access_code: number;
  active: number;
  recipients: string; // JSON array of e-mails
  download_password_hash: string | null;
  has_download_password: number;
  /** 0: the Team's default; -1: kept until deleted (unlimited storage); else days after finalize. */
  custom_expiry_days: number;
  access_level: 'regular' | 'private';
  package_size_restriction_enabled: number;
  max_package_size: number | null;
  max_file_size: number | null;
  max_file_count: number | null;
  file_type_restriction_enabled: number;
  file_types: string; // JSON array of lower-cased extensions with a leading dot
  expiry_enabled: number;
  expiry: string | null;
  /** A regex package names must match; '' for none. */
  package_name_format: string;
  user_authentication_required: number;
  tag_id: string | null;
  created_at: string;
  updated_at: string;
  /** The Teamspace its Packages join; null for none. */
  teamspace_id: string | null;
  terms_of_service_enabled?: number;
  /** JSON {title, text}; null when never set. */
  terms_of_service?: string | null;
}

export type JobState = 'queued' | 'running' | 'failed';

/** One unit of background work (jobs/queue.ts). A job that succeeds is deleted. */
export interface JobsTable {
  id: string;
  kind: string;
  payload: string; // JSON
  state: JobState;
  /** Claims so far, the one running included. */
  attempts: number;
  max_attempts: number;
  /** Not claimed before this instant (back-off). */
  run_after: string;
  lease_owner: string | null;
  /** A running job whose lease is past this instant is taken over. */
  lease_until: string | null;
  last_error: string | null;
  created_at: string;
  updated_at: string;
}

export type WebhookMethod = 'POST' | 'PUT';

export interface CustomWebhooksTable {
  id: string;
  team_id: string;
  name: string;
  active: number;
  events: string; // JSON array of event types
  method: WebhookMethod;
  url: string;
  headers: string; // JSON object of strings
  body_extras: string; // JSON object of strings
  created_at: string;
  updated_at: string;
}

export interface PortalCustomWebhooksTable {
  portal_id: string;
  custom_webhook_id: string;
}

/**
 * One event for one webhook: the request is composed when the event is raised
 * and sent as stored on every attempt. No foreign key to the webhook: events
 * raised before a delete are still delivered.
 */
export interface WebhookEventsTable {
  /** The event_id of the payload. */
  id: string;
  custom_webhook_id: string;
  team_id: string;
  package_id: string;
  event_type: string;
  method: WebhookMethod;
  url: string;
  headers: string; // JSON object of strings
  body: string; // the JSON sent
  state: 'pending' | 'delivered' | 'failed';
  attempts: number;
  created_at: string;
  updated_at: string;
}

export interface WebhookAttemptsTable {
  event_id: string;
  attempt: number;
  /** The receiver's HTTP status; null when none came (see error). */
  status: number | null;
  error: string | null;
  started_at: string;
  /** null while in flight, or when the process died during the attempt. */
  finished_at: string | null;
}

export interface FiltersTable {
  id: string;
  team_id: string;
  name: string;
  rules: string; // JSON array of FilterRule
  created_at: string;
  updated_at: string;
}

export interface CloudConnectionsTable {
  id: string;
  team_id: string;
  name: string;
  provider: string;
  direction: 'svc_to_cloud' | 'cloud_to_svc';
  /** JSON of the authorization object, sealed (auth/sealed.ts): it holds secrets. */
  credentials: string;
  target_directory_id: string | null;
  source_directory_ids: string; // JSON array of folders
  upload_transfer_manifest: number;
  state: 'ok' | 'error' | 'disconnected';
  last_error: string | null;
  /** Set by DELETE; the row goes when no transfer of it is queued or running. */
  deleted_at: string | null;
  created_at: string;
  updated_at: string;
  /** storage_gateway: SHA-256 of the secret the gateway connects with (shown once, at creation or rotation). */
  gateway_secret_hash: string | null;
  /** storage_gateway: the socket attached now (one per connection), null when none is. */
  gateway_session: string | null;
  gateway_connected_at: string | null;
  /** storage_gateway: JSON of what the last gateway said of itself ({permissions, version}). */
  gateway_info: string | null;
}

export interface PortalCloudConnectionsTable {
  portal_id: string;
  cloud_connection_id: string;
  target_action: 'transfer';
  filter_id: string | null;
  /** Order in the Portal's list. */
  position: number;
}

export type CloudTransferState = 'queued' | 'running' | 'complete' | 'error';

/** One Package delivered to a connection (svc_to_cloud) or filled from it (cloud_to_svc). */
export interface CloudTransfersTable {
  id: string;
  team_id: string;
  package_id: string;
  cloud_connection_id: string;
  direction: 'svc_to_cloud' | 'cloud_to_svc';
  raised_by: 'portal' | 'manual';
  state: CloudTransferState;
  error: string | null;
  notify_email: string | null;
  /** The filter's rules when the transfer was raised (JSON), null for none. */
  filter_rules: string | null;
  /** cloud_to_svc: the keys and folders asked for (JSON), null for the connection's sources. */
  requested_files: string | null;
  /** 1 once its items are listed (the first attempt does it). */
  planned: number;
  files_total: number;
  files_done: number;
  bytes_total: number;
  bytes_done: number;
  files_filtered_out: number;
  attempts: number;
  destination: string | null;
  manifest_key: string | null;
  created_at: string;
  updated_at: string;
}

/** One object of a transfer, with where its copy stands (for a resume). */
export interface CloudTransferItemsTable {
  transfer_id: string;
  seq: number;
  /** svc_to_cloud: our file; cloud_to_svc: the file registered for it (null until then). */
  file_id: string | null;
  /** The key read: ours (svc_to_cloud) or theirs (cloud_to_svc). */
  source_key: string;
  /** svc_to_cloud: their key. */
  dest_key: string | null;
  path: string;
  name: string;
  size: number;
  last_modified: string;
  state: 'pending' | 'complete';
  /** The multipart upload under way at the destination. */
  upload_id: string | null;
  part_size: number | null;
  /** The destination's ETag once complete. */
  etag: string | null;
}

export interface CloudTransferPartsTable {
  transfer_id: string;
  seq: number;
  part_number: number;
  etag: string;
}

export interface TeamspacesTable {
  id: string;
  team_id: string;
  name: string;
  created_at: string;
  updated_at: string;
}

/** A Team membership added to a Teamspace; `id` is the teamspace_membership_id of the API. */
export interface TeamspaceMembersTable {
  id: string;
  teamspace_id: string;
  membership_id: string;
  created_at: string;
}

/** A Portal's custom metadata form (portal_id set) or a Team's form template (portal_id null). */
export interface MetadataFormsTable {
  id: string;
  team_id: string;
  portal_id: string | null;
  name: string;
  delivery_formats: string; // JSON array
  form_template_id: string | null;
  disabled: number;
  fields: string; // JSON array of FormField, as stored (complete)
  created_at: string;
  updated_at: string;
}

/** One answer to a Portal's form; taken by at most one Package (form_data_id). */
export interface FormResponsesTable {
  id: string;
  team_id: string;
  portal_id: string;
  form_id: string;
  package_id: string | null;
  /** JSON {name, delivery_formats, fields}: the form as it was answered. */
  form: string;
  /** JSON object: field name to its stored value. */
  data: string;
  created_at: string;
}

/** One fixed window of a rate limit (src/hosted/ratelimit/store.ts); times in ms since the epoch. */
export interface RateLimitsTable {
  /** `CLASS:WHO`, e.g. `api:key_...` or `public:203.0.113.9`. */
  key: string;
  window_start: number;
  count: number;
}

/** Wrong Link passwords and Portal access codes from one address (services/lockouts.ts). */
export interface SecretFailuresTable {
  /** `link:ID`, `portal:ID`, or `account:SHA256(e-mail)` (with address `*`: services/lockouts.ts). */
  subject: string;
  address: string;
  failures: number;
  last_failure_at: number;
  locked_until: number | null;
}

/** One realtime event (services/events.ts), written in the transaction of the change it tells of. */
export interface EventsTable {
  id: Generated<number>;
  team_id: string;
  package_id: string;
  portal_id: string | null;
  type: string;
  payload: string; // JSON object
  created_at: string;
}

/** How many Packages a Team has in each state, kept by triggers on packages (migration 16). */
export interface PackageCountsTable {
  team_id: string;
  state: PackageState;
  n: number;
}

export interface MigrationsTable {
  version: number;
  name: string;
  applied_at: string;
}

/** A named lease: one instance at a time does the work it names (jobs/lease.ts). */
export interface LeasesTable {
  name: string;
  owner: string;
  lease_until: string;
}

export interface Database {
  users: UsersTable;
  teams: TeamsTable;
  memberships: MembershipsTable;
  api_keys: ApiKeysTable;
  tags: TagsTable;
  packages: PackagesTable;
  files: FilesTable;
  links: LinksTable;
  portals: PortalsTable;
  jobs: JobsTable;
  leases: LeasesTable;
  custom_webhooks: CustomWebhooksTable;
  portal_custom_webhooks: PortalCustomWebhooksTable;
  webhook_events: WebhookEventsTable;
  webhook_attempts: WebhookAttemptsTable;
  filters: FiltersTable;
  cloud_connections: CloudConnectionsTable;
  portal_cloud_connections: PortalCloudConnectionsTable;
  cloud_transfers: CloudTransfersTable;
  cloud_transfer_items: CloudTransferItemsTable;
  cloud_transfer_parts: CloudTransferPartsTable;
  rate_limits: RateLimitsTable;
  secret_failures: SecretFailuresTable;
  schema_migrations: MigrationsTable;
  teamspaces: TeamspacesTable;
  teamspace_members: TeamspaceMembersTable;
  metadata_forms: MetadataFormsTable;
  form_responses: FormResponsesTable;
  events: EventsTable;
  package_counts: PackageCountsTable;
}
