// The whole Package (or the files chosen on the Link page) as one streamed ZIP (yazl). Entries are STORED, not deflated:
// media files do not compress, and stored sizes let the answer carry a
// Content-Length. Files are read from storage one after another, never whole;
// yazl switches to ZIP64 by itself when a size or an offset passes 4 GiB.
import type { Readable } from 'node:stream';
import yazl from 'yazl';
import type { HostedContext } from '../context.js';
import type { FilesTable, PackagesTable } from '../db/schema.js';
import type { ZipVariant } from '../../api/hosted/files.js';
import { badRequest, gone, unauthorized } from '../errors.js';
import { nowIso } from '../ids.js';
import { isMacNoise, joinRel, windowsNames, windowsSegment } from './relpath.js';

export interface ZipEntry {
  name: string;
  kind: 'file' | 'directory';
  size: number;
  mtime: Date;
  key: string | null;
}

/**
 * The files a ZIP holds: all, or only the chosen ones (by id; each must be a
 * finalized file of the Package, else 400, so a stale selection is not silently short).
 */
export function selectFiles(files: FilesTable[], ids: string[] | undefined): FilesTable[] {
  if (!ids) return files;
  const wanted = new Set(ids);
  const chosen = files.filter((f) => f.kind === 'file' && wanted.has(f.id));
  if (chosen.length !== wanted.size) throw badRequest('a chosen file is not a file of this Package', 'unknown_file');
  return chosen;
}

/** The archive's entries: Windows-safe names, or UTF-8 names without Finder noise. */
export function zipEntries(files: FilesTable[], variant: ZipVariant): ZipEntry[] {
  const kept = variant === 'zip_mac' ? files.filter((f) => !isMacNoise(joinRel(f.path, f.name))) : files;
  const rels = kept.map((f) => joinRel(f.path, f.name));
  const names = variant === 'zip_windows' ? windowsNames(rels) : rels;
  return kept.map((f, i) => ({
    name: names[i]!,
    kind: f.kind,
    size: f.size ?? 0,
    mtime: new Date(f.last_modified),
    key: f.object_key,
  }));
}

/** The download file name of a Package's ZIP. */
export const zipFileName = (pkgName: string, variant: ZipVariant) =>
  `${variant === 'zip_windows' ? windowsSegment(pkgName) : pkgName.replace(/[/\u0000-\u001f]/g, '_')}.zip`;

export interface ZipStream {
  stream: Readable;
  /** Exact byte length of the archive (-1 if yazl could not tell, which stored entries with sizes rule out). */
  size: number;
  /** Stops reading from storage (the client went away). */
  abort(): void;
}

export async function buildZip(entries: ZipEntry[], open: (key: string) => Promise<Readable>): Promise<ZipStream> {
  const zip = new yazl.ZipFile();
  const output = zip.outputStream as Readable;
  let current: Readable | undefined;
  let aborted = false;
  const abort = () => {
    aborted = true;
    current?.destroy();
    output.destroy();
  };
  zip.on('error', (err: Error) => {
    current?.destroy();
    output.destroy(err);
  });
  for (const e of entries) {
    if (e.kind === 'directory') {
      zip.addEmptyDirectory(e.name, { mtime: e.mtime, mode: 0o40755 });
      continue;
    }
    const key = e.key!;
    zip.addReadStreamLazy(e.name, { mtime: e.mtime, mode: 0o100644, compress: false, size: e.size }, (cb) => {
      if (aborted) return;
      open(key).then(
        (s) => {
          // The client may have gone while storage was answering: close this read too.
          if (aborted) return void s.destroy();
          current = s;
          cb(null, s);
        },
        (err: unknown) => cb(err, undefined as unknown as Readable),
      );
    });
  }
  const size = await new Promise<number>((resolve) => {
    (zip.end as (opts: object, cb: (size: number) => void) => void)({}, resolve);
  });
  return { stream: output, size, abort };
}

/** A ZIP URL carries its own grant (a signed token for that one archive, until `expiresAt`). */
export async function zipUrl(ctx: HostedContext, packageId: string, variant: ZipVariant, expiresAt: Date, linkId?: string): Promise<string> {
  const token = await ctx.tokens.signZip({ packageId, variant, expiresAt, ...(linkId ? { linkId } : {}) });
  return `${ctx.config.publicUrl}/v1/packages/${encodeURIComponent(packageId)}/zip/${variant}?token=${encodeURIComponent(token)}`;
}

/** Checks a ZIP URL's token; answers the Package it may download. */
export async function checkZipToken(ctx: HostedContext, token: string, packageId: string, variant: ZipVariant): Promise<PackagesTable> {
  const claims = await ctx.tokens.verifyZip(token);
  if (!claims || claims.packageId !== packageId || claims.variant !== variant) throw unauthorized('invalid or expired download token');
  if (claims.linkId) {
    const link = await ctx.db.selectFrom('links').select(['package_id', 'active', 'expiry']).where('id', '=', claims.linkId).executeTakeFirst();
    if (!link || link.package_id !== packageId || link.active !== 1) throw unauthorized('the link of this download is gone');
    if (link.expiry && link.expiry <= nowIso()) throw gone('link expired');
  }
  const pkg = await ctx.db.selectFrom('packages').selectAll().where('id', '=', packageId).executeTakeFirst();
  if (!pkg) throw unauthorized('invalid download token');
  return pkg;
}

/** Downloads need the objects: a Package still being uploaded or finalized has them. */
export function requireDownloadable(pkg: Pick<PackagesTable, 'state' | 'expiry'>): void {
  if (pkg.state === 'expired' || pkg.state === 'archived' || (pkg.expiry && pkg.expiry <= nowIso())) {
    throw gone('this package is no longer available');
  }
}
