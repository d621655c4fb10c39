// Session: POST /login (sign in), GET /login (the session), DELETE /login (sign
// out), GET /teams. Without a session the answer is 401 {code: 262146}.
import type { AgentRouteModule } from '../app.js';
import { LoginBody, SessionAnswer, TeamList } from '../../../api/agent/session.js';
import { CodeAnswer } from '../../../api/agent/system.js';

const routes: AgentRouteModule = (app, services) => {
  const { session } = services;
  app.post('/login', { schema: { body: LoginBody, response: { 200: SessionAnswer } } }, async (req) =>
    session.login(req.body.email, req.body.password),
  );
  app.get('/login', { schema: { response: { 200: SessionAnswer } } }, async () => session.current());
  app.delete('/login', { schema: { response: { 200: CodeAnswer } } }, async () => {
    session.logout();
    return { code: 0 };
  });
  app.get('/teams', { schema: { response: { 200: TeamList } } }, async () => session.teams());
};
export default routes;
