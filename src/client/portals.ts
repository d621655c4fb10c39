// Typed calls of the hosted API for Portal uploads: the public view of a Portal
// by subdomain, and a Package created through it (with the access code, or a
// Team member's credential). The upload itself then runs on the Package token.
import type { HostedHttp, Credentials } from './http.js';
import type { CreatePortalPackageBody, Portal, PublicPortal } from '../api/hosted/portals.js';
import type { Package } from '../api/hosted/packages.js';

export type { CreatePortalPackageBody, Portal, PublicPortal, Package };

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

/** The full Portal: a member's credential, or the access code of an active Portal that has one. */
export const getPortal = (http: HostedHttp, portalId: string, c: Call) =>
  http.request<Portal>('GET', `/v1/portals/${encodeURIComponent(portalId)}`, c);
