// The disk side of a download's files: folders, the `.ferrypart` each range is
// written into, the range itself (recorded in SQLite only once flushed), and
// the checks and no-clobber rename that turn a whole partial file into the file.
import { createHash } from 'node:crypto';
import fs, { type FileHandle } from 'node:fs/promises';
import path from 'node:path';
import type { AgentDb } from '../store/db.js';
import type { DownloadSource } from './downloadSource.js';
import { DownloadItem } from './downloadItem.js';
import * as store from '../store/downloadStore.js';
import { dropCache } from '../../native/pageCache.js';
import { ItemError } from './downloadErrors.js';
import { fetchRange, RangeHttpError, type RangeTransport } from './rangeFetch.js';
import { resolveInside } from './safePath.js';
import { describe, failureKind, retryAfterMs, type EngineTuning } from './retry.js';
import type { Outages, Target } from './outages.js';
import { applyOwner, ensureDirs, exists, md5File, partPathOf, plainMd5, publishPart, reopenPart, reservePart, sameFile, type Owner } from './downloadFiles.js';
import { makeFolder } from './requestPath.js';

/** Pre-signed URLs live an hour; older cached ones are replaced before they expire. */
const URL_MAX_AGE_MS = 45 * 60 * 1000;

export interface WriterDeps {
  db: AgentDb;
  downloadId: string;
  dstFolder: string;
  /** Folders between dst_folder and the Package root: the Package folder, or none. */
  rootSegs: string[];
  owner: Owner;
  source: DownloadSource;
  transport: RangeTransport;
  tuning: EngineTuning;
  outages: Outages;
  /** The service the Link is resolved on: the agent's own, or the Link's origin. */
  apiBase: string;
}

/** A range received into its partial file, in the entry's epoch then. */
export interface Received {
  fh: FileHandle;
  epoch: number;
}

/** The target a failed request went to, for the job's waiting state. */
const failedAt = new WeakMap<object, Target>();
export const targetOf = (err: unknown): Target | undefined => (typeof err === 'object' && err !== null ? failedAt.get(err) : undefined);

export class DownloadWriter {
  private readonly checkedDirs = new Set<string>();
  /** Folders this run made: nothing was in them before, so a name there needs no look first (reservePart's `fresh`). */
  private readonly madeDirs = new Set<string>();
  /** dst_folder, made (or found) once a run, as the folders under it are checked once. */
  private dstReady: Promise<unknown> | undefined;
  readonly service: Target;
  /** The store this download's URLs point to, once one was fetched. */
  private store: Target | undefined;

  constructor(private readonly d: WriterDeps) {
    this.service = d.outages.target('service', d.apiBase);
  }

  /** The service or the store when it is down: no range starts until its probe answers. */
  blocker(): Target | undefined {
    return this.service.down ? this.service : this.store?.down ? this.store : undefined;
  }

  /** Notes where `err` happened; an outage there takes the target down for every transfer. */
  private failed(err: unknown, target: Target): unknown {
    if (typeof err === 'object' && err !== null) failedAt.set(err, target);
    if (failureKind(err) === 'outage') target.report(describe(err), retryAfterMs((err as { retryAfter?: string }).retryAfter));
    return err;
  }

  /** Folder of an entry (not created); undefined when its path was refused. */
  localDir(item: DownloadItem): string | undefined {
    if (!item.segments) return undefined;
    // Made already: the same path, without resolving it again for every record of the file.
    if (item.dir) return item.dir;
    const segs = [...this.d.rootSegs, ...item.segments.slice(0, -1)];
    return segs.length ? resolveInside(this.d.dstFolder, segs) : path.resolve(this.d.dstFolder);
  }

  localPath(item: DownloadItem): string | null {
    const dir = this.localDir(item);
    return dir && item.localName ? path.join(dir, item.localName) : null;
  }

