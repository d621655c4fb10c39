// Typed calls of the hosted API for Portal uploads: the public view of a Portal
// by subdomain, and a Package created through it (with the access code, or a
// Team member's credential). The upload itself then runs on the Package token.
import type { HostedHttp, Credentials } from './http.js';
import type { CreatePortalPackageBody, Portal, PortalListPage, PublicPortal } from '../api/hosted/portals.js';
import type { PortalPackage, PortalPackageListPage } from '../api/hosted/portalPackages.js';
import type { Package } from '../api/hosted/packages.js';

export type { CreatePortalPackageBody, Portal, PublicPortal, Package, PortalPackage };

interface Call {
  auth?: Credentials;
  signal?: AbortSignal;
}

/** No credentials needed; 404 when the Portal is unknown or inactive, 410 once it has expired. */
export const getPortalBySubdomain = (http: HostedHttp, subdomain: string, c: Call = {}) =>
  http.request<PublicPortal>('GET', `/v1/subdomains/portals/${encodeURIComponent(subdomain)}`, c);

/** `auth.accessCode` when the Portal has one (sent URI-encoded), or a member's apiKey / userToken. */
export const createPortalPackage = (http: HostedHttp, portalId: string, body: CreatePortalPackageBody, c: Call = {}) =>
  http.request<Package>('POST', `/v1/portals/${encodeURIComponent(portalId)}/packages`, { body, ...c });

/** The full Portal, with a member's credential (`auth.apiKey` / `auth.userToken`). */
export const getPortal = (http: HostedHttp, portalId: string, c: Call) =>
  http.request<Portal>('GET', `/v1/portals/${encodeURIComponent(portalId)}`, c);

/** The public view of an active Portal that has an access code, with that code (`auth.accessCode`): what its subdomain answers. */
export const getPortalWithAccessCode = (http: HostedHttp, portalId: string, c: Call) =>
  http.request<PublicPortal>('GET', `/v1/portals/${encodeURIComponent(portalId)}`, c);

/** GET /v1.1/teams/{team_id}/portals: one page of a Team's Portals (a member's credential). */
export const listTeamPortals = (http: HostedHttp, teamId: string, q: { page: number; limit?: number; subdomain?: string }, c: Call) =>
  http.request<PortalListPage>('GET', `/v1.1/teams/${encodeURIComponent(teamId)}/portals`, { query: { limit: 50, ...q }, ...c });

/** GET /v1.1/portals/{portal_id}/packages: one page of the Packages a Portal received (Ferry's finalized_at filter and sort). */
export const listPortalPackages = (
  http: HostedHttp,
  portalId: string,
  q: { page: number; limit?: number; status?: string; finalized_at_start?: string; sort?: string },
  c: Call,
) => http.request<PortalPackageListPage>('GET', `/v1.1/portals/${encodeURIComponent(portalId)}/packages`, { query: { limit: 50, ...q }, ...c });
