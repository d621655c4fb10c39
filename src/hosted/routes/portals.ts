// Portals: Team management (create, update, get, list, delete), the public view
// by subdomain, and Package creation through a Portal (access code or member).
import type { FastifyRequest } from 'fastify';
import type { RouteModule } from '../app.js';
import { Package } from '../../api/hosted/packages.js';
import {
  CreatePortalPackageBody,
  Portal,
  PortalBody,
  PortalListPage,
  PortalListQuery,
  PortalOrPublic,
  PortalParams,
  PublicPortal,
  SubdomainParams,
  TeamParams,
} from '../../api/hosted/portals.js';
import { authenticateUser, hasUserCredential, teamMember } from '../auth/credentials.js';
import { createPortal, deletePortal, listPortals, memberPortal, portalByAccessCode, publicPortal, toDto, updatePortal } from '../services/portals.js';
import { createPortalPackage } from '../services/portalPackages.js';
import { clientAddress } from '../ratelimit/plugin.js';

const ADMINS = ['owner', 'admin'] as const;

const accessCodeOf = (req: FastifyRequest) => {
  const v = req.headers['x-access-code'];
  return typeof v === 'string' && v.length > 0 ? v : undefined;
};

const routes: RouteModule = (app, ctx) => {
  app.post(
    '/v1/teams/:team_id/portals',
    { schema: { params: TeamParams, body: PortalBody, response: { 201: Portal } } },
    async (req, reply) => {
      await teamMember(ctx, req, req.params.team_id, [...ADMINS]);
      const portal = await createPortal(ctx, req.params.team_id, req.body);
      reply.code(201);
      return portal;
    },
  );

  app.put(
    '/v1/portals/:portal_id',
    { schema: { params: PortalParams, body: PortalBody, response: { 200: Portal } } },
    async (req) => {
      const who = await authenticateUser(ctx, req);
      return updatePortal(ctx, await memberPortal(ctx, who, req.params.portal_id, [...ADMINS]), req.body);
    },
  );

  // A Team credential wins over X-Access-Code when both are sent; the code gets the public view.
  app.get('/v1/portals/:portal_id', { schema: { params: PortalParams, response: { 200: PortalOrPublic } } }, async (req) =>
    hasUserCredential(req)
      ? toDto(ctx, await memberPortal(ctx, await authenticateUser(ctx, req), req.params.portal_id))
      : portalByAccessCode(ctx, req.params.portal_id, accessCodeOf(req), clientAddress(req)),
  );

  app.get(
    '/v1.1/teams/:team_id/portals',
    { schema: { params: TeamParams, querystring: PortalListQuery, response: { 200: PortalListPage } } },
    async (req) => {
      await teamMember(ctx, req, req.params.team_id);
      return listPortals(ctx, req.params.team_id, req.query);
    },
  );

  app.delete('/v1/portals/:portal_id', { schema: { params: PortalParams } }, async (req, reply) => {
    const who = await authenticateUser(ctx, req);
    await deletePortal(ctx, (await memberPortal(ctx, who, req.params.portal_id, [...ADMINS])).id);
    reply.code(204).send();
  });

  app.get('/v1/subdomains/portals/:subdomain', { schema: { params: SubdomainParams, response: { 200: PublicPortal } } }, async (req) =>
    publicPortal(ctx, req.params.subdomain),
  );

  app.post(
    '/v1/portals/:portal_id/packages',
    { schema: { params: PortalParams, body: CreatePortalPackageBody, response: { 201: Package } } },
    async (req, reply) => {
      const who = hasUserCredential(req) ? await authenticateUser(ctx, req) : undefined;
      const accessCode = accessCodeOf(req);
      const pkg = await createPortalPackage(ctx, req.params.portal_id, { ...(who ? { who } : {}), ...(accessCode !== undefined ? { accessCode } : {}), address: clientAddress(req) }, req.body);
      reply.code(201);
      return pkg;
    },
  );
};
export default routes;