  /** Makes folders below the Package root one level at a time, refusing symlinks on the way. */
  async makeDirs(segs: string[]): Promise<string> {
    // Not fs.mkdir's recursive mode, which never ends on some file systems (see requestPath.ts).
    await (this.dstReady ??= makeFolder(this.d.dstFolder, 'dst_folder').catch((err: unknown) => {
      this.dstReady = undefined;
      throw err;
    }));
    return ensureDirs(this.d.dstFolder, [...this.d.rootSegs, ...segs], {
      created: (dir) => {
        this.madeDirs.add(dir);
        store.recordCreatedDir(this.d.db, this.d.downloadId, dir);
      },
      checked: this.checkedDirs,
      owner: this.d.owner,
    });
  }

  /**
   * Fetches range idx into the entry's partial file (written, not yet flushed):
   * the part of a range that needs the store. `commit` then makes it durable and
   * records it. Answers the partial file and the entry's epoch the bytes belong to.
   */
  async receive(item: DownloadItem, idx: number, signal: AbortSignal, onBytes: (n: number) => void): Promise<Received> {
    const fh = await this.open(item);
    // Read after the open, which starts the entry over when its partial file is gone: this range then belongs to the new start.
    const epoch = item.epoch;
    const [start, end] = item.bounds(idx);
    if (end < start) return { fh, epoch };
    for (let refresh = 0, failed: string | undefined; ; refresh++) {
      // The whole object in one answer: its MD5 is taken as it arrives, so finalize need not read the file back.
      const md5 = item.count === 1 ? createHash('md5') : undefined;
      const url = await this.urlOf(item, failed, signal).then(
        (u) => (this.service.ok(), u),
        (err) => {
          throw this.failed(err, this.service);
        },
      );
      const storeTarget = (this.store = this.d.outages.target('store', url));
      item.inFlight.set(idx, 0);
      try {
        const disk = item.dir ? await this.d.transport.disks?.gateOf(item.dir) : undefined;
        const etag = await fetchRange({ url, start, end, total: item.size, etag: item.etag, fh, signal, transport: this.d.transport, onBytes, md5, disk });
        storeTarget.ok();
        // Kept with the range's record (commit): it matters once a range is recorded.
        if (etag && !item.etag && item.epoch === epoch) item.etag = etag;
        if (md5 && item.epoch === epoch) item.receivedMd5 = md5.digest('hex');
        return { fh, epoch };
      } catch (err) {
        // An expired pre-signed URL answers 403: ask the service for a fresh one, a bounded number of times.
        if (err instanceof RangeHttpError && err.status === 403 && refresh < this.d.tuning.maxExpiredRefreshes && !signal.aborted) {
          failed = url;
          continue;
        }
        throw this.failed(err, storeTarget);
      }
    }
  }

  /**
   * Flushes range idx (received in `epoch`) and records it: on disk before it
   * is recorded, so a recorded range survives power loss, not only a crash.
   * Nothing is recorded when the entry was reset or failed meanwhile.
   */
  async commit(item: DownloadItem, idx: number, { fh, epoch }: Received, signal: AbortSignal): Promise<void> {
    const [start, end] = item.bounds(idx);
    if (end >= start) {
      await fh.datasync();
      // Then out of the page cache, unless finalize reads the file back for its MD5:
      // a large download would otherwise crowd out every other cached file.
      if (item.count > 1 && !plainMd5(item.etag)) dropCache(fh.fd, start, end - start + 1);
    }
    signal.throwIfAborted();
    if (item.epoch !== epoch || item.state !== 'pending') return;
    // Its commit is shared with the other ranges recorded in this turn; synced() makes it durable.
    const etag = item.etag;
    this.d.db.soon(() => store.recordRange(this.d.db, this.d.downloadId, item.fileId, idx, etag));
    await this.d.db.synced();
    // Reset meanwhile: its ranges, this record included, were forgotten.
    if (item.epoch !== epoch) return;
    item.inFlight.delete(idx);
    item.markDone(idx);
  }

