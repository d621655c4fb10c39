// Public constants clients need before uploading.
import type { RouteModule } from '../app.js';
import { PackagesSpec } from '../../api/hosted/system.js';
import { CHUNK_LIMITS } from '../services/chunks.js';

const routes: RouteModule = (app) => {
  app.get('/v1/system/packages/spec', { schema: { response: { 200: PackagesSpec } } }, async () => CHUNK_LIMITS);
};
export default routes;
