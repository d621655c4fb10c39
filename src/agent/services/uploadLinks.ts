// The Links of a sent transfer: the transfer's own Link ("Copy link": made once
// with the Send options, the Package's defaults, and copied again after), new
// Links with options of their own, the list with access counts, and revoking one.
// The service counts accesses per Link, so a limit means something only if one
// Link is handed out again and again rather than a fresh one per copy.
import type { AgentContext } from '../context.js';
import type { SessionService } from './session.js';
import { fromHosted } from './session.js';
import { conflict, notFound } from '../errors.js';
import type { UploadLinkAnswer, UploadLinkBody, UploadLinkEntry } from '../../api/agent/uploads.js';
import type { CreatedLink, LinkObject } from '../../api/hosted/links.js';
import { createLink, deleteLink, listLinks } from '../../client/uploads.js';
import { forgetUploadLink, keepUploadLink, uploadLinks, type UploadLinkRow } from '../store/uploadLinkStore.js';
import type { UploadRow } from '../store/uploadStore.js';

const secretOf = (url: string) => new URL(url).searchParams.get('secret') ?? '';

const answer = (l: Pick<LinkObject, 'id' | 'email' | 'expiry' | 'locked'>, url: string): UploadLinkAnswer => ({
  id: l.id,
  secret: secretOf(url),
  email: l.email,
  expiry: l.expiry,
  locked: l.locked,
  url,
});

/** Whether a Link still opens (the service's own list says active; an expiry in the past ends it too). */
const opens = (l: LinkObject) => l.active && (l.expiry === null || Date.parse(l.expiry) > Date.now());

/** `complete`: the upload, once it is a complete Team upload (Links are made for finalized Packages only). */
export function createUploadLinks(ctx: AgentContext, session: SessionService, complete: (id: string) => UploadRow) {
  const { db } = ctx;
  /** One transfer's Link in the making per upload: two quick clicks copy the same one. */
  const making = new Map<string, Promise<UploadLinkAnswer>>();

  const call = () => ({ auth: session.credentials() });
  const serviceLinks = (u: UploadRow) => listLinks(session.hosted, u.package_id, call()).catch(fromHosted);

  async function make(u: UploadRow, body: UploadLinkBody, transfer: boolean): Promise<CreatedLink> {
    const l = await createLink(session.hosted, u.package_id, body, call()).catch(fromHosted);
    keepUploadLink(db, u.id, l.id, l.url, transfer);
    return l;
  }

  async function transferLink(u: UploadRow): Promise<UploadLinkAnswer> {
    const kept = uploadLinks(db, u.id).find((r) => r.transfer === 1);
    if (kept) {
      const live = (await serviceLinks(u)).find((l) => l.id === kept.link_id);
      // A Link that reached its limit is still the transfer's: its limit is the point.
      if (live && opens(live)) return answer(live, kept.url);
      // Revoked or expired: a new transfer's Link replaces it.
      forgetUploadLink(db, kept.link_id);
    }
    const l = await make(u, {}, true);
    return answer(l, l.url);
  }

  return {
    /** POST /uploads/{id}/link: a new Link with the options given (the Package's defaults for the rest). */
    async link(id: string, body: UploadLinkBody): Promise<UploadLinkAnswer> {
      const l = await make(complete(id), body, false);
      return answer(l, l.url);
    },

    /** The transfer's own Link: the one made before while it opens, else a new one with the Send options. */
    transferLink(id: string): Promise<UploadLinkAnswer> {
      const u = complete(id);
      let p = making.get(id);
      if (!p) {
        making.set(id, (p = transferLink(u).finally(() => making.delete(id))));
      }
      return p;
    },

    /** GET /uploads/{id}/links: the Package's Links with their counts, and the addresses this agent knows. */
    async links(id: string): Promise<UploadLinkEntry[]> {
      const u = complete(id);
      const kept = new Map<string, UploadLinkRow>(uploadLinks(db, u.id).map((r) => [r.link_id, r]));
      return (await serviceLinks(u)).map((l) => ({
        id: l.id,
        email: l.email,
        expiry: l.expiry,
        locked: l.locked,
        access_limit: l.access_limit,
        access_count: l.access_count,
        active: opens(l),
        created_at: l.created_at,
        url: kept.get(l.id)?.url ?? null,
        transfer: kept.get(l.id)?.transfer === 1,
      }));
    },

    /** DELETE /uploads/{id}/links/{link_id}: the Link stops opening; answers it as it was. */
    async revoke(id: string, linkId: string): Promise<UploadLinkEntry> {
      const entry = (await this.links(id)).find((l) => l.id === linkId);
      // Only a Link of this transfer's Package: the session could delete any of its Team's.
      if (!entry) throw notFound('Link of this transfer');
      await deleteLink(session.hosted, linkId, call()).catch(fromHosted);
      forgetUploadLink(db, linkId);
      return entry;
    },
  };
}

/** The check every Link operation starts with. */
export function completeTeamUpload(u: UploadRow): UploadRow {
  if (u.type !== 'team' || u.state !== 'complete') throw conflict(`a Link needs a complete Team upload; this one is a ${u.state} ${u.type} upload`);
  return u;
}
