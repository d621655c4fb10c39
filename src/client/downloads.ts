// The recipient side of the hosted API: a Link URL taken apart, the Link
// resolved to a read-only package token, the Package's file list (a page at a
// time) and the short-lived download URLs of its files (one, or many in one request).
import type { HostedHttp } from './http.js';
import type { LinkInfo } from '../api/hosted/links.js';
import { FILES_PAGE_MAX, type DownloadAnswer, type DownloadUrlOutcome, type DownloadUrlsAnswer, type FileObject, type FilePage } from '../api/hosted/files.js';

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

/**
 * One page of a Package's files and folders (`?after=&limit=`, Ferry's paging).
 * A service without it answers the spec's whole array: that comes back as one
 * last page, its two ZIP entries left out as the pages leave them out.
 */
export async function packageFilesPage(
  http: HostedHttp,
  packageId: string,
  packageToken: string,
  page: { after?: string; limit?: number } = {},
  signal?: AbortSignal,
): Promise<FilePage> {
  const r = await http.request<FilePage | FileObject[]>('GET', `/v1/packages/${encodeURIComponent(packageId)}/files`, {
    query: { limit: page.limit ?? FILES_PAGE_MAX, after: page.after },
    auth: { packageToken },
    signal,
  });
  if (Array.isArray(r)) return { files: r.filter((f) => f.kind === 'file' || f.kind === 'directory'), next: null };
  return r;
}

/** At most this many pages: 500 million entries at the largest page, far past any Package. */
const MAX_PAGES = 100_000;

/** Every file and folder of a Package (not the ZIP entries), fetched a page at a time. */
export async function listPackageFiles(http: HostedHttp, packageId: string, packageToken: string, signal?: AbortSignal): Promise<FileObject[]> {
  const all: FileObject[] = [];
  await eachPackageFilesPage(http, packageId, packageToken, (files) => {
    for (const f of files) all.push(f);
  }, signal);
  return all;
}

/** Hands each page of a Package's files and folders on as it comes, so a caller keeps a page, not the list. */
export async function eachPackageFilesPage(
  http: HostedHttp,
  packageId: string,
  packageToken: string,
  onPage: (files: FileObject[]) => void,
  signal?: AbortSignal,
): Promise<void> {
  let after: string | undefined;
  for (let n = 0; n < MAX_PAGES; n++) {
    const page = await packageFilesPage(http, packageId, packageToken, { after }, signal);
    onPage(page.files);
    if (page.next === null) return;
    if (page.next === after) throw new Error('the service answered the same page of files twice');
    after = page.next;
  }
  throw new Error(`the Package's file list did not end within ${MAX_PAGES} pages`);
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
