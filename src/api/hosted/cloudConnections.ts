// Cloud connections: the connection object, its create and update bodies, a
// Portal's attachment items, and the transfers (a Package delivered to, or
// filled from, a connection) with the manual transfer's body.
import { Type, type Static, type TSchema } from 'typebox';
import { ProviderSchema } from './cloudProviders.js';
import { TeamParams } from './tags.js';

export { TeamParams };

const NoNul = '^[^\\u0000]*$';
const Nullable = <T extends TSchema>(t: T) => Type.Union([t, Type.Null()]);

export const Direction = Type.Union([Type.Literal('svc_to_cloud'), Type.Literal('cloud_to_svc')]);
export type Direction = Static<typeof Direction>;

/**
 * ok; error: the last transfer failed (see last_error); disconnected: a storage
 * gateway not connected now (a gateway connected now is ok, or error after a failed transfer).
 */
export const ConnectionState = Type.Union([Type.Literal('ok'), Type.Literal('error'), Type.Literal('disconnected')]);
export type ConnectionState = Static<typeof ConnectionState>;

/** A storage gateway connection's gateway: attached now or not, and what the last one said of itself. */
export const GatewayView = Type.Object({
  connected: Type.Boolean(),
  /** When the gateway attached now (or last) connected. */
  connected_at: Nullable(Type.String()),
  /** r: it serves files (cloud_to_svc); w: it receives deliveries (svc_to_cloud). */
  permissions: Nullable(Type.Union([Type.Literal('r'), Type.Literal('w')])),
  /** The agent's version. */
  version: Nullable(Type.String()),
});
export type GatewayView = Static<typeof GatewayView>;

/** A folder of the bucket, `/`-separated, without leading or trailing slash ("" for the root). */
const Folder = Type.String({ maxLength: 1024, pattern: NoNul });

/** Key to value; which keys, and their checks, depend on the provider (cloudProviders.ts). */
const Authorization = Type.Record(Type.String({ maxLength: 64 }), Type.Unknown(), { maxProperties: 32 });

export const CloudConnection = Type.Object({
  id: Type.String(),
  name: Type.String(),
  provider: Type.String(),
  direction: Direction,
  state: ConnectionState,
  /** Why the connection is in error; null otherwise. */
  last_error: Nullable(Type.String()),
  /** As given, with every secret field shown as the mask. */
  authorization: Type.Record(Type.String(), Type.Unknown()),
  /** svc_to_cloud: the folder Packages are delivered under ("" for the bucket's root). */
  target_directory_id: Nullable(Type.String()),
  /** cloud_to_svc: the folders whose objects are brought in. */
  source_directory_ids: Type.Array(Type.String()),
  upload_transfer_manifest: Type.Boolean(),
  created_at: Type.String(),
  updated_at: Type.String(),
  /**
   * storage_gateway only, and only in the create answer: the secret the gateway
   * registers with (the agent's /storage_gateway/register), shown this once.
   */
  secret: Type.Optional(Type.String()),
  /** storage_gateway: the gateway as the service sees it; null for other providers. */
  gateway: Nullable(GatewayView),
});
export type CloudConnection = Static<typeof CloudConnection>;

/** POST /v1/cloud_connections/{id}/secret: a storage gateway's new secret, shown once. */
export const GatewaySecretAnswer = Type.Object({ id: Type.String(), secret: Type.String() });
export type GatewaySecretAnswer = Static<typeof GatewaySecretAnswer>;

export const CreateCloudConnectionBody = Type.Object({
  provider: ProviderSchema,
  authorization: Authorization,
  name: Type.Optional(Type.String({ maxLength: 255, pattern: NoNul })),
  direction: Type.Optional(Direction),
  target_directory_id: Type.Optional(Folder),
  source_directory_ids: Type.Optional(Type.Array(Folder, { maxItems: 50 })),
  /** S3 and S3-compatible providers only. */
  upload_transfer_manifest: Type.Optional(Type.Boolean()),
});
export type CreateCloudConnectionBody = Static<typeof CreateCloudConnectionBody>;

/**
 * Unprovided properties are unchanged, inside authorization too (a field given
 * replaces that field; the mask keeps a secret). provider and direction cannot
 * change: sending them is allowed when they are the current values.
 */
