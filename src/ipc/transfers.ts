// A transfer as the window and main know it: its summary (no file list), keyed
// `upload:<id>` or `download:<id>`, kept up to date by the agent's changes. One
// key, one way to apply a change, for the renderer's store and main's tray alike.
import type { UploadSummary } from '../api/agent/uploads.js';
import type { DownloadSummary } from '../api/agent/downloads.js';
import type { Direction, Totals } from '../api/agent/transfers.js';
import type { TransferEvent } from './contract.js';

export type TransferSummary = ({ direction: 'upload' } & UploadSummary) | ({ direction: 'download' } & DownloadSummary);

export const transferKey = (direction: Direction, id: string) => `${direction}:${id}`;
export const transferIdOf = (t: TransferSummary) => (t.direction === 'upload' ? t.upload_id : t.download_id);
export const keyOfTransfer = (t: TransferSummary) => transferKey(t.direction, transferIdOf(t));
/** Whether a string (from the window's address, say) is a transfer's key. */
export const isTransferKey = (key: string) => /^(upload|download):[A-Za-z0-9_-]{1,100}$/.test(key);
/**
 * The name a transfer is shown by, in the window, the tray, notifications and the CLI:
 * its Package's name, both ways. (An upload's `name`, what it was made of here, is a detail.)
 */
export const transferName = (t: { package_name: string }) => t.package_name;

export const withDirection = {
  upload: (u: UploadSummary): TransferSummary => ({ direction: 'upload', ...u }),
  download: (d: DownloadSummary): TransferSummary => ({ direction: 'download', ...d }),
};

/** The key of the transfer a change is about. */
export function keyOfChange(e: TransferEvent): string {
  if (e.type === 'upload') return transferKey('upload', e.data.change === 'record' ? e.data.upload.upload_id : e.data.upload_id);
  return transferKey('download', e.data.change === 'record' ? e.data.download.download_id : e.data.download_id);
}

/** The transfer after a change: undefined once removed (or for totals of a transfer not known: its record comes first). */
export function applyChange(before: TransferSummary | undefined, e: TransferEvent): TransferSummary | undefined {
  const d = e.data;
  if (d.change === 'record') return 'upload' in d ? withDirection.upload(d.upload) : withDirection.download(d.download);
  if (d.change === 'removed') return undefined;
  if (d.change === 'files' || !before) return before;
  return withTotals(before, d);
}

/** A summary with the moving totals of a `progress` change. */
export const withTotals = <T extends Totals>(t: T, { progress, size, file_count, files_done, updated_at }: Totals): T => ({ ...t, progress, size, file_count, files_done, updated_at });
