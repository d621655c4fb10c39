// GET /v1.1/teams/{team_id}/packages: the paged, filtered Team Package list.
import type { RouteModule } from '../app.js';
import { PackageListPage, PackageListQuery, TeamParams } from '../../api/hosted/packages.js';
import { authenticateUser, teamViewer } from '../auth/credentials.js';
import { listTeamPackages } from '../services/packageList.js';

const routes: RouteModule = (app, ctx) => {
  app.get(
    '/v1.1/teams/:team_id/packages',
    { schema: { params: TeamParams, querystring: PackageListQuery, response: { 200: PackageListPage } } },
    async (req) => {
      const viewer = await teamViewer(ctx, await authenticateUser(ctx, req), req.params.team_id);
      return listTeamPackages(ctx, viewer, req.query);
    },
  );
};
export default routes;
