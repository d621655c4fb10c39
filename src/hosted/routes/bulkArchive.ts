// Bulk archive / unarchive of a Team's expired Packages by expiry range:
// /v1/teams/{id}/... for Packages the Team sent, /inbox/... for those received through Portals.
import type { RouteModule } from '../app.js';
import { BulkArchiveBody, BulkArchiveResult, TeamParams } from '../../api/hosted/packages.js';
import { teamMember } from '../auth/credentials.js';
import { bulkArchive } from '../services/packageLifecycle.js';

const routes: RouteModule = (app, ctx) => {
  for (const box of ['sent', 'inbox'] as const) {
    for (const direction of ['archive', 'unarchive'] as const) {
      const path = `/v1/teams/:team_id/${box === 'inbox' ? 'inbox/' : ''}${direction}`;
      app.put(path, { schema: { params: TeamParams, body: BulkArchiveBody, response: { 200: BulkArchiveResult } } }, async (req) => {
        await teamMember(ctx, req, req.params.team_id, ['owner', 'admin']);
        return { count: await bulkArchive(ctx, req.params.team_id, box, direction, req.body) };
      });
    }
  }
};
export default routes;
