// API key management. Every route takes X-User-Token only: a key cannot mint,
// widen or revive keys. Admins manage their own keys, Owners all of the Team's.
import type { FastifyRequest } from 'fastify';
import type { RouteModule } from '../app.js';
import type { HostedContext } from '../context.js';
import { ApiKey, ApiKeyIdParams, ApiKeyList, CreateApiKeyBody, UpdateApiKeyBody } from '../../api/hosted/apiKeys.js';
import { TeamIdParams } from '../../api/hosted/teams.js';
import { authenticateUserToken, teamRole } from '../auth/credentials.js';
import { createApiKey, deleteApiKey, getApiKey, listApiKeys, setApiKeyState, updateApiKey } from '../services/apiKeys.js';

const sessionUser = async (ctx: HostedContext, req: FastifyRequest): Promise<string> =>
  (await authenticateUserToken(ctx, req, 'API keys are managed with X-User-Token, not X-API-KEY')).userId;

const routes: RouteModule = (app, ctx) => {
  app.post(
    '/v1/teams/:team_id/api_keys',
    { schema: { params: TeamIdParams, body: CreateApiKeyBody, response: { 201: ApiKey } } },
    async (req, reply) => {
      const userId = await sessionUser(ctx, req);
      const role = await teamRole(ctx, { userId }, req.params.team_id);
      reply.code(201);
      return createApiKey(ctx.db, req.params.team_id, userId, role, req.body);
    },
  );

  app.get('/v1/teams/:team_id/api_keys', { schema: { params: TeamIdParams, response: { 200: ApiKeyList } } }, async (req) => {
    const userId = await sessionUser(ctx, req);
    const role = await teamRole(ctx, { userId }, req.params.team_id);
    return listApiKeys(ctx.db, req.params.team_id, userId, role);
  });

  app.get('/v1/api_keys/:api_key_id', { schema: { params: ApiKeyIdParams, response: { 200: ApiKey } } }, async (req) =>
    getApiKey(ctx.db, await sessionUser(ctx, req), req.params.api_key_id),
  );

  app.put(
    '/v1/api_keys/:api_key_id',
    { schema: { params: ApiKeyIdParams, body: UpdateApiKeyBody, response: { 200: ApiKey } } },
    async (req) => updateApiKey(ctx.db, await sessionUser(ctx, req), req.params.api_key_id, req.body),
  );

  app.put('/v1/api_keys/:api_key_id/activate', { schema: { params: ApiKeyIdParams, response: { 200: ApiKey } } }, async (req) =>
    setApiKeyState(ctx.db, await sessionUser(ctx, req), req.params.api_key_id, 'active'),
  );

  app.put('/v1/api_keys/:api_key_id/deactivate', { schema: { params: ApiKeyIdParams, response: { 200: ApiKey } } }, async (req) =>
    setApiKeyState(ctx.db, await sessionUser(ctx, req), req.params.api_key_id, 'inactive'),
  );

  app.delete('/v1/api_keys/:api_key_id', { schema: { params: ApiKeyIdParams } }, async (req, reply) => {
    await deleteApiKey(ctx.db, await sessionUser(ctx, req), req.params.api_key_id);
    return reply.code(204).send();
  });
};
export default routes;
