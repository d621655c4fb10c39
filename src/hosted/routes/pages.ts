// The web download page at {link_url}/{link_id}?secret=...: opens the Link (one
// access, like GET /v1/links/{id}; a visit counts once: services/linkVisit.ts) and lists the files with direct download
// links and the two ZIPs. A locked Link first shows a password form that posts back here.
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import type { RouteModule } from '../app.js';
import { HttpError } from '../errors.js';
import { LinkPageQuery, LinkParams, ResolveLinkQuery } from '../../api/hosted/links.js';
import { reopenLink, resolveLink } from '../services/links.js';
import { visitCookie, visitToken } from '../services/linkVisit.js';
import { clientAddress } from '../ratelimit/plugin.js';
import { pageDownloads } from '../services/downloads.js';
import { PAGE_HEADERS, renderDownloadPage, renderErrorPage, renderPasswordPage } from '../services/downloadPage.js';

const PasswordForm = Type.Object({ password: Type.String({ maxLength: 1024 }) });

const MESSAGES: Record<number, string> = {
  403: 'This link has been opened as many times as the sender allowed.',
  404: 'This link does not exist or is no longer active. Check that you copied the whole address.',
  410: 'This download has expired.',
};

/** A 429 (rate limit, or wrong passwords: lockouts.ts) as a sentence, with how long to wait. */
function tooManyPage(reply: FastifyReply, err: HttpError) {
  const seconds = Number(err.headers['retry-after'] ?? 60);
  const wait = seconds >= 90 ? `${Math.ceil(seconds / 60)} minutes` : `${seconds} second${seconds === 1 ? '' : 's'}`;
  const why = err.code === 'rate_limited' ? 'Too many requests came from your address.' : 'Too many wrong passwords were tried from your address.';
  return reply.code(429).headers({ ...PAGE_HEADERS, ...err.headers }).send(renderErrorPage(`${why} Try again in ${wait}.`));
}

const routes: RouteModule = (app, ctx) => {
  async function page(req: FastifyRequest, reply: FastifyReply, linkId: string, secret: string | undefined, password: string | undefined, after?: string) {
    const action = `?secret=${encodeURIComponent(secret ?? '')}`;
    const userAgent = req.headers['user-agent'] ?? '';
    try {
      // A visit under way (its cookie) is not counted again: a reload, another file, a ZIP.
      const kept = visitToken(req.headers.cookie, linkId);
      const visit = (kept && (await reopenLink(ctx, linkId, secret, kept))) || (await resolveLink(ctx, linkId, secret, password, clientAddress(req)));
      const { info, pkg, link } = visit;
      const downloads = await pageDownloads(ctx, pkg, link.id, after);
      if (info.package_token !== kept) reply.header('set-cookie', visitCookie(ctx.config.linkUrl, linkId, info.package_token));
      return reply.code(200).headers(PAGE_HEADERS).send(renderDownloadPage(info, downloads, /windows/i.test(userAgent), `${ctx.config.publicUrl}/l/${linkId}${action}`));
    } catch (err) {
      if (!(err instanceof HttpError)) throw err;
      if (err.status === 429) return tooManyPage(reply, err);
      if (err.status === 401) {
        return reply.code(password === undefined ? 200 : 401).headers(PAGE_HEADERS).send(renderPasswordPage(action, password === undefined ? undefined : 'Wrong password, try again.'));
      }
      return reply.code(err.status).headers(PAGE_HEADERS).send(renderErrorPage(MESSAGES[err.status] ?? err.message));
    }
  }

  // Encapsulated, so the form parser applies to this page only.
  app.register(async (plain) => {
    const scope = plain.withTypeProvider<TypeBoxTypeProvider>();
    scope.addContentTypeParser('application/x-www-form-urlencoded', { parseAs: 'string', bodyLimit: 16 * 1024 }, (_req, body, done) => {
      done(null, Object.fromEntries(new URLSearchParams(body as string)));
    });
    // The rate limit refuses in a hook, before the handler: the page shows it too, not JSON.
    scope.setErrorHandler((err, _req, reply) => {
      if (err instanceof HttpError && err.status === 429) return tooManyPage(reply, err);
      throw err;
    });

    scope.get('/l/:link_id', { schema: { params: LinkParams, querystring: LinkPageQuery } }, async (req, reply) =>
      page(req, reply, req.params.link_id, req.query.secret, undefined, req.query.after),
    );

    scope.post('/l/:link_id', { schema: { params: LinkParams, querystring: ResolveLinkQuery, body: PasswordForm } }, async (req, reply) =>
      page(req, reply, req.params.link_id, req.query.secret, req.body.password),
    );
  });
};
export default routes;
