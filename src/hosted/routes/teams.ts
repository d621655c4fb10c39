// The caller's Teams and a Team's memberships.
import type { RouteModule } from '../app.js';
import { MembershipList, TeamIdParams, TeamList } from '../../api/hosted/teams.js';
import { authenticateUser, teamMember } from '../auth/credentials.js';
import { teamMembers, teamsOfUser } from '../services/accounts.js';

const routes: RouteModule = (app, ctx) => {
  app.get('/v1/teams', { schema: { response: { 200: TeamList } } }, async (req) => {
    const who = await authenticateUser(ctx, req);
    // An API key belongs to one Team and only shows that one.
    return teamsOfUser(ctx.db, who.userId, who.apiKey?.teamId);
  });

  app.get('/v1/teams/:team_id/members', { schema: { params: TeamIdParams, response: { 200: MembershipList } } }, async (req) => {
    await teamMember(ctx, req, req.params.team_id);
    return teamMembers(ctx.db, req.params.team_id);
  });
};
export default routes;
