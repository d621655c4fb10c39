// What an automation does when a transfer it started moves on: the agent's
// event feed tells of every upload and download change, and the Package records
// of automations follow. A send that completes gets its Link (link-type Team
// sends) and has its files deleted (delete_files_after_upload); a fetch that
// completes has its private Link deleted. At start, the records whose transfer
// was under way are matched with what the uploads and downloads hold.
import type { UploadSummary } from '../../api/agent/uploads.js';
import type { DownloadSummary } from '../../api/agent/downloads.js';
import type { DownloadChange, UploadChange } from '../../api/agent/transfers.js';
import type { TeamUploadSettings } from '../../api/agent/automations.js';
import { deleteLink } from '../../client/uploads.js';
import { getUpload } from '../store/uploadStore.js';
import {
  deleteEntry,
  getAutomation,
  getEntry,
  openEntries,
  refreshSentFiles,
  retireUnit,
  sentFilesOf,
  updateEntry,
  type EntryRow,
} from '../store/automationStore.js';
import { deleteSent } from './scan.js';
import { messageOf, type RunnerHost } from './runner.js';

/** A transfer as the settler needs it: its summary, or its removal. */
type Upload = UploadSummary | { upload_id: string; removed: true };
type Download = DownloadSummary | { download_id: string; removed: true };

/** The settler hears of new records and removals; progress and file changes mean nothing to it. */
export const uploadOf = (c: UploadChange): Upload | undefined =>
  c.change === 'record' ? c.upload : c.change === 'removed' ? { upload_id: c.upload_id, removed: true } : undefined;
export const downloadOf = (c: DownloadChange): Download | undefined =>
  c.change === 'record' ? c.download : c.change === 'removed' ? { download_id: c.download_id, removed: true } : undefined;

const open = (e: EntryRow | undefined): e is EntryRow => e !== undefined && (e.state === 'pending' || e.state === 'transferring');

export function createSettler(host: RunnerHost, kick: (automationId: string) => void) {
  const { db, log } = host.ctx;
  /** Entries whose completion is being handled (it awaits the service). */
  const settling = new Set<string>();
  const fail = (e: EntryRow, message: string) => host.outcome(e.automation_id, { error: `${e.name}: ${message}` });

  async function completeSend(e: EntryRow, rec: UploadSummary): Promise<void> {
    const a = getAutomation(db, e.automation_id);
    if (!a) return;
    const f = JSON.parse(a.fields) as TeamUploadSettings & { path: string };
    // A link-type Team send gets one Link, made before the record says complete (a crash may make a second one, never none).
    if (a.type === 'team_upload' && (f.recipient_emails ?? []).length === 0 && !e.link_url) {
      try {
        const link = await host.uploads.link(e.id, {});
        updateEntry(db, e.id, { link_id: link.id, link_url: link.url });
      } catch (err) {
        updateEntry(db, e.id, { error: `its Link could not be made: ${messageOf(err)}` });
        fail(e, `sent, but its Link could not be made: ${messageOf(err)}`);
      }
    }
    if (f.growing_files) refreshSentFiles(db, e.id);
    updateEntry(db, e.id, { state: 'complete', package_id: rec.package_id });
    await db.synced();
    if (f.delete_files_after_upload && e.unit) {
      const gone = await deleteSent(f.path, e.unit, sentFilesOf(db, e.id));
      if (gone) retireUnit(db, e.automation_id, e.unit);
    }
    log.info({ automation: e.automation_id, unit: e.unit, upload: e.id }, 'watch folder: sent');
  }

  async function completeFetch(e: EntryRow): Promise<void> {
    if (e.link_id) {
      try {
        await deleteLink(host.session.hosted, e.link_id, { auth: host.session.credentials() });
      } catch (err) {
        log.warn({ err: messageOf(err), automation: e.automation_id, link: e.link_id }, 'the private Link of a fetched Package could not be deleted');
      }
    }
    updateEntry(db, e.id, { state: 'complete', error: null, link_password: null });
    log.info({ automation: e.automation_id, package: e.package_id, download: e.id }, 'portal download: fetched');
  }

  /** Runs `work` once per entry at a time, then lets the automation look again. */
  function settle(e: EntryRow, work: () => Promise<void>): void {
    if (settling.has(e.id)) return;
    settling.add(e.id);
    void work()
      .catch((err) => fail(e, messageOf(err)))
      .finally(() => {
        settling.delete(e.id);
        kick(e.automation_id);
      });
  }

  function upload(rec: Upload): void {
    const e = getEntry(db, rec.upload_id);
    if (!open(e) || e.direction !== 'send' || settling.has(e.id)) return;
    if ('removed' in rec) {
      updateEntry(db, e.id, { state: 'cancelled' });
      return kick(e.automation_id);
    }
    if (rec.state === 'complete') return settle(e, () => completeSend(e, rec));
    if (rec.state === 'error') {
      const row = getUpload(db, e.id);
      if (row && !row.error_recoverable) {
        // Its files no longer count as sent: the unit goes again after its next change.
        updateEntry(db, e.id, { state: 'failed', error: rec.error ?? 'failed' });
        kick(e.automation_id);
      } else if (e.error !== (rec.error ?? null)) updateEntry(db, e.id, { error: rec.error ?? null });
      return fail(e, rec.error ?? 'the upload failed');
    }
    if (e.state === 'pending' || e.package_id !== rec.package_id) updateEntry(db, e.id, { state: 'transferring', package_id: rec.package_id });
  }

  function download(rec: Download): void {
    const e = getEntry(db, rec.download_id);
    if (!open(e) || e.direction !== 'fetch' || settling.has(e.id)) return;
    if ('removed' in rec) {
      updateEntry(db, e.id, { state: 'cancelled' });
      return;
    }
    if (rec.state === 'complete') return settle(e, () => completeFetch(e));
    if (rec.state === 'error') {
      if (e.error !== (rec.error ?? null)) {
        updateEntry(db, e.id, { error: rec.error ?? 'failed' });
        fail(e, rec.error ?? 'the download failed');
      }
      return;
    }
    if (e.state === 'pending') updateEntry(db, e.id, { state: 'transferring' });
  }

  /** At start, before any runner: each record under way against its transfer. */
  function reconcile(): void {
    for (const e of openEntries(db)) {
      if (e.direction === 'send') {
        let rec: UploadSummary | undefined;
        try {
          rec = host.uploads.summary(e.id);
        } catch {
          rec = undefined;
        }
        if (rec) upload(rec);
        // Recorded, but the agent stopped before the upload was made: no upload, so nothing was sent.
        else if (e.state === 'pending') deleteEntry(db, e.id);
        else updateEntry(db, e.id, { state: 'cancelled' });
      } else {
        let rec: DownloadSummary | undefined;
        try {
          rec = host.downloads.summary(e.id);
        } catch {
          rec = undefined;
        }
        if (rec) download(rec);
        else if (e.state === 'transferring') updateEntry(db, e.id, { state: 'cancelled' });
        // pending without a download: its runner makes it at its first poll.
      }
    }
  }

  return { upload, download, reconcile, pending: () => settling.size };
}
