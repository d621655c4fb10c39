// Realtime events as Server-Sent Events: a Package's stream (any token of that
// Package, or a member's credential) and a Team's stream (a member's API key or
// user token; only the Packages that member may read: services/visibility.ts).
// A stream opened with a user token ends once that token no longer stands.
import type { RouteModule } from '../app.js';
import { EventsQuery } from '../../api/hosted/events.js';
import { PackageParams, TeamParams } from '../../api/hosted/packages.js';
import { authenticateUser, authorizePackage, teamViewer, userTokenRecheck } from '../auth/credentials.js';
import { lastEventId, serveEventStream, typesOf } from '../events/stream.js';

const routes: RouteModule = (app, ctx) => {
  app.get('/v1/packages/:package_id/events', { schema: { params: PackageParams, querystring: EventsQuery } }, async (req, reply) => {
    const last = lastEventId(req, req.query.last_event_id);
    const types = typesOf(req.query.types);
    // 'read': the creator's token, an uploader's and a Link's all may watch.
    const { pkg } = await authorizePackage(ctx, req, req.params.package_id, 'read');
    await serveEventStream(ctx, req, reply, { packageId: pkg.id, ...(types ? { types } : {}) }, last, userTokenRecheck(ctx, req));
  });

  app.get('/v1/teams/:team_id/events', { schema: { params: TeamParams, querystring: EventsQuery } }, async (req, reply) => {
    const last = lastEventId(req, req.query.last_event_id);
    const types = typesOf(req.query.types);
    const viewer = await teamViewer(ctx, await authenticateUser(ctx, req), req.params.team_id);
    await serveEventStream(ctx, req, reply, { teamId: req.params.team_id, viewer, ...(types ? { types } : {}) }, last, userTokenRecheck(ctx, req));
  });
};
export default routes;
