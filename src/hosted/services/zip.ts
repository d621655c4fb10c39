// The whole Package (or the files chosen on the Link page) as one streamed ZIP
// (zipStream.ts): its entries read from the database a page at a time, each walk
// of the archive reading them again, so that a Package of a million files costs
// the service a page of rows and 8 bytes per entry, not its list.
import type { HostedContext } from '../context.js';
import type { FilesTable, PackagesTable } from '../db/schema.js';
import type { ZipVariant } from '../../api/hosted/files.js';
import { badRequest, gone, unauthorized } from '../errors.js';
import { nowIso } from '../ids.js';
import { isMacNoise, joinRel, windowsNamer, windowsSegment } from './relpath.js';
import { isWithheld } from './malwareScan.js';
import { finalizedPages } from './fileList.js';
import type { EntryPages, ZipEntry } from './zipStream.js';

/** Byte order of UTF-8 text, the order of the list in SQLite (and PostgreSQL's C collation). */
const byteOrder = (a: string, b: string) => Buffer.compare(Buffer.from(a, 'utf8'), Buffer.from(b, 'utf8'));

/**
 * The files chosen on the Link page (by id; each must be a finalized file of the
 * Package, else 400, so a stale selection is not silently short), in the list's order.
 * At most ZipQuery's 10,000, so they are held.
 */
export async function chosenFiles(ctx: HostedContext, packageId: string, ids: string[]): Promise<FilesTable[]> {
  const wanted = [...new Set(ids)];
  const chosen: FilesTable[] = [];
  for (let i = 0; i < wanted.length; i += 500) {
    const rows = await ctx.db
      .selectFrom('files')
      .selectAll()
      .where('package_id', '=', packageId)
      .where('state', '=', 'finalized')
      .where('kind', '=', 'file')
      .where('id', 'in', wanted.slice(i, i + 500))
      .execute();
    chosen.push(...rows);
  }
  if (chosen.length !== wanted.length) throw badRequest('a chosen file is not a file of this Package', 'unknown_file');
  return chosen.sort((a, b) => byteOrder(a.path, b.path) || byteOrder(a.name, b.name) || byteOrder(a.id, b.id));
}

/** How many of the Package's files its ZIP leaves out: flagged by the malware scan, or not scannable. */
export async function withheldCount(ctx: HostedContext, packageId: string, chosen?: FilesTable[]): Promise<number> {
  if (chosen) return chosen.filter(isWithheld).length;
  const r = await ctx.db
    .selectFrom('files')
    .select((eb) => eb.fn.countAll<number | string>().as('n'))
    .where('package_id', '=', packageId)
    .where('state', '=', 'finalized')
    .where((eb) => eb.or([eb('virus_detected', '=', 1), eb('scan_state', 'in', ['infected', 'failed'])]))
    .executeTakeFirstOrThrow();
  return Number(r.n);
}

/**
 * The archive's entries, a page at a time: the Package's finalized entries (or the
 * chosen files), withheld files left out, Windows-safe names or UTF-8 names without
 * Finder noise. Each call walks them from the first again, naming them alike.
 */
export function zipPages(ctx: HostedContext, packageId: string, variant: ZipVariant, chosen?: FilesTable[]): EntryPages {
  return async function* () {
    const named = variant === 'zip_windows' ? windowsNamer() : (rel: string) => rel;
    for await (const page of chosen ? [chosen] : finalizedPages(ctx.db, packageId)) {
      const entries: ZipEntry[] = [];
      for (const f of page) {
        if (isWithheld(f)) continue;
        const rel = joinRel(f.path, f.name);
        if (variant === 'zip_mac' && isMacNoise(rel)) continue;
        entries.push({ name: named(rel), kind: f.kind, size: f.size ?? 0, mtime: new Date(f.last_modified), key: f.object_key });
      }
      yield entries;
    }
  };
}

/** The download file name of a Package's ZIP. */
export const zipFileName = (pkgName: string, variant: ZipVariant) =>
  `${variant === 'zip_windows' ? windowsSegment(pkgName) : pkgName.replace(/[/\u0000-\u001f]/g, '_')}.zip`;

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
