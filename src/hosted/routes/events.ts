// Realtime events as Server-Sent Events: a Package's stream (any token of that
// Package, or a member's credential) and a Team's stream (a member's API key or
// user token; only the Packages that member may read: services/visibility.ts).
import type { RouteModule } from '../app.js';
import { EventsQuery } from '../../api/hosted/events.js';
import { PackageParams, TeamParams } from '../../api/hosted/packages.js';
import { authenticateUser, authorizePackage, teamViewer } from '../auth/credentials.js';
import { lastEventId, serveEventStream, typesOf } from '../events/stream.js';

const routes: RouteModule = (app, ctx) => {
  app.get('/v1/packages/:package_id/events', { schema: { params: PackageParams, querystring: EventsQuery } }, async (req, reply) => {
    const last = lastEventId(req, req.query.last_event_id);
    const types = typesOf(req.query.types);
    // 'read': the creator's token and a Link's may watch; an anonymous Portal uploader's reads nothing.
    const { pkg } = await authorizePackage(ctx, req, req.params.package_id, 'read');
    await serveEventStream(ctx, req, reply, { packageId: pkg.id, ...(types ? { types } : {}) }, last);
  });

  app.get('/v1/teams/:team_id/events', { schema: { params: TeamParams, querystring: EventsQuery } }, async (req, reply) => {
    const last = lastEventId(req, req.query.last_event_id);
    const types = typesOf(req.query.types);
    const viewer = await teamViewer(ctx, await authenticateUser(ctx, req), req.params.team_id);
    await serveEventStream(ctx, req, reply, { teamId: req.params.team_id, viewer, ...(types ? { types } : {}) }, last);
  });
};
export default routes;
