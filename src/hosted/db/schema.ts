// Kysely table types of the hosted service, one file per area under tables/.
// Timestamps are ISO-8601 UTC strings (they sort as text on SQLite and
// PostgreSQL alike); booleans are 0/1 integers.
import type { UsersTable, TeamsTable, Role, MembershipsTable, ApiKeysTable } from './tables/accounts.js';
import type { TagsTable, PackageState, PackagesTable, FilesTable, ScanState, LinksTable, PackageCountsTable } from './tables/packages.js';
import type { PortalsTable, TeamspacesTable, TeamspaceMembersTable, MetadataFormsTable, FormResponsesTable } from './tables/portals.js';
import type { JobState, JobsTable, WebhookMethod, CustomWebhooksTable, PortalCustomWebhooksTable, WebhookEventsTable, WebhookAttemptsTable, FiltersTable, CloudConnectionsTable, PortalCloudConnectionsTable, CloudTransferState, CloudTransfersTable, CloudTransferItemsTable, CloudTransferPartsTable } from './tables/integrations.js';
import type { RateLimitsTable, SecretFailuresTable, EventsTable, LeasesTable, MigrationsTable } from './tables/service.js';

export type { UsersTable, TeamsTable, Role, MembershipsTable, ApiKeysTable } from './tables/accounts.js';
export type { TagsTable, PackageState, PackagesTable, FilesTable, ScanState, LinksTable, PackageCountsTable } from './tables/packages.js';
export type { PortalsTable, TeamspacesTable, TeamspaceMembersTable, MetadataFormsTable, FormResponsesTable } from './tables/portals.js';
export type { JobState, JobsTable, WebhookMethod, CustomWebhooksTable, PortalCustomWebhooksTable, WebhookEventsTable, WebhookAttemptsTable, FiltersTable, CloudConnectionsTable, PortalCloudConnectionsTable, CloudTransferState, CloudTransfersTable, CloudTransferItemsTable, CloudTransferPartsTable } from './tables/integrations.js';
export type { RateLimitsTable, SecretFailuresTable, EventsTable, LeasesTable, MigrationsTable } from './tables/service.js';

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
