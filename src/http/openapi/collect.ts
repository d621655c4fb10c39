// Every route a Fastify server registers, as it registers it (the onRoute hook):
// method, URL and schema, for the OpenAPI document (document.ts). Added before the
// route modules, so it sees each of them, in nested plugins and prefixes too.
import type { FastifyInstance, FastifySchema } from 'fastify';

export interface CollectedRoute {
  method: string;
  /** Fastify's URL with the prefix: `/api/v1/uploads/:upload_id`. */
  url: string;
  schema: FastifySchema | undefined;
  /** A WebSocket route (@fastify/websocket): answers 101, never JSON. */
  websocket: boolean;
}

export function collectRoutes(app: FastifyInstance): CollectedRoute[] {
  const routes: CollectedRoute[] = [];
  app.addHook('onRoute', (o) => {
    for (const method of [o.method].flat()) {
      // Fastify adds a HEAD route beside each GET by itself: the GET documents both.
      if (method === 'HEAD' && routes.some((r) => r.method === 'GET' && r.url === o.url)) continue;
      routes.push({ method, url: o.url, schema: o.schema, websocket: Boolean((o as { websocket?: boolean }).websocket) });
    }
  });
  return routes;
}

/** `/uploads/:upload_id/files` as OpenAPI writes it: `/uploads/{upload_id}/files` (a wildcard `*` is `{*}`). */
export const openApiPath = (url: string) => url.replace(/:([A-Za-z0-9_]+)/g, '{$1}').replace(/\*$/, '{*}');

/** The key a table of src/api/openapi names a route by: `GET /uploads/{upload_id}/files`. */
export const routeKey = (method: string, path: string) => `${method} ${path}`;
