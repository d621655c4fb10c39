// Where a cloud transfer stands, in the database before the next step starts:
// its items (one object each), the parts of an item's multipart upload that
// are stored at the destination, and the transfer's counters. A resumed attempt
// reads this back and sends only what is missing.
import type { Db } from '../db/open.js';
import type { CloudTransferItemsTable, CloudTransfersTable } from '../db/schema.js';
import { nowIso } from '../ids.js';
import { partLength } from '../services/chunks.js';

export type Item = CloudTransferItemsTable;

/** An item as planned: what to copy, before any of it is sent. */
export type PlannedItem = Omit<Item, 'transfer_id' | 'seq' | 'state' | 'upload_id' | 'part_size' | 'etag'>;

/**
 * Saves a transfer's plan: its items, in batches as they come (each batch its own
 * transaction, so that a plan of a million items is neither held in memory nor
 * holds the database's writer for its whole length), then its totals, which mark
 * it planned. Items an attempt left before its plan was complete are dropped
 * first; a transfer is planned once. `totals` is asked once every batch is in.
 */
export async function savePlan(
  db: Db,
  transferId: string,
  batches: Iterable<PlannedItem[]> | AsyncIterable<PlannedItem[]>,
  totals: () => Pick<CloudTransfersTable, 'files_filtered_out' | 'destination'>,
): Promise<void> {
  const t = await db.selectFrom('cloud_transfers').select('planned').where('id', '=', transferId).executeTakeFirstOrThrow();
  if (t.planned) return;
  // No part can exist yet: an item gets parts only once its transfer is planned.
  await db.deleteFrom('cloud_transfer_items').where('transfer_id', '=', transferId).execute();
  let seq = 0;
  let bytes = 0;
  for await (const batch of batches) {
    const first = seq;
    await db.transaction().execute(async (trx) => {
      for (let i = 0; i < batch.length; i += 200) {
        const rows = batch.slice(i, i + 200).map((it, j) => ({ ...it, transfer_id: transferId, seq: first + i + j + 1, state: 'pending' as const, upload_id: null, part_size: null, etag: null }));
        await trx.insertInto('cloud_transfer_items').values(rows).execute();
      }
    });
    seq += batch.length;
    for (const it of batch) bytes += it.size;
  }
  const { files_filtered_out, destination } = totals();
  await db
    .updateTable('cloud_transfers')
    .set({ planned: 1, files_total: seq, bytes_total: bytes, files_filtered_out, destination, updated_at: nowIso() })
    .where('id', '=', transferId)
    .where('planned', '=', 0)
    .execute();
}

/**
 * The transfer's items in order, `size` at a time (--cloud-page-size; only those
 * still pending with `pendingOnly`): a million items never sit in memory at once.
 */
export async function* itemPages(db: Db, transferId: string, { size, pendingOnly = false }: { size: number; pendingOnly?: boolean }): AsyncGenerator<Item[]> {
  let after = 0;
  for (;;) {
    let q = db.selectFrom('cloud_transfer_items').selectAll().where('transfer_id', '=', transferId).where('seq', '>', after);
    if (pendingOnly) q = q.where('state', '=', 'pending');
    const rows = await q.orderBy('seq').limit(size).execute();
    if (rows.length > 0) yield rows;
    if (rows.length < size) return;
    after = rows[rows.length - 1]!.seq;
  }
}

/** Every item of a transfer at once: for transfers of a bounded size (an import holds at most MAX_IMPORT_OBJECTS). */
export const itemsOf = (db: Db, transferId: string) =>
  db.selectFrom('cloud_transfer_items').selectAll().where('transfer_id', '=', transferId).orderBy('seq').execute();

export async function partsOf(db: Db, item: Pick<Item, 'transfer_id' | 'seq'>): Promise<Map<number, string>> {
  const rows = await db.selectFrom('cloud_transfer_parts').select(['part_number', 'etag']).where('transfer_id', '=', item.transfer_id).where('seq', '=', item.seq).execute();
  return new Map(rows.map((r) => [r.part_number, r.etag]));
}

/**
 * Counters recomputed from the items and parts (an attempt may have died between a
 * part and its count): the complete items summed in the database, and the parts
 * of the few items that have a multipart upload under way.
 */
export async function recount(db: Db, transferId: string): Promise<void> {
  const done = await db
    .selectFrom('cloud_transfer_items')
    .select((eb) => [eb.fn.countAll<number | string>().as('files'), eb.fn.coalesce(eb.fn.sum<number | string>('size'), eb.lit(0)).as('bytes')])
    .where('transfer_id', '=', transferId)
    .where('state', '=', 'complete')
    .executeTakeFirstOrThrow();
  let bytes = Number(done.bytes);
  const begun = await db
    .selectFrom('cloud_transfer_items')
    .select(['transfer_id', 'seq', 'size', 'part_size'])
    .where('transfer_id', '=', transferId)
    .where('state', '=', 'pending')
    .where('part_size', 'is not', null)
    .execute();
  for (const it of begun) for (const n of (await partsOf(db, it)).keys()) bytes += partLength(it.size, it.part_size!, n);
  await db.updateTable('cloud_transfers').set({ files_done: Number(done.files), bytes_done: bytes }).where('id', '=', transferId).execute();
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
