// Custom webhooks: create, update, delete, list; and (additions) get one and
// the record of its events' delivery attempts. Owners and Admins only: the
// headers often carry the receiver's shared secret.
import { Type } from 'typebox';
import type { RouteModule } from '../app.js';
import { CustomWebhook, CustomWebhookBody, CustomWebhookParams, TeamParams, WebhookEventsPage, WebhookEventsQuery } from '../../api/hosted/customWebhooks.js';
import { authenticateUser, teamMember } from '../auth/credentials.js';
import { createWebhook, deleteWebhook, listWebhooks, memberWebhook, toDto, updateWebhook } from '../services/customWebhooks.js';
import { listWebhookEvents } from '../services/webhookEvents.js';

const ADMINS = ['owner', 'admin'] as const;

const routes: RouteModule = (app, ctx) => {
  app.post(
    '/v1/teams/:team_id/custom_webhooks',
    { schema: { params: TeamParams, body: CustomWebhookBody, response: { 201: CustomWebhook } } },
    async (req, reply) => {
      await teamMember(ctx, req, req.params.team_id, [...ADMINS]);
      const hook = await createWebhook(ctx, req.params.team_id, req.body);
      reply.code(201);
      return hook;
    },
  );

  app.get('/v1/teams/:team_id/custom_webhooks', { schema: { params: TeamParams, response: { 200: Type.Array(CustomWebhook) } } }, async (req) => {
    await teamMember(ctx, req, req.params.team_id, [...ADMINS]);
    return listWebhooks(ctx, req.params.team_id);
  });

  app.get('/v1/custom_webhooks/:custom_webhook_id', { schema: { params: CustomWebhookParams, response: { 200: CustomWebhook } } }, async (req) => {
    const who = await authenticateUser(ctx, req);
    return toDto(ctx, await memberWebhook(ctx, who, req.params.custom_webhook_id, [...ADMINS]));
  });

  app.put(
    '/v1/custom_webhooks/:custom_webhook_id',
    { schema: { params: CustomWebhookParams, body: CustomWebhookBody, response: { 200: CustomWebhook } } },
    async (req) => {
      const who = await authenticateUser(ctx, req);
      return updateWebhook(ctx, await memberWebhook(ctx, who, req.params.custom_webhook_id, [...ADMINS]), req.body);
    },
  );

  app.delete('/v1/custom_webhooks/:custom_webhook_id', { schema: { params: CustomWebhookParams } }, async (req, reply) => {
    const who = await authenticateUser(ctx, req);
    await deleteWebhook(ctx, (await memberWebhook(ctx, who, req.params.custom_webhook_id, [...ADMINS])).id);
    reply.code(204).send();
  });

  app.get(
    '/v1/custom_webhooks/:custom_webhook_id/events',
    { schema: { params: CustomWebhookParams, querystring: WebhookEventsQuery, response: { 200: WebhookEventsPage } } },
    async (req) => {
      const who = await authenticateUser(ctx, req);
      const hook = await memberWebhook(ctx, who, req.params.custom_webhook_id, [...ADMINS]);
      return { records: await listWebhookEvents(ctx, hook.id, req.query.limit) };
    },
  );
};
export default routes;
