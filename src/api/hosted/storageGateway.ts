// The storage gateway's socket: a gateway (the agent, on the user's NAS or SAN)
// connects OUT to the service with GET /v1/storage_gateway/connect upgraded to a
// WebSocket, authenticated by its cloud connection's id and secret in headers;
// the service never connects into the user's network. Over the socket the
// service sends requests and the gateway replies, one JSON text frame each:
//
//   service -> gateway  {type: 'welcome', ...}           once, first
//                       {type: 'tick'}                   every heartbeat_ms (liveness)
//                       {type: 'request', id, op, args}
//   gateway -> service  {type: 'reply', id, ok: true, value} | {type: 'reply', id, ok: false, error: {code, message}}
//                       {type: 'progress', transfer_id, seq, bytes}   (a file's bytes so far; informative)
//
// The service drives every transfer: it tells the gateway what to fetch
// (deliver.*: pre-signed GET URLs of its store) or what to send (collect.*:
// part blueprints of its store), and records each reply in its own tables, so a
// dropped socket resumes where it stopped. File bytes never pass through the
// socket or the service. Both sides check every frame with these schemas.
import { Type, type Static } from 'typebox';

/** Bumped when a frame changes incompatibly; the service refuses a gateway that speaks another one. */
export const GATEWAY_PROTOCOL = 1;

export const GATEWAY_CONNECT_PATH = '/v1/storage_gateway/connect';

/** Request headers of the connect request. */
export const GatewayHeader = {
  id: 'x-gateway-id',
  secret: 'x-gateway-secret',
  /** r (serves files to the service: cloud_to_svc) or w (receives deliveries: svc_to_cloud). */
  permissions: 'x-gateway-permissions',
  protocol: 'x-gateway-protocol',
  /** The agent's version, shown on the connection. */
  version: 'x-gateway-version',
} as const;

/** WebSocket close codes the service uses; the gateway reacts to each. */
export const GatewayClose = {
  /** Another gateway connected with the same id: this one waits before it tries again. */
  replaced: 4001,
  /** The connection was deleted or its secret changed: the gateway's credentials no longer work. */
  revoked: 4003,
  /** The service is stopping. */
  shutdown: 4010,
  /** The gateway sent something that is not a frame of this protocol. */
  protocol: 4002,
} as const;

export const GatewayPermissions = Type.Union([Type.Literal('r'), Type.Literal('w')]);
export type GatewayPermissions = Static<typeof GatewayPermissions>;

const Id = Type.String({ minLength: 1, maxLength: 100 });
/** A `/`-separated path below the gateway's root, as the service names it (the gateway checks it again). */
const RelPath = Type.String({ minLength: 0, maxLength: 4096 });
const Size = Type.Integer({ minimum: 0, maximum: Number.MAX_SAFE_INTEGER });

export const Welcome = Type.Object({
  type: Type.Literal('welcome'),
  protocol: Type.Integer(),
  connection_id: Id,
  name: Type.String(),
  direction: Type.Union([Type.Literal('svc_to_cloud'), Type.Literal('cloud_to_svc')]),
  /** The service sends a frame at least this often; a gateway that hears nothing for 3 times as long reconnects. */
  heartbeat_ms: Type.Integer({ minimum: 1 }),
});
export type Welcome = Static<typeof Welcome>;

