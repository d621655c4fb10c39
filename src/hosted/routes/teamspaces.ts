// Teamspaces: create, read, list (/v1.1), rename, delete, their Packages (/v1.1)
// and their members. Owners and Admins read and manage all of them; a member reads
// the Teamspaces they belong to (others answer 404) and manages none (403).
import type { FastifyRequest } from 'fastify';
import { Type } from 'typebox';
import type { RouteModule } from '../app.js';
import type { HostedContext } from '../context.js';
import type { Role, TeamspacesTable } from '../db/schema.js';
import {
  AddMembersBody,
  CreateTeamspaceBody,
  SpaceMemberParams,
  SpaceParams,
  TeamParams,
  Teamspace,
  TeamspaceListPage,
  TeamspaceListQuery,
  TeamspaceMember,
  TeamspacePackageList,
  TeamspacePackagesQuery,
  UpdateTeamspaceBody,
} from '../../api/hosted/teamspaces.js';
import { authenticateUser, requireRole, teamViewer } from '../auth/credentials.js';
import { notFound } from '../errors.js';
import type { Viewer } from '../services/visibility.js';
import {
  addMembers,
  canSeeTeamspace,
  createTeamspace,
  deleteTeamspace,
  findTeamspace,
  listMembers,
  listSpacePackages,
  listTeamspaces,
  removeMember,
  renameTeamspace,
  teamspaceDto,
} from '../services/teamspaces.js';

const ADMINS: Role[] = ['owner', 'admin'];

/** The Teamspace when the caller may read it (404 otherwise), and, with `manage`, change it (403). */
async function spaceFor(ctx: HostedContext, req: FastifyRequest, spaceId: string, manage = false): Promise<{ space: TeamspacesTable; viewer: Viewer }> {
  const who = await authenticateUser(ctx, req);
  const space = await findTeamspace(ctx.db, spaceId);
  if (!space) throw notFound('teamspace');
  const viewer = await teamViewer(ctx, who, space.team_id, 'teamspace');
  if (!(await canSeeTeamspace(ctx.db, viewer, space.id))) throw notFound('teamspace');
  if (manage) requireRole(viewer.role, ADMINS);
  return { space, viewer };
}

const routes: RouteModule = (app, ctx) => {
  app.post('/v1/teams/:team_id/spaces', { schema: { params: TeamParams, body: CreateTeamspaceBody, response: { 201: Teamspace } } }, async (req, reply) => {
    const viewer = await teamViewer(ctx, await authenticateUser(ctx, req), req.params.team_id);
    requireRole(viewer.role, ADMINS);
    const space = await createTeamspace(ctx, req.params.team_id, req.body);
    reply.code(201);
    return space;
  });

  app.get('/v1.1/teams/:team_id/spaces', { schema: { params: TeamParams, querystring: TeamspaceListQuery, response: { 200: TeamspaceListPage } } }, async (req) => {
    const viewer = await teamViewer(ctx, await authenticateUser(ctx, req), req.params.team_id);
    return listTeamspaces(ctx, viewer, req.query);
  });

  app.get('/v1/spaces/:space_id', { schema: { params: SpaceParams, response: { 200: Teamspace } } }, async (req) => {
    return teamspaceDto(ctx, (await spaceFor(ctx, req, req.params.space_id)).space);
  });

  app.put('/v1/spaces/:space_id', { schema: { params: SpaceParams, body: UpdateTeamspaceBody, response: { 200: Teamspace } } }, async (req) => {
    return renameTeamspace(ctx, (await spaceFor(ctx, req, req.params.space_id, true)).space, req.body.name);
  });

  app.delete('/v1/spaces/:space_id', { schema: { params: SpaceParams } }, async (req, reply) => {
    await deleteTeamspace(ctx, (await spaceFor(ctx, req, req.params.space_id, true)).space);
    reply.code(204).send();
  });

  app.get(
    '/v1.1/spaces/:space_id/packages',
    { schema: { params: SpaceParams, querystring: TeamspacePackagesQuery, response: { 200: TeamspacePackageList } } },
    async (req) => {
      const { space, viewer } = await spaceFor(ctx, req, req.params.space_id);
      return listSpacePackages(ctx, viewer, space, req.query);
    },
  );

  app.post('/v1/spaces/:space_id/members', { schema: { params: SpaceParams, body: AddMembersBody, response: { 201: Type.Array(TeamspaceMember) } } }, async (req, reply) => {
    const added = await addMembers(ctx, (await spaceFor(ctx, req, req.params.space_id, true)).space, req.body);
    reply.code(201);
    return added;
  });

  app.get('/v1/spaces/:space_id/members', { schema: { params: SpaceParams, response: { 200: Type.Array(TeamspaceMember) } } }, async (req) => {
    return listMembers(ctx, (await spaceFor(ctx, req, req.params.space_id)).space.id);
  });

  app.delete('/v1/spaces/:space_id/members/:teamspace_membership_id', { schema: { params: SpaceMemberParams } }, async (req, reply) => {
    await removeMember(ctx, (await spaceFor(ctx, req, req.params.space_id, true)).space, req.params.teamspace_membership_id);
    reply.code(204).send();
  });
};
export default routes;
