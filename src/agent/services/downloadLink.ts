// A download's Link: which service answers it, its resolution and the listing of
// its Package (kept from a preview for the download that follows, so that one
// receive counts one access: linkTokens.ts), what the service's refusals mean
// to the caller, and the preview opened through it (linkPreview.ts). Apart from
// downloads.ts, which makes and runs downloads once their Link is open.
import type { AgentContext } from '../context.js';
import { AgentErrorCode } from '../../api/agent/errors.js';
import { HostedApiError, HostedHttp } from '../../client/http.js';
import { listPackageFiles, parseLinkUrl, resolveLink } from '../../client/downloads.js';
import { AgentError, invalid, upstream } from '../errors.js';
import { LinkTokens } from './linkTokens.js';
import { createLinkPreview } from './linkPreview.js';
import type { LinkInfo } from '../../api/hosted/links.js';
import type { FileObject } from '../../api/hosted/files.js';

/** A Link the service does not know (an unknown id, a wrong secret, or turned off): what to do about it, in the words the window and the CLI show. */
export const WRONG_LINK = 'No Link answers to this address: it may be mistyped, cut short, turned off or deleted. Check the Link, or ask the sender for a new one.';

/** What the service answered while a download was being set up, as the agent answers it. */
function linkError(err: unknown): never {
  if (err instanceof HostedApiError) {
    const m = err.message;
    if (err.status === 401) throw new AgentError(401, AgentErrorCode.badRequest, `the Link needs a password, or the password is wrong: ${m}`);
    if (err.status === 404) throw new AgentError(404, AgentErrorCode.notFound, WRONG_LINK);
    if (err.status === 410) throw new AgentError(410, AgentErrorCode.badRequest, `the Link or its Package has expired: ${m}`);
    if (err.status === 403) throw new AgentError(403, AgentErrorCode.forbidden, `the service refused the Link: ${m}`);
    if (err.status < 500) throw new AgentError(400, AgentErrorCode.badRequest, `the service refused the Link: ${m}`);
    throw upstream(`the service answered ${err.status}: ${m}`);
  }
  if (err instanceof AgentError) throw err;
  throw upstream(`the service could not be reached: ${(err as Error).message}`);
}

/** The Links of downloads: one service client per API base, and the resolutions previews kept. */
export function createDownloadLinks(ctx: AgentContext) {
  const clients = new Map<string, HostedHttp>();
  const hostedOrigin = URL.canParse(ctx.config.hostedUrl) ? new URL(ctx.config.hostedUrl).origin : '';

  /** The agent's own service keeps its path prefix; a Link of another host is served from its origin. */
  const apiBaseFor = (linkOrigin: string) => (linkOrigin === hostedOrigin ? ctx.config.hostedUrl : linkOrigin);
  const clientFor = (base: string) => {
    let c = clients.get(base);
    if (!c) clients.set(base, (c = new HostedHttp(base)));
    return c;
  };

  /** Resolutions kept from previews for the downloads that follow them (linkTokens.ts). */
  const resolved = new LinkTokens();
  /**
   * The Link resolved and its Package listed: with the token a preview kept when it still
   * works (no access counted), else by resolving it now and keeping that for the download
   * to come (or the retry of one refused for its other fields). A download made forgets it.
   */
  async function openLink<T = FileObject[]>(
    http: HostedHttp,
    key: string,
    link: { linkId: string; secret: string },
    password: string | undefined,
    list: (http: HostedHttp, packageId: string, token: string) => Promise<T> = listPackageFiles as never,
  ) {
    const kept = resolved.peek(key);
    if (kept) {
      try {
        return { info: kept, files: await list(http, kept.package_id, kept.package_token) };
      } catch (err) {
        resolved.forget(key);
        // A token that stopped working (expired, revoked Link): resolve again, which says why.
        if (!(err instanceof HostedApiError) || err.status !== 401) linkError(err);
      }
    }
    const info: LinkInfo = await resolveLink(http, link.linkId, link.secret, password).catch(linkError);
    const files = await list(http, info.package_id, info.package_token).catch(linkError);
    resolved.keep(key, info);
    return { info, files };
  }

  const previews = createLinkPreview((url, password, list) => {
    const link = parseLinkUrl(url);
    if (typeof link === 'string') throw invalid(link, 'url');
    const apiBase = apiBaseFor(link.origin);
    const pw = password || undefined;
    return openLink(clientFor(apiBase), LinkTokens.key(apiBase, link.linkId, link.secret, pw), link, pw, list);
  });

  return {
    apiBaseFor,
    clientFor,
    /** The service clients made, one per API base. */
    clients,
    open: openLink,
    /** A download was made from the Link: its kept resolution is spent. */
    forget: (key: string) => resolved.forget(key),

    /** The files a Link offers, before anything is downloaded (the app's "Show files"): linkPreview.ts. */
    preview: previews.first,
    previewFiles: previews.after,
  };
}
