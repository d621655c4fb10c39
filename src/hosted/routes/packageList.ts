// GET /v1.1/teams/{team_id}/packages: the paged, filtered Team Package list.
import type { RouteModule } from '../app.js';
import { PackageListPage, PackageListQuery, TeamParams } from '../../api/hosted/packages.js';
import { teamMember } from '../auth/credentials.js';
import { listTeamPackages } from '../services/packageList.js';

const routes: RouteModule = (app, ctx) => {
  app.get(
    '/v1.1/teams/:team_id/packages',
    { schema: { params: TeamParams, querystring: PackageListQuery, response: { 200: PackageListPage } } },
    async (req) => {
      await teamMember(ctx, req, req.params.team_id);
      return listTeamPackages(ctx, req.params.team_id, req.query);
    },
  );
};
export default routes;
