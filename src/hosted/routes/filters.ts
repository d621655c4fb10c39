// Filters: create, get, update (rules overwrite), delete; and the Team's list (an addition).
import { Type } from 'typebox';
import type { RouteModule } from '../app.js';
import { CreateFilterBody, Filter, FilterParams, TeamParams, UpdateFilterBody } from '../../api/hosted/filters.js';
import { authenticateUser, teamMember } from '../auth/credentials.js';
import { createFilter, deleteFilter, filterDto, listFilters, memberFilter, updateFilter } from '../services/filters.js';

const ADMINS = ['owner', 'admin'] as const;

const routes: RouteModule = (app, ctx) => {
  app.post('/v1/teams/:team_id/filters', { schema: { params: TeamParams, body: CreateFilterBody, response: { 201: Filter } } }, async (req, reply) => {
    await teamMember(ctx, req, req.params.team_id, [...ADMINS]);
    const filter = await createFilter(ctx, req.params.team_id, req.body);
    reply.code(201);
    return filter;
  });

  app.get('/v1/teams/:team_id/filters', { schema: { params: TeamParams, response: { 200: Type.Array(Filter) } } }, async (req) => {
    await teamMember(ctx, req, req.params.team_id);
    return listFilters(ctx, req.params.team_id);
  });

  app.get('/v1/filters/:filter_id', { schema: { params: FilterParams, response: { 200: Filter } } }, async (req) => {
    return filterDto(await memberFilter(ctx, await authenticateUser(ctx, req), req.params.filter_id));
  });

  app.put('/v1/filters/:filter_id', { schema: { params: FilterParams, body: UpdateFilterBody, response: { 200: Filter } } }, async (req) => {
    const filter = await memberFilter(ctx, await authenticateUser(ctx, req), req.params.filter_id, [...ADMINS]);
    return updateFilter(ctx, filter, req.body);
  });

  app.delete('/v1/filters/:filter_id', { schema: { params: FilterParams } }, async (req, reply) => {
    const filter = await memberFilter(ctx, await authenticateUser(ctx, req), req.params.filter_id, [...ADMINS]);
    await deleteFilter(ctx, filter.id);
    reply.code(204).send();
  });
};
export default routes;