/** Each operation: its arguments and what a successful reply carries. */
export const GatewayOps = {
  /** A Package is about to be delivered (svc_to_cloud): the gateway records it. Repeated by every attempt. */
  'deliver.begin': {
    args: Type.Object({
      transfer_id: Id,
      package_id: Id,
      package_name: Type.String({ maxLength: 1024 }),
      /** The Package's folder below the root ("target_directory_id/name (id)"). */
      folder: RelPath,
      files_total: Size,
      bytes_total: Size,
    }),
    value: Type.Object({}),
  },
  /** One file to fetch and write at `path` below the root. Answered once the file is whole and in place. */
  'deliver.file': {
    args: Type.Object({
      transfer_id: Id,
      /** The file's number in the transfer: the gateway keeps its progress under it. */
      seq: Type.Integer({ minimum: 1 }),
      path: RelPath,
      size: Size,
      /** A pre-signed GET of the service's store; it may expire (the reply is then url_expired, and a fresh one comes). */
      url: Type.String({ minLength: 1, maxLength: 16_384 }),
      last_modified: Type.Optional(Type.String({ maxLength: 64 })),
    }),
    value: Type.Object({ size: Size }),
  },
  /** The delivery ended (ok, or given up with `error`). */
  'deliver.end': {
    args: Type.Object({ transfer_id: Id, ok: Type.Boolean(), error: Type.Optional(Type.String({ maxLength: 4096 })) }),
    value: Type.Object({}),
  },
  /**
   * cloud_to_svc: the files under `refs` (each "" for the whole root, "folder/"
   * or "folder" for a folder, "a/b.txt" for one file), recursively.
   */
  'collect.list': {
    args: Type.Object({
      transfer_id: Id,
      package_id: Id,
      package_name: Type.String({ maxLength: 1024 }),
      refs: Type.Array(RelPath, { minItems: 1, maxItems: 1000 }),
    }),
    value: Type.Object({
      files: Type.Array(Type.Object({ path: RelPath, size: Size, mtime_ms: Size }), { maxItems: 10_000 }),
    }),
  },
  /** Sends bytes offset..offset+length-1 of a listed file with the blueprint; answers the store's ETag. */
  'collect.part': {
    args: Type.Object({
      transfer_id: Id,
      seq: Type.Integer({ minimum: 1 }),
      path: RelPath,
      /** As listed: a file that no longer has this size and mtime is refused (file_changed). */
      size: Size,
      mtime_ms: Size,
      offset: Size,
      length: Size,
      blueprint: Type.Object({
        url: Type.String({ minLength: 1, maxLength: 16_384 }),
        method: Type.Union([Type.Literal('GET'), Type.Literal('POST'), Type.Literal('PUT'), Type.Literal('DELETE')]),
        headers: Type.Record(Type.String(), Type.String()),
        body: Type.String({ maxLength: 0 }),
      }),
    }),
    value: Type.Object({ etag: Type.String({ minLength: 1, maxLength: 200 }) }),
  },
  'collect.end': {
    args: Type.Object({ transfer_id: Id, ok: Type.Boolean(), error: Type.Optional(Type.String({ maxLength: 4096 })) }),
    value: Type.Object({}),
  },
} as const;

export type GatewayOp = keyof typeof GatewayOps;
export const GATEWAY_OPS = Object.keys(GatewayOps) as GatewayOp[];
export type OpArgs<O extends GatewayOp> = Static<(typeof GatewayOps)[O]['args']>;
export type OpValue<O extends GatewayOp> = Static<(typeof GatewayOps)[O]['value']>;

/**
 * Why a gateway refused a request. permission_denied, unsafe_path and
 * file_changed do not change on a retry; url_expired asks for a fresh URL;
 * failed (a download, a read, the disk) may pass later.
 */
export const GatewayErrorCode = Type.Union([
  Type.Literal('permission_denied'),
  Type.Literal('unsafe_path'),
  Type.Literal('not_found'),
  Type.Literal('file_changed'),
  Type.Literal('too_many_files'),
  Type.Literal('url_expired'),
  Type.Literal('bad_request'),
  Type.Literal('failed'),
]);
export type GatewayErrorCode = Static<typeof GatewayErrorCode>;

export const GatewayRequest = Type.Object({
  type: Type.Literal('request'),
  id: Type.Integer({ minimum: 1 }),
  op: Type.Union(GATEWAY_OPS.map((o) => Type.Literal(o))),
  args: Type.Record(Type.String(), Type.Unknown()),
});
export type GatewayRequest = Static<typeof GatewayRequest>;

export const GatewayReply = Type.Union([
  Type.Object({ type: Type.Literal('reply'), id: Type.Integer({ minimum: 1 }), ok: Type.Literal(true), value: Type.Record(Type.String(), Type.Unknown()) }),
  Type.Object({
    type: Type.Literal('reply'),
    id: Type.Integer({ minimum: 1 }),
    ok: Type.Literal(false),
    error: Type.Object({ code: GatewayErrorCode, message: Type.String({ maxLength: 4096 }) }),
  }),
]);
export type GatewayReply = Static<typeof GatewayReply>;

export const GatewayProgress = Type.Object({
  type: Type.Literal('progress'),
  transfer_id: Id,
  seq: Type.Integer({ minimum: 1 }),
  bytes: Size,
});
export type GatewayProgress = Static<typeof GatewayProgress>;

/** Largest frame either side takes (a listing of 10,000 files with long paths). */
export const GATEWAY_MAX_FRAME = 16 * 1024 * 1024;
