// Liveness and readiness for load balancers and orchestrators: no credential,
// no rate limit, served by every role (a worker serves nothing else).
import type { RouteModule } from '../app.js';
import { Health, Ready } from '../../api/hosted/health.js';
import { checkReady } from '../services/readiness.js';

const routes: RouteModule = (app, ctx) => {
  app.get('/healthz', { config: { rateLimit: false }, schema: { response: { 200: Health } } }, async () => ({ status: 'ok' as const }));
  app.get('/readyz', { config: { rateLimit: false }, schema: { response: { 200: Ready } } }, async () => {
    await checkReady(ctx);
    return { status: 'ready' as const, role: ctx.instance.role };
  });
};
export default routes;
