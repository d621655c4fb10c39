// Where a cloud transfer stands, in the database before the next step starts:
// its items (one object each), the parts of an item's multipart upload that
// are stored at the destination, and the transfer's counters. A resumed attempt
// reads this back and sends only what is missing.
import type { Db } from '../db/open.js';
import type { CloudTransferItemsTable, CloudTransfersTable } from '../db/schema.js';
import { nowIso } from '../ids.js';
import { partLength } from '../services/chunks.js';

export type Item = CloudTransferItemsTable;

/** Inserts the planned items and the transfer's totals in one transaction; a transfer is planned once. */
export async function savePlan(
  db: Db,
  transferId: string,
  items: Omit<Item, 'transfer_id' | 'seq' | 'state' | 'upload_id' | 'part_size' | 'etag'>[],
  totals: Pick<CloudTransfersTable, 'files_filtered_out' | 'destination'>,
): Promise<void> {
  await db.transaction().execute(async (trx) => {
    const t = await trx.selectFrom('cloud_transfers').select('planned').where('id', '=', transferId).executeTakeFirstOrThrow();
    if (t.planned) return;
    for (let i = 0; i < items.length; i += 200) {
      const batch = items.slice(i, i + 200).map((it, j) => ({ ...it, transfer_id: transferId, seq: i + j + 1, state: 'pending' as const, upload_id: null, part_size: null, etag: null }));
      await trx.insertInto('cloud_transfer_items').values(batch).execute();
    }
    await trx
      .updateTable('cloud_transfers')
      .set({
        planned: 1,
        files_total: items.length,
        bytes_total: items.reduce((n, it) => n + it.size, 0),
        files_filtered_out: totals.files_filtered_out,
        destination: totals.destination,
        updated_at: nowIso(),
      })
      .where('id', '=', transferId)
      .execute();
  });
}

export const itemsOf = (db: Db, transferId: string) =>
  db.selectFrom('cloud_transfer_items').selectAll().where('transfer_id', '=', transferId).orderBy('seq').execute();

export async function partsOf(db: Db, item: Pick<Item, 'transfer_id' | 'seq'>): Promise<Map<number, string>> {
  const rows = await db.selectFrom('cloud_transfer_parts').select(['part_number', 'etag']).where('transfer_id', '=', item.transfer_id).where('seq', '=', item.seq).execute();
  return new Map(rows.map((r) => [r.part_number, r.etag]));
}

/** Counters recomputed from the items and parts (an attempt may have died between a part and its count). */
export async function recount(db: Db, transferId: string): Promise<void> {
  const items = await itemsOf(db, transferId);
  let files = 0;
  let bytes = 0;
  for (const it of items) {
    if (it.state === 'complete') {
      files++;
      bytes += it.size;
    } else if (it.part_size) {
      for (const n of (await partsOf(db, it)).keys()) bytes += partLength(it.size, it.part_size, n);
    }
  }
  await db.updateTable('cloud_transfers').set({ files_done: files, bytes_done: bytes }).where('id', '=', transferId).execute();
}

/** A multipart upload begun at the destination for the item (and, cloud_to_svc, the file registered for it). */
export async function startItemUpload(db: Db, item: Pick<Item, 'transfer_id' | 'seq'>, uploadId: string | null, partSize: number, fileId?: string): Promise<void> {
  await db.transaction().execute(async (trx) => {
    await trx.deleteFrom('cloud_transfer_parts').where('transfer_id', '=', item.transfer_id).where('seq', '=', item.seq).execute();
    await trx
      .updateTable('cloud_transfer_items')
      .set({ upload_id: uploadId, part_size: partSize, ...(fileId !== undefined ? { file_id: fileId } : {}) })
      .where('transfer_id', '=', item.transfer_id)
      .where('seq', '=', item.seq)
      .execute();
  });
}

/** Its upload is gone (aborted or expired at the destination): the item starts over. */
export async function resetItemUpload(db: Db, item: Pick<Item, 'transfer_id' | 'seq'>): Promise<void> {
  await db.transaction().execute(async (trx) => {
    await trx.deleteFrom('cloud_transfer_parts').where('transfer_id', '=', item.transfer_id).where('seq', '=', item.seq).execute();
    await trx.updateTable('cloud_transfer_items').set({ upload_id: null, part_size: null }).where('transfer_id', '=', item.transfer_id).where('seq', '=', item.seq).execute();
  });
}

export async function recordPart(db: Db, item: Pick<Item, 'transfer_id' | 'seq'>, partNumber: number, etag: string, bytes: number): Promise<void> {
  await db.transaction().execute(async (trx) => {
    await trx
      .insertInto('cloud_transfer_parts')
      .values({ transfer_id: item.transfer_id, seq: item.seq, part_number: partNumber, etag })
      .onConflict((oc) => oc.columns(['transfer_id', 'seq', 'part_number']).doUpdateSet({ etag }))
      .execute();
    await trx.updateTable('cloud_transfers').set((eb) => ({ bytes_done: eb('bytes_done', '+', bytes), updated_at: nowIso() })).where('id', '=', item.transfer_id).execute();
  });
}

/** The object is at its destination; `bytesLeft` are its bytes not yet counted by parts. */
export async function completeItem(db: Db, item: Pick<Item, 'transfer_id' | 'seq'>, etag: string | null, bytesLeft: number): Promise<void> {
  await db.transaction().execute(async (trx) => {
    const r = await trx
      .updateTable('cloud_transfer_items')
      .set({ state: 'complete', etag, upload_id: null })
      .where('transfer_id', '=', item.transfer_id)
      .where('seq', '=', item.seq)
      .where('state', '=', 'pending')
      .executeTakeFirst();
    if (r.numUpdatedRows === 0n) return;
    await trx.deleteFrom('cloud_transfer_parts').where('transfer_id', '=', item.transfer_id).where('seq', '=', item.seq).execute();
    await trx
      .updateTable('cloud_transfers')
      .set((eb) => ({ files_done: eb('files_done', '+', 1), bytes_done: eb('bytes_done', '+', bytesLeft), updated_at: nowIso() }))
      .where('id', '=', item.transfer_id)
      .execute();
  });
}

/** Runs `fn` over `items`, `n` at a time; the first failure stops new starts and is thrown once the others end. */
export async function pool<T>(items: T[], n: number, fn: (t: T) => Promise<void>): Promise<void> {
  let next = 0;
  let failed: { err: unknown } | undefined;
  const lane = async () => {
    while (next < items.length && !failed) {
      const t = items[next++]!;
      try {
        await fn(t);
      } catch (err) {
        failed ??= { err };
      }
    }
  };
  await Promise.all(Array.from({ length: Math.min(n, items.length) }, lane));
  if (failed) throw failed.err;
}
