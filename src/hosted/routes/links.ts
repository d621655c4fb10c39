// Links: made and listed by whoever holds the Package (full package token or a
// member's API key / user token), resolved by recipients with the secret.
import type { RouteModule } from '../app.js';
import { authorizePackage, hasUserCredential } from '../auth/credentials.js';
import { unauthorized } from '../errors.js';
import { clientAddress } from '../ratelimit/plugin.js';
import { CreateLinkBody, CreatedLink, LinkInfo, LinkList, LinkParams, ResolveLinkQuery } from '../../api/hosted/links.js';
import { PackageParams } from '../../api/hosted/packages.js';
import { createLink, deleteLink, findLink, listLinks, resolveLink } from '../services/links.js';

/** Header values arrive as Latin-1; a client that sent the password's UTF-8 bytes gets them back as UTF-8. */
function linkPassword(value: string | string[] | undefined): string | undefined {
  if (typeof value !== 'string' || value === '') return undefined;
  const bytes = Buffer.from(value, 'latin1');
  const utf8 = bytes.toString('utf8');
  return Buffer.from(utf8, 'utf8').equals(bytes) ? utf8 : value;
}

const routes: RouteModule = (app, ctx) => {
  app.post(
    '/v1/packages/:package_id/links',
    {
      schema: { params: PackageParams, body: CreateLinkBody, response: { 201: CreatedLink } },
      // Every field is optional, so a request without a body is a request for defaults.
      preValidation: async (req) => {
        req.body ??= {};
      },
    },
    async (req, reply) => {
      const { pkg } = await authorizePackage(ctx, req, req.params.package_id, 'full');
      reply.code(201);
      return createLink(ctx, pkg, req.body);
    },
  );

  app.get('/v1/packages/:package_id/links', { schema: { params: PackageParams, response: { 200: LinkList } } }, async (req) => {
    const { pkg } = await authorizePackage(ctx, req, req.params.package_id, 'full');
    return listLinks(ctx, pkg.id);
  });

  app.delete('/v1/links/:link_id', { schema: { params: LinkParams } }, async (req, reply) => {
    // Credentials first, so that an anonymous caller cannot probe which Links exist.
    if (!hasUserCredential(req) && !req.headers['x-package-token']) throw unauthorized('X-API-KEY, X-User-Token or X-Package-Token required');
    const link = await findLink(ctx, req.params.link_id);
    await authorizePackage(ctx, req, link.package_id, 'full');
    await deleteLink(ctx, link.id);
    reply.code(204).send();
  });

  app.get(
    '/v1/links/:link_id',
    { schema: { params: LinkParams, querystring: ResolveLinkQuery, response: { 200: LinkInfo } } },
    async (req) => {
      const { info } = await resolveLink(ctx, req.params.link_id, req.query.secret, linkPassword(req.headers['x-link-password']), clientAddress(req));
      return info;
    },
  );
};
export default routes;
