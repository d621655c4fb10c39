// Typed calls of the hosted API that an upload makes: the Team Package, its
// files (register, part blueprints, finalize), the Package finalize, expiry
// and Links. Every call takes the credentials it runs with.
import type { HostedHttp, Credentials } from './http.js';
import type { Blueprint } from '../api/hosted/blueprint.js';
import type { CreatePackageBody, ExpiryBody, Package } from '../api/hosted/packages.js';
import type {
  FinalizeFileBody,
  FinalizeFilesAnswer,
  FinalizeFilesBody,
  RegisterFileAnswer,
  RegisterFileBody,
  RegisterFileQuery,
  RegisterFilesAnswer,
  RegisterFilesBody,
} from '../api/hosted/files.js';
import type { CreateLinkBody, CreatedLink, LinkObject } from '../api/hosted/links.js';

export type { Blueprint, Package, RegisterFileAnswer, CreatedLink };

interface Call {
  auth: Credentials;
  signal?: AbortSignal;
}

export const createTeamPackage = (http: HostedHttp, teamId: string, body: CreatePackageBody, c: Call) =>
  http.request<Package>('POST', `/v1/teams/${encodeURIComponent(teamId)}/packages`, { body, ...c });

export const getPackage = (http: HostedHttp, packageId: string, c: Call) =>
  http.request<Package>('GET', `/v1/packages/${encodeURIComponent(packageId)}`, c);

export const setPackageExpiry = (http: HostedHttp, packageId: string, body: ExpiryBody, c: Call) =>
  http.request<Package>('PUT', `/v1/packages/${encodeURIComponent(packageId)}/expiry`, { body, ...c });

/** With `count` or `single` (RegisterFileQuery), asks the service to start the upload too (Ferry's services only; others ignore them). */
export const registerFile = (http: HostedHttp, packageId: string, body: RegisterFileBody, c: Call, q: RegisterFileQuery = {}) =>
  http.request<RegisterFileAnswer>('POST', `/v1/packages/${encodeURIComponent(packageId)}/files`, { body, query: q, ...c });

/** Several registrations in one request; Ferry's services only (others answer 404). */
export const registerFiles = (http: HostedHttp, packageId: string, body: RegisterFilesBody, c: Call) =>
  http.request<RegisterFilesAnswer>('POST', `/v1/packages/${encodeURIComponent(packageId)}/register_files`, { body, ...c });

/** Blueprints of parts `start + 1 .. start + count` (start is zero-based), in order. */
export const partBlueprints = (http: HostedHttp, packageId: string, fileId: string, start: number, count: number, uploadId: string, c: Call) =>
  http.request<Blueprint[]>('POST', `/v1/packages/${encodeURIComponent(packageId)}/files/${encodeURIComponent(fileId)}`, {
    query: { start, count },
    body: { upload_id: uploadId },
    ...c,
  });

export const finalizeFile = (http: HostedHttp, packageId: string, fileId: string, body: FinalizeFileBody, c: Call) =>
  http.request<void>('POST', `/v1/packages/${encodeURIComponent(packageId)}/files/${encodeURIComponent(fileId)}/finalize`, { body, ...c });

/** Several file finalizes in one request; Ferry's services only (others answer 404). */
export const finalizeFiles = (http: HostedHttp, packageId: string, body: FinalizeFilesBody, c: Call) =>
  http.request<FinalizeFilesAnswer>('POST', `/v1/packages/${encodeURIComponent(packageId)}/finalize_files`, { body, ...c });

export const finalizePackage = (http: HostedHttp, packageId: string, c: Call) =>
  http.request<void>('POST', `/v1/packages/${encodeURIComponent(packageId)}/finalize`, c);

export const createLink = (http: HostedHttp, packageId: string, body: CreateLinkBody, c: Call) =>
  http.request<CreatedLink>('POST', `/v1/packages/${encodeURIComponent(packageId)}/links`, { body, ...c });

/** The Package's Links (no secrets), oldest first. */
export const listLinks = (http: HostedHttp, packageId: string, c: Call) =>
  http.request<LinkObject[]>('GET', `/v1/packages/${encodeURIComponent(packageId)}/links`, c);

/** DELETE /v1/links/{link_id}: 204. */
export const deleteLink = (http: HostedHttp, linkId: string, c: Call) =>
  http.request<void>('DELETE', `/v1/links/${encodeURIComponent(linkId)}`, c);