  /**
   * Gets an entry ready before its turn: its URL asked for (gathered with those
   * of the entries around it) and, with `open`, its partial file made. A failure
   * is left for the range's own attempt to meet again.
   */
  warm(item: DownloadItem, signal: AbortSignal, open: boolean): void {
    if (item.state !== 'pending' || !item.segments || signal.aborted) return;
    if (item.size > 0 && !item.urlPending && !item.url) void this.urlOf(item, undefined, signal).catch(() => undefined);
    if (open && !item.fh) void this.open(item).catch(() => undefined);
  }

  private async urlOf(item: DownloadItem, failed: string | undefined, signal: AbortSignal): Promise<string> {
    if (item.url && item.url.value !== failed && Date.now() - item.url.at < URL_MAX_AGE_MS) return item.url.value;
    if (item.urlPending) {
      try {
        const u = await item.urlPending;
        if (u !== failed) return u;
      } catch (err) {
        // A request begun by a range that was paused since is no answer for this one.
        if (signal.aborted) throw err;
      }
    }
    item.urlPending ??= this.d.source
      .fileUrl(item.fileId, signal)
      .then((value) => {
        item.url = { value, at: Date.now() };
        return value;
      })
      .finally(() => (item.urlPending = undefined));
    return item.urlPending;
  }

  private open(item: DownloadItem): Promise<FileHandle> {
    if (item.fh) return Promise.resolve(item.fh);
    item.opening ??= this.prepare(item).finally(() => (item.opening = undefined));
    return item.opening;
  }

  private async prepare(item: DownloadItem): Promise<FileHandle> {
    if (!item.segments) throw new ItemError(item.error ?? 'its path was refused');
    const dir = (item.dir ??= await this.makeDirs(item.segments.slice(0, -1)));
    if (!item.localName) {
      // The name's record shares its commit with the other names taken in this turn.
      const record = (name: string) => this.d.db.committed(() => this.rename(item, name));
      const r = await reservePart(dir, item.segments[item.segments.length - 1]!, record, this.madeDirs.has(dir));
      item.fhFresh = true;
      return (item.fh = r.fh);
    }
    const part = partPathOf(dir, item.localName);
    let fh = await reopenPart(part);
    item.fhFresh = !fh;
    if (!fh) {
      // The partial file is gone (removed by hand, or a crash came before it was made): start it over.
      this.reset(item);
      fh = await fs.open(part, 'w');
    }
    return (item.fh = fh);
  }

  /** Forgets an entry that will not be fetched: its partial file (nothing or little was written) goes. */
  async discard(item: DownloadItem): Promise<void> {
    await item.opening?.catch(() => undefined);
    await item.closeFile();
    const dir = this.localDir(item);
    const name = item.localName;
    if (!dir || !name) return;
    item.localName = null;
    store.setItemLocalName(this.d.db, this.d.downloadId, item.fileId, null);
    await fs.rm(partPathOf(dir, name), { force: true });
  }

  /** Removes the partial file of an entry not held in memory (a cancel). */
  async removePart(row: store.ItemRow): Promise<void> {
    const dir = row.local_name ? this.localDir(new DownloadItem(row, 1, [])) : undefined;
    if (dir) await fs.rm(partPathOf(dir, row.local_name!), { force: true });
  }

  private rename(item: DownloadItem, name: string): void {
    store.setItemLocalName(this.d.db, this.d.downloadId, item.fileId, name);
    item.localName = name;
  }

  /** Forgets an entry's ranges so that it is fetched again from the start. */
  reset(item: DownloadItem): void {
    store.clearRanges(this.d.db, this.d.downloadId, item.fileId);
    item.resetRanges();
  }

