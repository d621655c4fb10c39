// The download side of a Package: its file list (with the two ZIP entries) and
// short-lived URLs, never outliving the Link, the Package or seven days.
import { Readable } from 'node:stream';
import type { HostedContext } from '../context.js';
import type { PackagesTable } from '../db/schema.js';
import type { DownloadAnswer, DownloadUrlOutcome, FileObject } from '../../api/hosted/files.js';
import { ZIP_KINDS, type ZipVariant } from '../../api/hosted/files.js';
import { HttpError, badRequest, gone, notFound } from '../errors.js';
import { fileObject, getFile } from './files.js';
import { decodeCursor, encodeCursor, finalizedPage, finalizedPages } from './fileList.js';
import { requireDownloadable, zipFileName, zipUrl } from './zip.js';
import { refusalFor, scanPendingIn } from './malwareScan.js';

export const DEFAULT_URL_TTL_MS = 3600 * 1000;
/** Pre-signed S3 URLs cannot live longer than this (SigV4). */
export const MAX_URL_TTL_MS = 7 * 24 * 3600 * 1000;

/**
 * When a download URL stops working: the requested time, or one hour capped by
 * the Link's and the Package's expiry and seven days from now. A requested time
 * past that cap is refused (the spec's limits table), not shortened in silence.
 */
export function downloadDeadline(now: Date, requested: string | undefined, caps: (string | null)[]): Date {
  const t = requested ? new Date(requested).getTime() : now.getTime() + DEFAULT_URL_TTL_MS;
  if (t <= now.getTime()) throw badRequest('expiry must lie in the future', 'invalid_expiry');
  let cap = now.getTime() + MAX_URL_TTL_MS;
  for (const c of caps) if (c) cap = Math.min(cap, new Date(c).getTime());
  if (cap <= now.getTime()) throw gone('this package is no longer available');
  if (requested && t > cap) {
    throw badRequest(`expiry must not be later than ${new Date(cap).toISOString()} (the earlier of the Link's and the Package's expiry and 7 days from now)`, 'expiry_too_late');
  }
  return new Date(Math.min(t, cap));
}

interface Grant {
  pkg: PackagesTable;
  linkId?: string;
  /** Set where the grant read the Link already (authorizePackage): one query less per file downloaded. */
  linkExpiry?: string | null;
}

async function linkExpiry(ctx: HostedContext, linkId: string | undefined, known?: string | null): Promise<string | null> {
  if (!linkId) return null;
  if (known !== undefined) return known;
  const link = await ctx.db.selectFrom('links').select('expiry').where('id', '=', linkId).executeTakeFirst();
  return link?.expiry ?? null;
}

/** The two ZIP entries the spec's list ends with. */
function zipEntries(pkg: PackagesTable): FileObject[] {
  const stamp = pkg.finalized_at ?? pkg.updated_at;
  return ZIP_KINDS.map((kind) => ({ id: kind, kind, name: zipFileName(pkg.name, kind), path: '', last_modified: stamp, virus_detected: false }));
}

/**
 * The spec's whole array (every finalized entry, then the ZIP entries) as JSON
 * text, written a page of rows at a time: a Package of a million files is never
 * one array in the service's memory (it was 1.6 GiB built at once). The
 * Package's state is checked before the first byte, so a refusal is still a status.
 */
export function packageFilesJson(ctx: HostedContext, pkg: PackagesTable): Readable {
  requireDownloadable(pkg);
  async function* text(): AsyncGenerator<string> {
    let sep = '[';
    for await (const page of finalizedPages(ctx.db, pkg.id)) {
      let piece = '';
      for (const f of page) {
        piece += sep + JSON.stringify(fileObject(f));
        sep = ',';
      }
      yield piece;
    }
    for (const z of zipEntries(pkg)) {
      yield sep + JSON.stringify(z);
      sep = ',';
    }
    yield ']';
  }
  return Readable.from(text(), { objectMode: false });
}

export async function downloadUrl(ctx: HostedContext, grant: Grant, fileId: string, requestedExpiry: string | undefined): Promise<DownloadAnswer> {
  const { pkg } = grant;
  requireDownloadable(pkg);
  const now = new Date();
  const deadline = downloadDeadline(now, requestedExpiry, [await linkExpiry(ctx, grant.linkId, grant.linkExpiry), pkg.expiry]);
  if ((ZIP_KINDS as readonly string[]).includes(fileId)) {
    // The ZIP leaves withheld files out, but cannot be handed out while a scan is pending.
    await zipScanCheck(ctx, pkg.id);
    return { method: 'GET', url: await zipUrl(ctx, pkg.id, fileId as ZipVariant, deadline, grant.linkId) };
  }
  const f = await getFile(ctx, pkg.id, fileId);
  if (f.state !== 'finalized') throw notFound('file');
  if (f.kind !== 'file' || !f.object_key) throw badRequest('a directory has no content to download', 'not_a_file');
  const refusal = refusalFor(f);
  if (refusal) throw refusal;
  const seconds = Math.max(1, Math.floor((deadline.getTime() - now.getTime()) / 1000));
  return { method: 'GET', url: await ctx.storage.downloadUrl(f.object_key, f.name, seconds) };
}

