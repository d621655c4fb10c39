// Migration 20: a Package's file list walked in its order, a page at a time.
import { type Migration } from './ddl.js';

export const fileListMigrations: Migration[] = [
  {
    version: 20,
    name: 'files: the listing order in an index',
    // The file list (whole or paged), the Link page and the ZIP read a Package's
    // finalized entries in (path, kind, name, id) order; with this index each page
    // starts where the last one stopped instead of sorting the Package for every page
    // (services/fileList.ts). It leads with (package_id, state), so it serves every
    // query files_package served, and replaces it: one index to keep per file, not two.
    sql: `CREATE INDEX files_listing ON files(package_id, state, path, kind, name, id);
DROP INDEX files_package;`,
  },
];
