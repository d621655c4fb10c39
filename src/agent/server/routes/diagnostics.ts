// Diagnostics (a Ferry addition): GET /diagnostics; POST /diagnostics/bundle
// writes a support bundle and answers where.
import type { AgentRouteModule } from '../app.js';
import { BundleAnswer, BundleBody, Diagnostics } from '../../../api/agent/diagnostics.js';

const routes: AgentRouteModule = (app, services) => {
  const { diagnostics } = services;
  app.get('/diagnostics', { schema: { response: { 200: Diagnostics } } }, async () => diagnostics.get());
  app.post('/diagnostics/bundle', { schema: { body: BundleBody, response: { 201: BundleAnswer } } }, async (req, reply) =>
    reply.code(201).send(await diagnostics.bundle(req.body ?? {})));
};
export default routes;
