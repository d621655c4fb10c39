// Tags of a Team: create, list, delete.
import { Type } from 'typebox';
import type { RouteModule } from '../app.js';
import { CreateTagBody, Tag, TagParams, TeamParams } from '../../api/hosted/tags.js';
import { authenticateUser, requireRole, teamMember, teamRole } from '../auth/credentials.js';
import { notFound } from '../errors.js';
import { createTag, deleteTag, findTag, listTags } from '../services/tags.js';

const routes: RouteModule = (app, ctx) => {
  // Owners and Admins (docs/hosted-api-notes/roles.md); a tag reference by name on a Package still creates one.
  app.post('/v1/teams/:team_id/tags', { schema: { params: TeamParams, body: CreateTagBody, response: { 201: Tag } } }, async (req, reply) => {
    await teamMember(ctx, req, req.params.team_id, ['owner', 'admin']);
    reply.code(201);
    return createTag(ctx, req.params.team_id, req.body.name);
  });

  app.get('/v1/teams/:team_id/tags', { schema: { params: TeamParams, response: { 200: Type.Array(Tag) } } }, async (req) => {
    await teamMember(ctx, req, req.params.team_id);
    return listTags(ctx, req.params.team_id);
  });

  // Removing a tag touches every Package of the Team, so it is for Owners and Admins.
  app.delete('/v1/tags/:tag_id', { schema: { params: TagParams } }, async (req, reply) => {
    const who = await authenticateUser(ctx, req);
    const tag = await findTag(ctx, req.params.tag_id);
    if (!tag) throw notFound('tag');
    requireRole(await teamRole(ctx, who, tag.team_id, 'tag'), ['owner', 'admin']);
    await deleteTag(ctx, tag.id);
    reply.code(204).send();
  });
};
export default routes;
