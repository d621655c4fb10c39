// Wire shapes of the agent's storage gateway routes (spec: Storage gateway):
// register, list, unregister, update, and (a Ferry addition) a new connection
// made on the service. The routes validate with these and the CLI takes its
// types from them.
import { Type, type Static } from 'typebox';

const NO_NUL = '^[^\\u0000]*$';
/** A uid or gid; -1 (update only) removes the override. */
const OwnerId = Type.Integer({ minimum: 0, maximum: 4_294_967_294 });
const OwnerIdOrRemove = Type.Integer({ minimum: -1, maximum: 4_294_967_294 });

/** The gateway's id is the id of its cloud connection on the service. */
const GatewayId = Type.String({ minLength: 1, maxLength: 100, pattern: '^[A-Za-z0-9_-]+$' });
const RootPath = Type.String({ minLength: 1, maxLength: 4096, pattern: NO_NUL });

export const RegisterGatewayBody = Type.Object({
  id: GatewayId,
  name: Type.String({ minLength: 1, maxLength: 255, pattern: NO_NUL }),
  /** r: serves files under root_path to the service (cloud_to_svc); w: receives deliveries into it (svc_to_cloud). */
  permissions: Type.Union([Type.Literal('r'), Type.Literal('w')]),
  /** Absolute; an existing folder. */
  root_path: RootPath,
  /** The secret the service answered when the connection was created. */
  secret: Type.String({ minLength: 1, maxLength: 1024, pattern: NO_NUL }),
  /** Owner of the files and folders written (not on Windows, not for read-only gateways). */
  user_id: Type.Optional(OwnerId),
  group_id: Type.Optional(OwnerId),
});
export type RegisterGatewayBody = Static<typeof RegisterGatewayBody>;

/**
 * POST /storage_gateway/connections (Ferry addition): a storage gateway connection
 * made on the service by the signed-in Owner or Admin, to register right after.
 */
export const NewConnectionBody = Type.Object({
  name: Type.String({ minLength: 1, maxLength: 255, pattern: NO_NUL }),
  /** As register's: w makes an svc_to_cloud connection (deliveries into the folder), r a cloud_to_svc one. */
  permissions: Type.Union([Type.Literal('r'), Type.Literal('w')]),
  /** The Team it belongs to; the session's first Team when not given. */
  team_id: Type.Optional(Type.String({ minLength: 1, maxLength: 100, pattern: '^[A-Za-z0-9_-]+$' })),
});
export type NewConnectionBody = Static<typeof NewConnectionBody>;

/** The connection made: its id and its secret, which the service shows this once. */
export const NewConnectionAnswer = Type.Object({
  id: Type.String(),
  secret: Type.String(),
  name: Type.String(),
  permissions: Type.Union([Type.Literal('r'), Type.Literal('w')]),
  team_id: Type.String(),
});
export type NewConnectionAnswer = Static<typeof NewConnectionAnswer>;

export const UpdateGatewayBody = Type.Object({
  id: GatewayId,
  root_path: Type.Optional(RootPath),
  /** -1 removes the override. */
  user_id: Type.Optional(OwnerIdOrRemove),
  group_id: Type.Optional(OwnerIdOrRemove),
});
export type UpdateGatewayBody = Static<typeof UpdateGatewayBody>;

export const UnregisterGatewayBody = Type.Object({ id: GatewayId });
export type UnregisterGatewayBody = Static<typeof UnregisterGatewayBody>;

/**
 * connecting: opening its socket; connected: the service can use it; waiting:
 * the last try failed (see last_error), the next is at next_attempt_at;
 * refused: the service refused its id or secret (the connection was deleted,
 * or its secret changed), tried again now and then; disconnected: unregistered
 * (the unregister answer).
 */
export const GatewayState = Type.Union([
  Type.Literal('connecting'),
  Type.Literal('connected'),
  Type.Literal('waiting'),
  Type.Literal('refused'),
  Type.Literal('disconnected'),
]);
export type GatewayState = Static<typeof GatewayState>;

export const GatewayTransferState = Type.Union([Type.Literal('running'), Type.Literal('complete'), Type.Literal('error')]);

/** A transfer the gateway took part in, as it saw it. */
export const GatewayTransfer = Type.Object({
  transfer_id: Type.String(),
  /** svc_to_cloud: a Package delivered into the root; cloud_to_svc: files of the root sent as a Package. */
  direction: Type.Union([Type.Literal('svc_to_cloud'), Type.Literal('cloud_to_svc')]),
  package_id: Type.String(),
  package_name: Type.String(),
  /** svc_to_cloud: the Package's folder, absolute. */
  folder: Type.Union([Type.String(), Type.Null()]),
  state: GatewayTransferState,
  files_total: Type.Integer(),
  files_done: Type.Integer(),
  bytes_total: Type.Integer(),
  bytes_done: Type.Integer(),
  error: Type.Union([Type.String(), Type.Null()]),
  created_at: Type.String(),
  updated_at: Type.String(),
});
export type GatewayTransfer = Static<typeof GatewayTransfer>;

export const GatewayRecord = Type.Object({
  id: Type.String(),
  name: Type.String(),
  root_path: Type.String(),
  permissions: Type.Union([Type.Literal('r'), Type.Literal('w')]),
  /** Always the mask: the secret is kept, never shown. */
  secret: Type.String(),
  user_id: Type.Union([Type.Integer(), Type.Null()]),
  group_id: Type.Union([Type.Integer(), Type.Null()]),
  /** The service it connects to (the agent's hosted_url when it was registered). */
  service_url: Type.String(),
  state: GatewayState,
  last_error: Type.Union([Type.String(), Type.Null()]),
  connected_at: Type.Union([Type.String(), Type.Null()]),
  next_attempt_at: Type.Union([Type.String(), Type.Null()]),
  /** The latest transfers, newest first (at most 20). */
  transfers: Type.Array(GatewayTransfer),
  created_at: Type.String(),
  /** When anything in the record last changed: its settings, the connection's state, a transfer. */
  updated_at: Type.String(),
});
export type GatewayRecord = Static<typeof GatewayRecord>;

export const GatewayList = Type.Array(GatewayRecord);

export const SECRET_MASK = '********';