/** Files the Link page lists at once: a Package of 100,000 files is shown (and signed) a page at a time. */
export const LINK_PAGE_FILES = 200;

/**
 * The URLs of several files, each answered as downloadUrl answers it alone: a
 * refused file is its own outcome and does not stop the others. What refuses
 * every file (the Package gone, an expiry too late) refuses the request.
 */
export async function downloadUrls(ctx: HostedContext, grant: Grant, fileIds: string[], requestedExpiry: string | undefined): Promise<DownloadUrlOutcome[]> {
  requireDownloadable(grant.pkg);
  downloadDeadline(new Date(), requestedExpiry, [await linkExpiry(ctx, grant.linkId, grant.linkExpiry), grant.pkg.expiry]);
  const out: DownloadUrlOutcome[] = [];
  for (const file_id of fileIds) {
    try {
      out.push({ file_id, status: 200, url: (await downloadUrl(ctx, grant, file_id, requestedExpiry)).url });
    } catch (err) {
      if (!(err instanceof HttpError)) throw err;
      out.push({ file_id, status: err.status, code: err.code, message: err.message });
    }
  }
  return out;
}

export interface PageDownloads {
  /** This page's files. */
  files: { id: string; rel: string; size: number; url: string }[];
  /** This page's files left out by the malware scan: flagged, not scannable, or still being scanned. */
  withheld: { rel: string; why: 'virus_detected' | 'scan_failed' | 'scan_pending' }[];
  zip: Record<ZipVariant, string>;
  /** When the URLs above stop working. */
  until: Date;
  /** The cursor of the next page of files (fileList.ts), null on the last. */
  next: string | null;
  /** Whether this is a later page (the page was asked with a cursor). */
  later: boolean;
}

/**
 * What one page of the web download page links to, signed once for the default
 * lifetime: up to LINK_PAGE_FILES files after `after` (folders are passed over),
 * and the two ZIPs of the whole Package.
 */
export async function pageDownloads(ctx: HostedContext, pkg: PackagesTable, linkId: string, after?: string): Promise<PageDownloads> {
  requireDownloadable(pkg);
  let place = after === undefined ? undefined : decodeCursor(after);
  const now = new Date();
  const until = downloadDeadline(now, undefined, [await linkExpiry(ctx, linkId), pkg.expiry]);
  const seconds = Math.max(1, Math.floor((until.getTime() - now.getTime()) / 1000));
  const files: PageDownloads['files'] = [];
  const withheld: PageDownloads['withheld'] = [];
  let next: string | null = null;
  // Each round reads on from the last row read, so it ends: the page is full, or the list is.
  for (;;) {
    const rows = await finalizedPage(ctx.db, pkg.id, place, LINK_PAGE_FILES + 1);
    let i = 0;
    for (; i < rows.length && files.length + withheld.length < LINK_PAGE_FILES; i++) {
      const f = rows[i]!;
      place = [f.path, f.kind, f.name, f.id];
      if (f.kind !== 'file' || !f.object_key) continue;
      const rel = f.path ? `${f.path}/${f.name}` : f.name;
      const refusal = refusalFor(f);
      if (refusal) withheld.push({ rel, why: refusal.code as PageDownloads['withheld'][number]['why'] });
      else files.push({ id: f.id, rel, size: f.size ?? 0, url: await ctx.storage.downloadUrl(f.object_key, f.name, seconds) });
    }
    // A short read is the end of the list; rows left unread (or a full read) may have more.
    const more = i < rows.length || rows.length === LINK_PAGE_FILES + 1;
    if (files.length + withheld.length >= LINK_PAGE_FILES) {
      next = more ? encodeCursor(rows[i - 1]!) : null;
      break;
    }
    if (!more) break;
  }
  return {
    files,
    withheld,
    zip: {
      zip_windows: await zipUrl(ctx, pkg.id, 'zip_windows', until, linkId),
      zip_mac: await zipUrl(ctx, pkg.id, 'zip_mac', until, linkId),
    },
    until,
    next,
    later: after !== undefined,
  };
}

/** 503 scan_pending while a file of the Package is still being scanned: a ZIP must not include it unscanned. */
export async function zipScanCheck(ctx: HostedContext, packageId: string): Promise<void> {
  if (await scanPendingIn(ctx, packageId)) throw refusalFor({ scan_state: 'pending', virus_detected: 0, scan_result: null })!;
}
