// Team Packages: create, read, update, expiry, delete, archive and unarchive.
import type { RouteModule } from '../app.js';
import { CreatePackageBody, ExpiryBody, Package, PackageParams, TeamParams, UpdatePackageBody } from '../../api/hosted/packages.js';
import { authenticateUser, authorizePackage, teamViewer } from '../auth/credentials.js';
import { createTeamPackage, packageDto, updatePackage } from '../services/packages.js';
import { archivePackage, deletePackage, setPackageExpiry, unarchivePackage } from '../services/packageLifecycle.js';

const routes: RouteModule = (app, ctx) => {
  app.post(
    '/v1/teams/:team_id/packages',
    { schema: { params: TeamParams, body: CreatePackageBody, response: { 201: Package } } },
    async (req, reply) => {
      const viewer = await teamViewer(ctx, await authenticateUser(ctx, req), req.params.team_id);
      reply.code(201);
      return createTeamPackage(ctx, viewer, req.body);
    },
  );

  // An anonymous Portal uploader may read the Package's own state (to resume, or to learn that a
  // finalize whose answer was lost went through): recipients hidden, its own token back.
  app.get('/v1/packages/:package_id', { schema: { params: PackageParams, response: { 200: Package } } }, async (req) => {
    const { pkg, access, token } = await authorizePackage(ctx, req, req.params.package_id, 'upload');
    return access === 'upload' ? packageDto(ctx, pkg, undefined, 'upload', undefined, token) : packageDto(ctx, pkg);
  });

  app.put(
    '/v1/packages/:package_id',
    { schema: { params: PackageParams, body: UpdatePackageBody, response: { 200: Package } } },
    async (req) => {
      const { pkg } = await authorizePackage(ctx, req, req.params.package_id, 'full');
      return updatePackage(ctx, pkg, req.body);
    },
  );

  app.put(
    '/v1/packages/:package_id/expiry',
    { schema: { params: PackageParams, body: ExpiryBody, response: { 200: Package } } },
    async (req) => {
      const { pkg } = await authorizePackage(ctx, req, req.params.package_id, 'full');
      return setPackageExpiry(ctx, pkg, req.body);
    },
  );

  app.delete('/v1/packages/:package_id', { schema: { params: PackageParams } }, async (req, reply) => {
    const { pkg } = await authorizePackage(ctx, req, req.params.package_id, 'full');
    await deletePackage(ctx, pkg);
    reply.code(204).send();
  });

  app.put('/v1/packages/:package_id/archive', { schema: { params: PackageParams } }, async (req, reply) => {
    const { pkg } = await authorizePackage(ctx, req, req.params.package_id, 'full');
    await archivePackage(ctx, pkg);
    reply.code(204).send();
  });

  app.put('/v1/packages/:package_id/unarchive', { schema: { params: PackageParams } }, async (req, reply) => {
    const { pkg } = await authorizePackage(ctx, req, req.params.package_id, 'full');
    await unarchivePackage(ctx, pkg);
    reply.code(204).send();
  });
};
export default routes;
