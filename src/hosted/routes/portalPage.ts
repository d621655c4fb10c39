// The Portal upload page: GET /p/{subdomain}, and GET / on {subdomain}.{portal_domain}
// when --portal-domain is set; its script at /assets/portal-upload.js.
import type { FastifyReply } from 'fastify';
import { Type } from 'typebox';
import type { RouteModule } from '../app.js';
import { HttpError } from '../errors.js';
import { publicPortal } from '../services/portals.js';
import { portalPageHeaders, PORTAL_SCRIPT_PATH, renderPortalErrorPage, renderPortalPage } from '../services/portalPage.js';
import { portalScript } from '../webAssets.js';

const PageParams = Type.Object({ subdomain: Type.String({ maxLength: 253 }) });

const routes: RouteModule = (app, ctx) => {
  const headers = portalPageHeaders(ctx.storage.origin);

  async function page(reply: FastifyReply, subdomain: string) {
    try {
      return reply.code(200).headers(headers).send(renderPortalPage(await publicPortal(ctx, subdomain)));
    } catch (err) {
      if (!(err instanceof HttpError) || (err.status !== 404 && err.status !== 410)) throw err;
      const [title, message] = err.status === 404
        ? ['Portal not found', 'No open Portal has this address. Check the address with the person who sent it to you.']
        : ['Portal closed', 'This Portal no longer takes files. Ask the person who sent you its address for a new one.'];
      return reply.code(err.status).headers(headers).send(renderPortalErrorPage(title, message));
    }
  }

  app.get('/p/:subdomain', { schema: { params: PageParams } }, async (req, reply) => page(reply, req.params.subdomain));

  const domain = ctx.config.portalDomain;
  if (domain) {
    // {subdomain}.{domain}/ is the same page; any other host's / stays unrouted (404).
    app.get('/', async (req, reply) => {
      const host = (req.hostname ?? '').toLowerCase().replace(/:\d+$/, '');
      const sub = host.endsWith(`.${domain}`) ? host.slice(0, -domain.length - 1) : '';
      if (!/^[a-z0-9-]+$/.test(sub)) throw new HttpError(404, 'not_found', 'Route GET / not found');
      return page(reply, sub);
    });
  }

  app.get(PORTAL_SCRIPT_PATH, async (req, reply) => {
    const asset = await portalScript();
    reply.headers({ 'content-type': 'text/javascript; charset=utf-8', etag: asset.etag, 'cache-control': 'no-cache', 'x-content-type-options': 'nosniff', vary: 'accept-encoding' });
    if (req.headers['if-none-match'] === asset.etag) return reply.code(304).send();
    if (!/\bgzip\b/.test(req.headers['accept-encoding'] ?? '')) return reply.send(asset.body);
    return reply.header('content-encoding', 'gzip').send(asset.gzipped);
  });
};
export default routes;
