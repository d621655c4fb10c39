// GET /v1.1/portals/{portal_id}/packages: the Packages received through a Portal
// (a member of its Team, by API key or user token). Read-only.
import type { RouteModule } from '../app.js';
import { PortalParams } from '../../api/hosted/portals.js';
import { PortalPackageListPage, PortalPackageListQuery } from '../../api/hosted/portalPackages.js';
import { authenticateUser, teamViewer } from '../auth/credentials.js';
import { memberPortal } from '../services/portals.js';
import { listPortalPackages } from '../services/portalPackageList.js';

const routes: RouteModule = (app, ctx) => {
  app.get(
    '/v1.1/portals/:portal_id/packages',
    { schema: { params: PortalParams, querystring: PortalPackageListQuery, response: { 200: PortalPackageListPage } } },
    async (req) => {
      const who = await authenticateUser(ctx, req);
      const portal = await memberPortal(ctx, who, req.params.portal_id);
      return listPortalPackages(ctx, await teamViewer(ctx, who, portal.team_id, 'portal'), portal, req.query);
    },
  );
};
export default routes;
