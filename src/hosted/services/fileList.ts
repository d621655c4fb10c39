// A Package's finalized entries in the list's order (path, kind, name, id:
// folders before files within a folder, the id breaking ties), read a page at a
// time: keyset paging on the files_listing index, so that page n costs what the
// first one does. The paged route, the Link page and the ZIP read through here.
import type { Db } from '../db/open.js';
import type { FilesTable, PackagesTable } from '../db/schema.js';
import { FILES_PAGE_DEFAULT, type FilePage, type FilesPageQuery } from '../../api/hosted/files.js';
import { badRequest } from '../errors.js';
import { fileObject } from './files.js';
import { requireDownloadable } from './zip.js';

/** Where an entry lies in the order: the key a page starts after. */
export type Place = [path: string, kind: FilesTable['kind'], name: string, id: string];

const placeOf = (f: Pick<FilesTable, 'path' | 'kind' | 'name' | 'id'>): Place => [f.path, f.kind, f.name, f.id];

export const encodeCursor = (f: Pick<FilesTable, 'path' | 'kind' | 'name' | 'id'>): string =>
  Buffer.from(JSON.stringify(placeOf(f)), 'utf8').toString('base64url');

/** The place a cursor names; 400 invalid_cursor for anything this list did not give. */
export function decodeCursor(cursor: string): Place {
  let place: unknown;
  try {
    place = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8'));
  } catch {
    place = undefined;
  }
  const ok = Array.isArray(place) && place.length === 4 && place.every((s) => typeof s === 'string') && (place[1] === 'file' || place[1] === 'directory');
  if (!ok) {
    throw badRequest('after is not a cursor this list gave (use the next of the page before, or leave it out for the first page)', 'invalid_cursor');
  }
  return place as Place;
}

/** Up to `limit` finalized entries of the Package after `after` (from the first without it). */
export function finalizedPage(db: Db, packageId: string, after: Place | undefined, limit: number): Promise<FilesTable[]> {
  let q = db.selectFrom('files').selectAll().where('package_id', '=', packageId).where('state', '=', 'finalized');
  if (after) q = q.where(({ eb, refTuple, tuple }) => eb(refTuple('path', 'kind', 'name', 'id'), '>', tuple(...after)));
  return q.orderBy('path').orderBy('kind').orderBy('name').orderBy('id').limit(limit).execute();
}

/** Every finalized entry of the Package, in order, `size` rows in memory at a time. */
export async function* finalizedPages(db: Db, packageId: string, size = FILES_PAGE_DEFAULT): AsyncGenerator<FilesTable[]> {
  let after: Place | undefined;
  for (;;) {
    const rows = await finalizedPage(db, packageId, after, size);
    if (rows.length > 0) yield rows;
    if (rows.length < size) return;
    after = placeOf(rows[rows.length - 1]!);
  }
}

/** `GET /v1/packages/{id}/files?after=&limit=`: one page, and the cursor of the next. */
export async function listFilesPage(db: Db, pkg: PackagesTable, query: FilesPageQuery): Promise<FilePage> {
  requireDownloadable(pkg);
  const limit = query.limit ?? FILES_PAGE_DEFAULT;
  const after = query.after === undefined ? undefined : decodeCursor(query.after);
  // One row past the page says whether another follows, so the last page says so itself.
  const rows = await finalizedPage(db, pkg.id, after, limit + 1);
  const page = rows.slice(0, limit);
  return { files: page.map(fileObject), next: rows.length > limit ? encodeCursor(page[page.length - 1]!) : null };
}
