// Storage gateways: GET /v1/storage_gateway/connect, upgraded to a WebSocket by
// the gateway (the agent) with its connection's id and secret in headers. A
// plain GET with good credentials answers 426 (the gateway's way to tell a bad
// secret from a network failure before it opens the socket); bad ones 401.
// POST /v1/cloud_connections/{id}/secret gives a gateway connection a new
// secret (shown once) and drops the gateway that used the old one.
import { createHash, timingSafeEqual } from 'node:crypto';
import type { FastifyRequest } from 'fastify';
import type { RouteModule } from '../app.js';
import type { HostedContext } from '../context.js';
import type { CloudConnectionsTable } from '../db/schema.js';
import { CloudConnectionParams, GatewaySecretAnswer } from '../../api/hosted/cloudConnections.js';
import { GATEWAY_CONNECT_PATH, GATEWAY_PROTOCOL, GatewayHeader, type GatewayPermissions } from '../../api/hosted/storageGateway.js';
import { authenticateUser } from '../auth/credentials.js';
import { badRequest, HttpError, unauthorized } from '../errors.js';
import { hasActiveTransfers, memberConnection, rotateGatewaySecret } from '../services/cloudConnections.js';

interface Hello {
  conn: CloudConnectionsTable;
  permissions: GatewayPermissions;
  version: string;
}

const header = (req: FastifyRequest, name: string): string | undefined => {
  const v = req.headers[name];
  return typeof v === 'string' ? v : undefined;
};

const sameHash = (a: string, b: string) => a.length === b.length && timingSafeEqual(Buffer.from(a), Buffer.from(b));

/** The connection a gateway's headers prove, and what it says of itself; 401 for unknown ids and wrong secrets alike. */
async function authenticateGateway(ctx: HostedContext, req: FastifyRequest): Promise<Hello> {
  const id = header(req, GatewayHeader.id);
  const secret = header(req, GatewayHeader.secret);
  if (!id || !secret || id.length > 100 || secret.length > 1024) throw unauthorized(`a storage gateway connects with its connection's id and secret (${GatewayHeader.id}, ${GatewayHeader.secret})`);
  const protocol = header(req, GatewayHeader.protocol);
  if (protocol !== String(GATEWAY_PROTOCOL)) {
    throw new HttpError(400, 'protocol_mismatch', `this service speaks storage gateway protocol ${GATEWAY_PROTOCOL}, the gateway ${protocol ?? 'none'}: update the agent`);
  }
  const permissions = header(req, GatewayHeader.permissions);
  if (permissions !== 'r' && permissions !== 'w') throw badRequest(`${GatewayHeader.permissions} must be r or w`, 'invalid_permissions');
  const conn = await ctx.db
    .selectFrom('cloud_connections')
    .selectAll()
    .where('id', '=', id)
    .where('provider', '=', 'storage_gateway')
    .executeTakeFirst();
  // A deleted connection's gateway may still connect to finish the transfers that were under way.
  if (conn?.deleted_at && !(await hasActiveTransfers(ctx.db, conn.id))) throw unauthorized('unknown storage gateway id, or a wrong secret');
  const hash = createHash('sha256').update(secret).digest('hex');
  if (!conn?.gateway_secret_hash || !sameHash(hash, conn.gateway_secret_hash)) throw unauthorized('unknown storage gateway id, or a wrong secret');
  return { conn, permissions, version: (header(req, GatewayHeader.version) ?? '').slice(0, 100) };
}

const hellos = new WeakMap<FastifyRequest, Hello>();

const routes: RouteModule = (app, ctx) => {
  app.route({
    method: 'GET',
    url: GATEWAY_CONNECT_PATH,
    preHandler: async (req) => {
      hellos.set(req, await authenticateGateway(ctx, req));
    },
    handler: async (_req, reply) => {
      reply.code(426).header('upgrade', 'websocket');
      return { code: 'upgrade_required', message: 'the id and secret are good; connect with a WebSocket (Upgrade: websocket)' };
    },
    wsHandler: (socket, req) => {
      const hello = hellos.get(req)!;
      ctx.gateways.attach(socket, hello.conn, { permissions: hello.permissions, version: hello.version }).catch((err) => {
        req.log.error({ err }, 'attaching a storage gateway failed');
        socket.terminate();
      });
    },
  });

  app.post(
    '/v1/cloud_connections/:connection_id/secret',
    { schema: { params: CloudConnectionParams, response: { 200: GatewaySecretAnswer } } },
    async (req) => {
      const conn = await memberConnection(ctx, await authenticateUser(ctx, req), req.params.connection_id, ['owner', 'admin']);
      return rotateGatewaySecret(ctx, conn);
    },
  );
};
export default routes;
