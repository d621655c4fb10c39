// Downloads: a Link URL in, the Package's folder tree out. No session needed.
// The REST routes and the desktop app call these operations; the Link is
// resolved and previewed by downloadLink.ts, and the engine
// (engine/downloadJob.ts) does the transfer itself.
import { randomUUID } from 'node:crypto';
import path from 'node:path';
import type { AgentContext } from '../context.js';
import type { CreateDownloadBody, CreatedDownload, DownloadState, DownloadSummary } from '../../api/agent/downloads.js';
import { DEFAULT_RANGE_SIZE } from '../../api/agent/downloads.js';
import { eachPackageFilesPage, parseLinkUrl } from '../../client/downloads.js';
import { conflict, invalid, notFound } from '../errors.js';
import * as store from '../store/downloadStore.js';
import { DownloadJob } from '../engine/downloadJob.js';
import { DownloadWriter } from '../engine/downloadWriter.js';
import { DownloadSource } from '../engine/downloadSource.js';
import { DownloadPlan } from '../engine/downloadPlan.js';
import { checkRequestPath, makeFolder } from '../engine/requestPath.js';
import { createRangeTransport } from '../engine/rangeFetch.js';
import { TransferFeed } from '../engine/feed.js';
import { publishChange } from './transferChanges.js';
import { FILES_PAGE_DEFAULT, type DownloadFilesPage, type IndexedDownloadItem, type KeepRecord, type StreamedRecord } from '../../api/agent/transfers.js';
import { QueueFeed } from '../engine/queueFeed.js';
import { engineTuning } from '../engine/retry.js';
import { removeQuietly, partPathOf } from '../engine/downloadFiles.js';
import { LinkTokens } from './linkTokens.js';
import { createDownloadLinks } from './downloadLink.js';

/** A uid/gid override must be possible for this process, else every file would fail at the end. */
function checkOwnership(uid: number | undefined, gid: number | undefined): void {
  if (process.platform === 'win32' || !process.getuid || process.getuid() === 0) return;
  if (uid !== undefined && uid !== process.getuid()) throw invalid('user_id: changing file ownership to another user needs the agent to run as root');
  if (gid !== undefined && !(process.getgroups?.() ?? []).includes(gid) && gid !== process.getgid?.()) {
    throw invalid('group_id: the agent is not a member of that group');
  }
}

