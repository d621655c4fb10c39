// The transfer manifest (upload_transfer_manifest): a JSON file written into
// the Package's folder after its objects, listing what was delivered, so that
// whatever watches the bucket knows the delivery is complete and what it holds.
import { PutObjectCommand } from '@aws-sdk/client-s3';
import type { HostedContext } from '../context.js';
import type { CloudConnectionsTable, CloudTransfersTable, PackagesTable } from '../db/schema.js';
import { nowIso } from '../ids.js';
import type { S3Target } from './s3Target.js';
import type { Item } from './progress.js';

export const MANIFEST_NAME = 'ferry-transfer-manifest.json';

/** The manifest's key: its fixed name in the folder, unless a delivered file already has that key. */
export function manifestKey(folder: string, items: Pick<Item, 'dest_key'>[], transferId: string): string {
  const plain = folder ? `${folder}/${MANIFEST_NAME}` : MANIFEST_NAME;
  if (!items.some((i) => i.dest_key === plain)) return plain;
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

export function buildManifest(
  t: { transfer: CloudTransfersTable; conn: CloudConnectionsTable; pkg: PackagesTable; items: Item[] },
  bucket: string,
  folder: string,
): Manifest {
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
    files: t.items.map((i) => ({ path: i.path, name: i.name, key: i.dest_key ?? '', size: i.size, last_modified: i.last_modified, etag: i.etag })),
  };
}

export async function putManifest(
  ctx: HostedContext,
  target: S3Target,
  key: string,
  t: { transfer: CloudTransfersTable; conn: CloudConnectionsTable; pkg: PackagesTable; items: Item[] },
  signal: AbortSignal,
): Promise<void> {
  const fresh = await ctx.db.selectFrom('cloud_transfers').selectAll().where('id', '=', t.transfer.id).executeTakeFirstOrThrow();
  const folder = key.includes('/') ? key.slice(0, key.lastIndexOf('/')) : '';
  const body = Buffer.from(`${JSON.stringify(buildManifest({ ...t, transfer: fresh }, target.bucket, folder), null, 2)}\n`);
  await target.client.send(
    // In the default storage class whatever the files' is: a manifest in an archive class could not be read without a restore.
    new PutObjectCommand({ Bucket: target.bucket, Key: key, Body: body, ContentLength: body.length, ContentType: 'application/json' }),
    { abortSignal: signal },
  );
  await ctx.db.updateTable('cloud_transfers').set({ manifest_key: key }).where('id', '=', t.transfer.id).execute();
}