export const UpdateCloudConnectionBody = Type.Object({
  name: Type.Optional(Type.String({ maxLength: 255, pattern: NoNul })),
  authorization: Type.Optional(Authorization),
  provider: Type.Optional(Type.String({ maxLength: 64 })),
  direction: Type.Optional(Direction),
  /** null as a GET answers it for cloud_to_svc (a round trip); for svc_to_cloud, the bucket's root. */
  target_directory_id: Type.Optional(Nullable(Folder)),
  source_directory_ids: Type.Optional(Type.Array(Folder, { maxItems: 50 })),
  upload_transfer_manifest: Type.Optional(Type.Boolean()),
});
export type UpdateCloudConnectionBody = Static<typeof UpdateCloudConnectionBody>;

export const CloudConnectionParams = Type.Object({ connection_id: Type.String({ maxLength: 100 }) });

/** A connection as a Portal lists it. */
export const PortalCloudConnection = Type.Object({
  id: Type.String({ minLength: 1, maxLength: 100 }),
  /** The only known action: deliver each finalized Package. */
  target_action: Type.Literal('transfer'),
  /** Only the files this filter lets through are delivered; omitted: all. */
  filter_id: Type.Optional(Type.String({ minLength: 1, maxLength: 100 })),
});
export type PortalCloudConnection = Static<typeof PortalCloudConnection>;

export const TransferState = Type.Union([Type.Literal('queued'), Type.Literal('running'), Type.Literal('complete'), Type.Literal('error')]);
export type TransferState = Static<typeof TransferState>;

/** One object of a cloud_to_svc transfer: a key of the bucket, or a folder ending in "/". */
export const TransferFileRef = Type.Object({ path: Type.String({ minLength: 1, maxLength: 1024, pattern: NoNul }) });
export type TransferFileRef = Static<typeof TransferFileRef>;

/** POST /v1/packages/{package_id}/transfer. */
export const TransferBody = Type.Object({
  cloud_connection_id: Type.String({ minLength: 1, maxLength: 100 }),
  /** Told by e-mail when the transfer completes or fails. */
  notify_email: Type.Optional(Type.String({ format: 'email', maxLength: 254 })),
  /** cloud_to_svc only: what to bring in; omitted: everything under the connection's source_directory_ids. */
  files: Type.Optional(Type.Array(TransferFileRef, { minItems: 1, maxItems: 1000 })),
});
export type TransferBody = Static<typeof TransferBody>;

export const Transfer = Type.Object({
  id: Type.String(),
  package_id: Type.String(),
  cloud_connection_id: Type.String(),
  state: TransferState,
  created_at: Type.String(),
  updated_at: Type.String(),
  /** Why the last attempt failed (state error: why it was given up). */
  error: Type.Optional(Type.String()),
  /** Additions: */
  direction: Direction,
  /** portal: raised by the Package's finalize; manual: POST .../transfer. */
  trigger: Type.Union([Type.Literal('portal'), Type.Literal('manual')]),
  /** Files to move, once known (after the first attempt starts); files a filter left out are not counted. */
  files_total: Type.Integer(),
  files_done: Type.Integer(),
  bytes_total: Type.Integer(),
  bytes_done: Type.Integer(),
  /** Files of the Package the filter left out (svc_to_cloud). */
  files_filtered_out: Type.Integer(),
  /** Attempts so far. */
  attempts: Type.Integer(),
  /** svc_to_cloud: where the Package went, "bucket/folder/"; the manifest's key when one was written. */
  destination: Nullable(Type.String()),
  manifest_key: Nullable(Type.String()),
});
export type Transfer = Static<typeof Transfer>;

export const TransferParams = Type.Object({
  package_id: Type.String({ maxLength: 100 }),
  transfer_id: Type.String({ maxLength: 100 }),
});

export const TransfersQuery = Type.Object({
  limit: Type.Integer({ minimum: 1, maximum: 100, default: 50 }),
});
export type TransfersQuery = Static<typeof TransfersQuery>;

export const TransferList = Type.Object({ records: Type.Array(Transfer) });
export type TransferList = Static<typeof TransferList>;
