// What reaches out: background jobs, custom webhooks and their deliveries,
// filters, cloud connections and their transfers.

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
