// A Package of thousands of entries, written straight into the service's files
// table (registering each through the API would take the test minutes): what the
// file list, the Link page and the ZIP read. Rows go in batches, in one transaction.
import type { FilesTable } from '../../src/hosted/db/schema.js';
import type { TestService } from './hosted.js';

export interface RowSpec {
  id: string;
  name: string;
  path?: string;
  kind?: 'file' | 'directory';
  size?: number;
  state?: 'pending' | 'finalized';
  /** The stored object the entry reads (a file); several entries may share one. */
  object_key?: string | null;
}

export async function insertFileRows(svc: TestService, packageId: string, specs: RowSpec[]): Promise<void> {
  const now = new Date().toISOString();
  const rows: FilesTable[] = specs.map((s) => ({
    id: s.id,
    package_id: packageId,
    kind: s.kind ?? 'file',
    name: s.name,
    path: s.path ?? '',
    last_modified: '2024-05-01T10:00:00.000Z',
    size: (s.kind ?? 'file') === 'file' ? (s.size ?? 0) : null,
    chunk_size: 5 * 1024 * 1024,
    object_key: s.object_key ?? null,
    upload_id: null,
    state: s.state ?? 'finalized',
    virus_detected: 0,
    created_at: now,
    updated_at: now,
  }));
  await svc.ctx.db.transaction().execute(async (trx) => {
    // 14 columns a row: 500 rows stay under PostgreSQL's and SQLite's limits on bound values.
    for (let i = 0; i < rows.length; i += 500) await trx.insertInto('files').values(rows.slice(i, i + 500)).execute();
  });
}

/** Marks entries finalized (a file finalize, as far as the list can tell). */
export async function finalizeRows(svc: TestService, ids: string[]): Promise<void> {
  for (let i = 0; i < ids.length; i += 500) {
    await svc.ctx.db.updateTable('files').set({ state: 'finalized' }).where('id', 'in', ids.slice(i, i + 500)).execute();
  }
}
