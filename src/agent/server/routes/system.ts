// System: GET /about, /version_check, /health, /validation; POST /shutdown.
import type { AgentRouteModule } from '../app.js';
import { About, CodeAnswer, Health, Validation, VersionCheck } from '../../../api/agent/system.js';

const routes: AgentRouteModule = (app, services) => {
  const { system } = services;
  app.get('/about', { schema: { response: { 200: About } } }, async () => system.about());
  app.get('/version_check', { schema: { response: { 200: VersionCheck } } }, async () => system.versionCheck());
  app.get('/health', { schema: { response: { 200: Health, 503: Health } } }, async (_req, reply) => {
    const h = await system.health();
    return reply.code(h.code === 0 ? 200 : 503).send(h);
  });
  app.get('/validation', { schema: { response: { 200: Validation } } }, async () => system.validation());
  app.post('/shutdown', { schema: { response: { 200: CodeAnswer } } }, async (_req, reply) =>
    system.shutdown(new Promise((answered) => reply.raw.once('close', answered))));
};
export default routes;
