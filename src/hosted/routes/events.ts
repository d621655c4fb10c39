// Realtime events as Server-Sent Events: a Package's stream (any token of that
// Package, or a member's credential) and a Team's stream (a member's API key or
// user token; only the Packages that member may read: services/visibility.ts).
// A stream opened with a user token ends once that token no longer stands.
import type { RouteModule } from '../app.js';
import { EventsQuery } from '../../api/hosted/events.js';
import { PackageParams, TeamParams } from '../../api/hosted/packages.js';
import type { FastifyRequest } from 'fastify';
import type { HostedContext } from '../context.js';
import { authenticateUser, authorizePackage, teamViewer, userTokenRecheck, type UserPrincipal } from '../auth/credentials.js';
import { hashSecret } from '../auth/passwords.js';
import { lastEventId, serveEventStream, typesOf, type StreamHolder } from '../events/stream.js';

/**
 * Whose stream it is, for the cap of open streams: a user's (all their tokens and
 * sign-ins together), an API key's, or a package token's (by its hash); a user
 * token's stream ends when its session does.
 */
function streamHolder(ctx: HostedContext, req: FastifyRequest, who: UserPrincipal | undefined): StreamHolder {
  const recheck = userTokenRecheck(ctx, req);
  const key = who ? (who.apiKey ? `key:${who.apiKey.id}` : `user:${who.userId}`) : `pkg:${hashSecret(String(req.headers['x-package-token']))}`;
  return { key, ...(recheck ? { recheck } : {}) };
}

const routes: RouteModule = (app, ctx) => {
  app.get('/v1/packages/:package_id/events', { schema: { params: PackageParams, querystring: EventsQuery } }, async (req, reply) => {
    const last = lastEventId(req, req.query.last_event_id);
    const types = typesOf(req.query.types);
    // 'read': the creator's token and a Link's may watch; an anonymous Portal uploader's reads nothing.
    const grant = await authorizePackage(ctx, req, req.params.package_id, 'read');
    await serveEventStream(ctx, req, reply, { packageId: grant.pkg.id, ...(types ? { types } : {}) }, last, streamHolder(ctx, req, grant.user));
  });

  app.get('/v1/teams/:team_id/events', { schema: { params: TeamParams, querystring: EventsQuery } }, async (req, reply) => {
    const last = lastEventId(req, req.query.last_event_id);
    const types = typesOf(req.query.types);
    const who = await authenticateUser(ctx, req);
    const viewer = await teamViewer(ctx, who, req.params.team_id);
    await serveEventStream(ctx, req, reply, { teamId: req.params.team_id, viewer, ...(types ? { types } : {}) }, last, streamHolder(ctx, req, who));
  });
};
export default routes;
