// The transfer manifest (upload_transfer_manifest): a JSON file written into
// the Package's folder after its objects, listing what was delivered, so that
// whatever watches the bucket knows the delivery is complete and what it holds.
import { Readable } from 'node:stream';
import { PutObjectCommand } from '@aws-sdk/client-s3';
import type { HostedContext } from '../context.js';
import type { CloudConnectionsTable, CloudTransfersTable, PackagesTable } from '../db/schema.js';
import { nowIso } from '../ids.js';
import type { S3Target } from './s3Target.js';
import { itemPages, type Item } from './progress.js';

export const MANIFEST_NAME = 'ferry-transfer-manifest.json';

/** The manifest's key: its fixed name in the folder, unless a delivered file already has that key. */
export async function manifestKey(folder: string, transferId: string, taken: (key: string) => Promise<boolean>): Promise<string> {
  const plain = folder ? `${folder}/${MANIFEST_NAME}` : MANIFEST_NAME;
  if (!(await taken(plain))) return plain;
  return plain.replace(/\.json$/, `-${transferId}.json`);
}
export interface ManifestFile {
  path: string;
  name: string;
  key: string;
  size: number;
  last_modified: string;
  etag: string | null;
}

export interface Manifest {
  manifest_version: 1;
  transfer_id: string;
  cloud_connection_id: string;
  package: { id: string; name: string; sender: string; portal_id: string | null; size: number; total_files: number; finalized_at: string | null };
  bucket: string;
  folder: string;
  completed_at: string;
  /** Files of the Package the connection's filter left out. */
  files_filtered_out: number;
  files: ManifestFile[];
}

type Head = Omit<Manifest, 'files'>;

export function manifestHead(t: { transfer: CloudTransfersTable; conn: CloudConnectionsTable; pkg: PackagesTable }, bucket: string, folder: string): Head {
  return {
    manifest_version: 1,
    transfer_id: t.transfer.id,
    cloud_connection_id: t.conn.id,
    package: {
      id: t.pkg.id,
      name: t.pkg.name,
      sender: t.pkg.sender,
      portal_id: t.pkg.portal_id,
      size: t.pkg.size,
      total_files: t.pkg.total_files,
      finalized_at: t.pkg.finalized_at,
    },
    bucket,
    folder,
    completed_at: nowIso(),
    files_filtered_out: t.transfer.files_filtered_out,
  };
}

const manifestFile = (i: Item): ManifestFile => ({ path: i.path, name: i.name, key: i.dest_key ?? '', size: i.size, last_modified: i.last_modified, etag: i.etag });

/**
 * The manifest's text, piece by piece: what JSON.stringify(manifest, null, 2) and a
 * newline make, its files written as each page of items comes, so that the
 * manifest of a million files is never one string. Each call walks the pages again.
 */
export async function* manifestText(head: Head, pages: () => AsyncIterable<Item[]>): AsyncGenerator<string> {
  const open = JSON.stringify({ ...head, files: [] }, null, 2);
  // The files are the last key: the text up to its empty array, then the entries, then the close.
  yield open.slice(0, open.length - '[]\n}'.length) + '[';
  let first = true;
  for await (const page of pages()) {
    let piece = '';
    for (const item of page) {
      piece += `${first ? '' : ','}\n    ${JSON.stringify(manifestFile(item), null, 2).replace(/\n/g, '\n    ')}`;
      first = false;
    }
    if (piece) yield piece;
  }
  yield first ? ']\n}\n' : '\n  ]\n}\n';
}

export async function putManifest(
  ctx: HostedContext,
  target: S3Target,
  folder: string,
  t: { transfer: CloudTransfersTable; conn: CloudConnectionsTable; pkg: PackagesTable; pageSize: number },
  signal: AbortSignal,
): Promise<void> {
  const transferId = t.transfer.id;
  const key = await manifestKey(folder, transferId, async (plain) =>
    (await ctx.db.selectFrom('cloud_transfer_items').select('seq').where('transfer_id', '=', transferId).where('dest_key', '=', plain).limit(1).executeTakeFirst()) !== undefined,
  );
  const fresh = await ctx.db.selectFrom('cloud_transfers').selectAll().where('id', '=', transferId).executeTakeFirstOrThrow();
  const head = manifestHead({ ...t, transfer: fresh }, target.bucket, key.includes('/') ? key.slice(0, key.lastIndexOf('/')) : '');
  const pages = () => itemPages(ctx.db, transferId, { size: t.pageSize });
  // Two walks over the items, as the ZIP does: one for the length PutObject needs, one to send.
  let length = 0;
  for await (const piece of manifestText(head, pages)) length += Buffer.byteLength(piece);
  const body = Readable.from(manifestText(head, pages), { objectMode: false });
  try {
    await target.client.send(
      // In the default storage class whatever the files' is: a manifest in an archive class could not be read without a restore.
      new PutObjectCommand({ Bucket: target.bucket, Key: key, Body: body, ContentLength: length, ContentType: 'application/json' }),
      { abortSignal: signal },
    );
  } finally {
    body.destroy();
  }
  await ctx.db.updateTable('cloud_transfers').set({ manifest_key: key }).where('id', '=', transferId).execute();
}