  /**
   * Checks a whole partial file (size, and MD5 when the ETag is a plain one)
   * and gives it its final name. 'restart' when the partial file was lost and
   * the entry must be fetched again; ItemError when the check fails.
   */
  async finalize(item: DownloadItem, signal: AbortSignal): Promise<'complete' | 'restart'> {
    const name = item.localName;
    if (!name || !item.segments) throw new ItemError('finished ranges but no file name');
    const dir = (item.dir ??= await this.makeDirs(item.segments.slice(0, -1)));
    if (item.fh) return this.finalizeOpen(item, item.fh, dir, name, signal);
    const part = partPathOf(dir, name);
    const final = path.join(dir, name);
    if (!(await exists(part))) {
      // Published just before a crash, or another file took the name meanwhile: ours only if it is what the Package lists.
      if ((await exists(final)) && !(await this.mismatch(final, item, signal))) return this.complete(item, final);
      this.reset(item);
      return 'restart';
    }
    if (await sameFile(part, final)) {
      await fs.rm(part, { force: true });
      return this.complete(item, final);
    }
    const mismatch = await this.mismatch(part, item, signal);
    if (mismatch) {
      this.reset(item);
      throw new ItemError(mismatch);
    }
    const used = await publishPart(dir, name, item.segments[item.segments.length - 1]!, (n) => this.rename(item, n));
    return this.complete(item, path.join(dir, used));
  }

  /**
   * finalize() of an entry whose partial file this run holds open, the way of
   * every file fetched in one go: no earlier run can have published it (that
   * needs every range recorded, which a fetch found not so), so the checks for
   * a crash between publish and record are not needed, and the size, times and
   * MD5 (taken as the bytes arrived, when the file came in one answer) go
   * through the open descriptor instead of paths.
   */
  private async finalizeOpen(item: DownloadItem, fh: FileHandle, dir: string, name: string, signal: AbortSignal): Promise<'complete' | 'restart'> {
    // Each range wrote exactly its bytes (fetchRange counts them) into a file made empty in this run: its size is the listed one.
    const size = item.fhFresh ? item.size : (await fh.stat()).size;
    let mismatch = size !== item.size ? `wrote ${size} bytes, the Package lists ${item.size}` : undefined;
    const md5 = plainMd5(item.etag);
    if (!mismatch && md5 && (item.receivedMd5 ?? (await md5File(partPathOf(dir, name), signal))) !== md5) mismatch = "the MD5 of the written file differs from the store's ETag";
    if (mismatch) {
      await item.closeFile();
      this.reset(item);
      throw new ItemError(mismatch);
    }
    if (item.lastModified) await fh.utimes(new Date(), new Date(item.lastModified)).catch(() => {});
    await item.closeFile();
    try {
      const used = await publishPart(dir, name, item.segments![item.segments!.length - 1]!, (n) => this.rename(item, n));
      return this.complete(item, path.join(dir, used), true);
    } catch (err) {
      // The partial file was removed meanwhile (by hand): fetch it again.
      if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
      this.reset(item);
      return 'restart';
    }
  }

  /** How the file at `p` differs from the entry, in its size or, where the ETag is a plain one, its MD5; undefined when it does not. */
  private async mismatch(p: string, item: DownloadItem, signal: AbortSignal): Promise<string | undefined> {
    const { size } = await fs.stat(p);
    if (size !== item.size) return `wrote ${size} bytes, the Package lists ${item.size}`;
    const md5 = plainMd5(item.etag);
    if (md5 && (await md5File(p, signal)) !== md5) return "the MD5 of the written file differs from the store's ETag";
    return undefined;
  }

  private async complete(item: DownloadItem, final: string, timesSet = false): Promise<'complete'> {
    if (item.lastModified && !timesSet) await fs.utimes(final, new Date(), new Date(item.lastModified)).catch(() => {});
    await applyOwner(final, this.d.owner);
    // Shares a commit with the others of this turn: lost to a crash, the file is found published on resume.
    this.d.db.soon(() => store.setItemComplete(this.d.db, this.d.downloadId, item.fileId));
    item.state = 'complete';
    item.url = undefined;
    return 'complete';
  }
}
