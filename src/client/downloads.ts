// The recipient side of the hosted API: a Link URL taken apart, the Link
// resolved to a read-only package token, the Package's file list and the
// short-lived download URLs of its files (one, or many in one request).
import type { HostedHttp } from './http.js';
import type { LinkInfo } from '../api/hosted/links.js';
import type { DownloadAnswer, DownloadUrlOutcome, DownloadUrlsAnswer, FileObject } from '../api/hosted/files.js';

export interface ParsedLinkUrl {
  /** scheme://host[:port] of the Link URL. */
  origin: string;
  linkId: string;
  secret: string;
}

/**
 * `{link_url}/{link_id}?secret={secret}`: the id is the last path segment.
 * Returns a reason string when the URL is not a Link URL.
 */
export function parseLinkUrl(raw: string): ParsedLinkUrl | string {
  let u: URL;
  try {
    u = new URL(raw);
  } catch {
    return 'This is not a Link: a Link is a web address like https://ferry.example.com/l/…?secret=….';
  }
  if (u.protocol !== 'http:' && u.protocol !== 'https:') return 'This is not a Link: a Link starts with https:// (or http://).';
  const secret = u.searchParams.get('secret');
  if (!secret) return 'This Link is cut short: its ?secret=… part is missing. Copy the whole Link.';
  const segs = u.pathname.split('/').filter((s) => s !== '');
  const last = segs[segs.length - 1];
  if (!last) return 'This is not a Link: the Link\'s id is missing after /l/. Copy the whole Link.';
  let linkId: string;
  try {
    linkId = decodeURIComponent(last);
  } catch {
    return 'This is not a Link: its id is not one Ferry makes. Copy the whole Link.';
  }
  if (!/^[A-Za-z0-9_-]{1,64}$/.test(linkId)) return 'This is not a Link: its id is not one Ferry makes. Copy the whole Link.';
  return { origin: u.origin, linkId, secret };
}

/** GET /v1/links/{id}?secret=: counts one access of the Link on success. */
export function resolveLink(http: HostedHttp, linkId: string, secret: string, password: string | undefined, signal?: AbortSignal): Promise<LinkInfo> {
  return http.request<LinkInfo>('GET', `/v1/links/${encodeURIComponent(linkId)}`, {
    query: { secret },
    auth: password ? { linkPassword: password } : undefined,
    signal,
  });
}

/** Every entry of a Package, the two ZIP variants included. */
export function listPackageFiles(http: HostedHttp, packageId: string, packageToken: string, signal?: AbortSignal): Promise<FileObject[]> {
  return http.request<FileObject[]>('GET', `/v1/packages/${encodeURIComponent(packageId)}/files`, { auth: { packageToken }, signal });
}

/** A pre-signed GET URL for one file, valid about an hour (less when the Link or Package expires sooner). */
export async function fileDownloadUrl(http: HostedHttp, packageId: string, fileId: string, packageToken: string, signal?: AbortSignal): Promise<string> {
  const r = await http.request<DownloadAnswer>('GET', `/v1/packages/${encodeURIComponent(packageId)}/files/${encodeURIComponent(fileId)}/download`, {
    auth: { packageToken },
    signal,
  });
  return r.url;
}

/** Ferry's addition: the URLs of up to 100 files in one request, one outcome per file in order (a 404 where the service lacks the route). */
export async function fileDownloadUrls(http: HostedHttp, packageId: string, fileIds: string[], packageToken: string): Promise<DownloadUrlOutcome[]> {
  const r = await http.request<DownloadUrlsAnswer>('POST', `/v1/packages/${encodeURIComponent(packageId)}/download_urls`, {
    auth: { packageToken },
    body: { files: fileIds.map((file_id) => ({ file_id })) },
  });
  return r.results;
}
