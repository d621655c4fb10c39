// A server's OpenAPI document at GET /openapi.json and its page at GET /docs/api.
// Called before the route modules: the collector sees every route added after it,
// and the document is made once, at the first request, from all of them.
import type { FastifyInstance } from 'fastify';
import type { ApiDescription } from '../../api/openapi/types.js';
import { packageVersion } from '../packageInfo.js';
import { collectRoutes, type CollectedRoute } from './collect.js';
import { buildDocument, OPENAPI_PATH, PAGE_PATH, type OpenApiDocument } from './document.js';
import { PAGE_HEADERS, renderApiPage } from './page.js';

export function registerOpenApi(app: FastifyInstance, api: ApiDescription): CollectedRoute[] {
  const routes = collectRoutes(app);
  let made: { doc: OpenApiDocument; page: string } | undefined;
  const document = () => {
    if (!made) {
      const doc = buildDocument(routes, api, packageVersion());
      made = { doc, page: renderApiPage(doc) };
    }
    return made;
  };
  app.get(OPENAPI_PATH, async (_req, reply) => reply.header('cache-control', 'no-cache').header('x-content-type-options', 'nosniff').send(document().doc));
  app.get(PAGE_PATH, async (_req, reply) => reply.headers({ ...PAGE_HEADERS, 'cache-control': 'no-cache' }).send(document().page));
  return routes;
}