export function createDownloadsService(ctx: AgentContext) {
  const jobs = new Map<string, DownloadJob>();
  const links = createDownloadLinks(ctx);
  const { apiBaseFor, clientFor, clients } = links;
  const tuning = engineTuning(process.env, ctx.config.retryForMs);
  const transport = createRangeTransport(tuning.timeoutMs, { disks: ctx.disks, bucket: ctx.rates.download });

  function makeJob(row: store.DownloadRow): DownloadJob {
    const source = new DownloadSource(
      clientFor(row.api_base),
      { linkId: row.link_id, secret: row.link_secret, password: row.link_password, packageId: row.package_id, packageToken: row.package_token },
      (token) => store.setPackageToken(ctx.db, row.id, token),
    );
    const writer = new DownloadWriter({
      db: ctx.db,
      downloadId: row.id,
      dstFolder: row.dst_folder,
      rootSegs: JSON.parse(row.root_segments) as string[],
      owner: { uid: row.user_id, gid: row.group_id },
      source,
      transport,
      tuning,
      outages: ctx.outages,
      apiBase: row.api_base,
    });
    const job = new DownloadJob(row, {
      db: ctx.db,
      scheduler: ctx.scheduler,
      log: ctx.log,
      writer,
      tuning,
      changed: (id, kind, file) => feed.changed(id, kind, file),
    });
    jobs.set(row.id, job);
    return job;
  }

  const feed = new TransferFeed<DownloadSummary, IndexedDownloadItem>({
    summary: (id) => jobs.get(id)?.summary(),
    totals: true,
    files: (id, indexes) => jobs.get(id)?.filesAt(indexes) ?? [],
    followsFiles: (id) => ctx.events.followsFiles(id),
    send: (id, c) => publishChange(ctx.events, 'download', id, c),
  });
  const queue = new QueueFeed(ctx.scheduler, 'download', (id) => feed.changed(id, 'state'));

  for (const stored of store.loadDownloads(ctx.db)) makeJob(stored);

  const jobOf = (id: string) => {
    const job = jobs.get(id);
    if (!job) throw notFound('download');
    return job;
  };
  const all = () => [...jobs.values()];

  /** Stops and forgets the download; answers its summary. `keep`: given its whole record once it has stopped, before its rows go. */
  async function removeJob(job: DownloadJob, removeFiles: boolean, keep?: KeepRecord): Promise<DownloadSummary> {
    await job.stop();
    jobs.delete(job.id);
    const answer = job.summary();
    if (keep) await keep(job.record());
    // Partial files cannot be resumed once the record is gone, so they always go; finished files only when asked.
    // A batch at a time, read from the rows before they go: a crash half-way leaves the download listed, to remove again.
    for (const batch of job.entryBatches()) {
      const files: string[] = [];
      for (const item of batch) {
        const dir = job.writer.localDir(item);
        if (!dir || !item.localName) continue;
        if (item.state !== 'complete') files.push(partPathOf(dir, item.localName));
        else if (removeFiles) files.push(path.join(dir, item.localName));
      }
      await removeQuietly(files, []);
    }
    const dirs = store.createdDirs(ctx.db, job.id);
    store.deleteDownload(ctx.db, job.id);
    if (removeFiles) await removeQuietly([], dirs);
    feed.removed(job.id);
    return answer;
  }

  return {
    /** The files a Link offers, before anything is downloaded (the app's "Show files"): downloadLink.ts, linkPreview.ts. */
    preview: links.preview,
    previewFiles: links.previewFiles,

    /**
     * POST /downloads: resolves the Link and lists its Package before anything is created.
     * `made.id`: chosen (and recorded) by a Portal download automation before the download is made.
     */
    async create(body: CreateDownloadBody, made: { id?: string } = {}): Promise<CreatedDownload> {
      // Checked before the Link is resolved (which counts one access of it).
      const dst = (await checkRequestPath(body.dst_folder, { field: 'dst_folder', kind: 'folder', write: true, create: true })).abs;
      checkOwnership(body.user_id, body.group_id);
      const link = parseLinkUrl(body.url);
      if (typeof link === 'string') throw invalid(link, 'url');
      const apiBase = apiBaseFor(link.origin);
      const http = clientFor(apiBase);
      const password = body.password || undefined;
      // The preview's resolution if there was one: this receive counts once.
      const key = LinkTokens.key(apiBase, link.linkId, link.secret, password);
      const plan = new DownloadPlan(ctx.db);
      try {
        // Listed a page at a time into the plan's stage; begun again if a kept token stops working.
        const { info } = await links.open(http, key, link, password, (h, packageId, token) => {
          plan.reset();
          return eachPackageFilesPage(h, packageId, token, (page) => plan.add(page));
        });
        plan.narrow({ fileIds: body.file_ids, bypassQuarantine: body.bypass_package_quarantine ?? true });

        await makeFolder(dst, 'dst_folder');
        const id = made.id ?? randomUUID();
        if (jobs.has(id)) throw conflict(`download ${id} exists already`);
        const now = new Date().toISOString();
        const row: store.DownloadRow = {
          id,
          api_base: apiBase,
          link_id: link.linkId,
          link_secret: link.secret,
          link_password: password ?? null,
          package_id: info.package_id,
          package_name: info.name,
          package_token: info.package_token,
          dst_folder: path.resolve(dst),
          root_segments: JSON.stringify(body.create_package_folder === false ? [] : plan.rootSegments(info.name, info.package_id)),
          chunk_size: body.chunk_size ?? DEFAULT_RANGE_SIZE,
          priority: body.priority ?? 0,
          user_id: body.user_id ?? null,
          group_id: body.group_id ?? null,
          state: 'transferring',
          error: null,
          created_at: now,
          updated_at: now,
        };
        store.insertDownload(ctx.db, row, plan.stage);
        links.forget(key);
        const job = makeJob(row);
        // The Package's folders first (empty ones included), then the transfer.
        try {
          await job.writer.makeDirs([]);
          for (const batch of plan.dirBatches()) for (const segs of batch) await job.writer.makeDirs(segs);
        } catch (err) {
          ctx.log.warn({ err, download: id }, 'a folder of the Package could not be made');
        }
        job.start();
        feed.changed(id, 'state');
        return { download_id: id };
      } finally {
        plan.drop();
      }
    },

    list: (): StreamedRecord[] => all().map((j) => j.record()),
    /** Every download without its entries (the window's snapshot, `GET /downloads?files=false`). */
    summaries: (): DownloadSummary[] => all().map((j) => j.summary()),
    get: (id: string): StreamedRecord => jobOf(id).record(),
    summary: (id: string): DownloadSummary => jobOf(id).summary(),
    /** `limit` entries after the index `after`: GET /downloads/{id}/files. */
    files: (id: string, after = -1, limit = FILES_PAGE_DEFAULT): DownloadFilesPage => jobOf(id).files(after, limit),

    async pause(id: string): Promise<DownloadSummary> {
      const job = jobOf(id);
      if (job.state === 'complete' || job.state === 'error') throw conflict(`download is ${job.state}; only a transferring download can be paused`);
      await job.pause();
      return job.summary();
    },
    /** Pauses every transferring download; answers those. */
    async pauseMany(): Promise<DownloadSummary[]> {
      const affected = all().filter((j) => j.state === 'transferring');
      await Promise.all(affected.map((j) => j.pause()));
      return affected.map((j) => j.summary());
    },
    resume(id: string): DownloadSummary {
      const job = jobOf(id);
      if (job.state === 'complete') throw conflict('download is complete');
      if (job.row.canceled_at) throw conflict('the download was canceled, so it cannot be resumed: receive the Link again to download it');
      job.resume();
      return job.summary();
    },
    /** Resumes every paused download and every one stopped by an error; answers those. */
    resumeMany(): DownloadSummary[] {
      const affected = all().filter((j) => j.state === 'paused' || (j.state === 'error' && !j.row.canceled_at));
      for (const j of affected) j.resume();
      return affected.map((j) => j.summary());
    },
    /** Stops it at once and keeps it listed as canceled (downloadJob.ts: what happens to its files). Again: no change. */
    async cancel(id: string): Promise<DownloadSummary> {
      const job = jobOf(id);
      if (job.row.canceled_at) return job.summary();
      if (job.state === 'complete') throw conflict('the download is complete, so there is nothing to cancel: remove it from the list instead');
      await job.cancel();
      return job.summary();
    },
    /** DELETE /downloads/{id}: its summary; `keep` is given its whole record. */
    remove: (id: string, removeFiles: boolean, keep?: KeepRecord) => removeJob(jobOf(id), removeFiles, keep),
    /** DELETE /downloads[?states=]: every download, or those in the given states. */
    async removeMany(states: DownloadState[] | undefined, removeFiles: boolean, keep?: KeepRecord): Promise<DownloadSummary[]> {
      const affected = all().filter((j) => !states || states.includes(j.state));
      const out: DownloadSummary[] = [];
      for (const j of affected) out.push(await removeJob(j, removeFiles, keep));
      return out;
    },

    /** At agent start: downloads that were transferring go on from their recorded ranges, and those that failed recoverably resume. */
    resumeAll(): void {
      for (const job of all()) job.start();
      this.resumeRecoverable();
    },

    /** Resumes the downloads that failed recoverably (a paused one stays paused): at start, and when a target comes back. */
    resumeRecoverable(): void {
      for (const job of all()) {
        if (!job.recoverable) continue;
        ctx.log.info({ download: job.id, error: job.row.error }, 'resuming a download that failed recoverably');
        job.resume();
      }
    },

    /** A target came back: what waits out a back-off goes now. */
    retryNow(): void {
      for (const job of all()) job.retryNow();
    },

    /** After a sleep of the machine: connections that may have died with it are dropped, and ranges in flight start again. */
    reconnect(): void {
      transport.reconnect();
      for (const c of clients.values()) c.reconnect();
      for (const job of all()) job.kick();
    },
    /** Aborts ranges in flight and keeps every state, so the next start resumes them. */
    async close(): Promise<void> {
      feed.close();
      queue.close();
      await Promise.all(all().map((j) => j.stop()));
      await Promise.all([...clients.values()].map((c) => c.destroy().catch(() => {})));
      await transport.close().catch(() => {});
    },
  };
}
export type DownloadsService = ReturnType<typeof createDownloadsService>;
