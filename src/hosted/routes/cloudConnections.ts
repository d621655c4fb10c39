// Cloud connections: create, list, update (unprovided properties unchanged),
// delete (transfers in progress finish); additions: get one, and its transfers.
// Owners and Admins write; every member reads (secrets are masked).
import { Type } from 'typebox';
import type { RouteModule } from '../app.js';
import {
  CloudConnection,
  CloudConnectionParams,
  CreateCloudConnectionBody,
  TeamParams,
  TransferList,
  TransfersQuery,
  UpdateCloudConnectionBody,
} from '../../api/hosted/cloudConnections.js';
import { authenticateUser, teamMember, teamViewer } from '../auth/credentials.js';
import { connectionDto, createConnection, deleteConnection, listConnections, memberConnection, updateConnection } from '../services/cloudConnections.js';
import { listConnectionTransfers } from '../services/cloudTransfers.js';

const ADMINS = ['owner', 'admin'] as const;

const routes: RouteModule = (app, ctx) => {
  app.post(
    '/v1/teams/:team_id/cloud_connections',
    { schema: { params: TeamParams, body: CreateCloudConnectionBody, response: { 201: CloudConnection } } },
    async (req, reply) => {
      await teamMember(ctx, req, req.params.team_id, [...ADMINS]);
      const conn = await createConnection(ctx, req.params.team_id, req.body);
      reply.code(201);
      return conn;
    },
  );

  app.get('/v1/teams/:team_id/cloud_connections', { schema: { params: TeamParams, response: { 200: Type.Array(CloudConnection) } } }, async (req) => {
    await teamMember(ctx, req, req.params.team_id);
    return listConnections(ctx, req.params.team_id);
  });

  app.get('/v1/cloud_connections/:connection_id', { schema: { params: CloudConnectionParams, response: { 200: CloudConnection } } }, async (req) => {
    return connectionDto(ctx, await memberConnection(ctx, await authenticateUser(ctx, req), req.params.connection_id));
  });

  app.put(
    '/v1/cloud_connections/:connection_id',
    { schema: { params: CloudConnectionParams, body: UpdateCloudConnectionBody, response: { 200: CloudConnection } } },
    async (req) => {
      const conn = await memberConnection(ctx, await authenticateUser(ctx, req), req.params.connection_id, [...ADMINS]);
      return updateConnection(ctx, conn, req.body);
    },
  );

  app.delete('/v1/cloud_connections/:connection_id', { schema: { params: CloudConnectionParams } }, async (req, reply) => {
    const conn = await memberConnection(ctx, await authenticateUser(ctx, req), req.params.connection_id, [...ADMINS]);
    await deleteConnection(ctx, conn.id);
    reply.code(204).send();
  });

  app.get(
    '/v1/cloud_connections/:connection_id/transfers',
    { schema: { params: CloudConnectionParams, querystring: TransfersQuery, response: { 200: TransferList } } },
    async (req) => {
      const who = await authenticateUser(ctx, req);
      const conn = await memberConnection(ctx, who, req.params.connection_id);
      // Only transfers of Packages the caller may read (services/visibility.ts).
      return { records: await listConnectionTransfers(ctx, await teamViewer(ctx, who, conn.team_id), conn.id, req.query.limit) };
    },
  );
};
export default routes;
