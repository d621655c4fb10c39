// The entries of a download held in memory: those under way and a window
// ahead, read from SQLite (download_items by seq) as they are needed, so a
// download of a million files holds a few hundred. The totals of the others
// (counts, bytes done) come from SQL when the job loads, resumes or is
// canceled, and move with each entry that settles in between.
import type { AgentDb } from '../store/db.js';
import * as store from '../store/downloadStore.js';
import { DownloadItem } from './downloadItem.js';
import type { DownloadTotals } from './downloadRecord.js';
import type { DownloadWriter } from './downloadWriter.js';
import { MAX_FILES_PER_DOWNLOAD_URLS } from '../../api/hosted/files.js';

/** Entries ahead of the one handed out whose URLs are asked for early: a `download_urls` request's worth. */
const URLS_AHEAD = MAX_FILES_PER_DOWNLOAD_URLS;
/** Entries ahead whose folders and partial files are made early. */
const OPEN_AHEAD = 32;

/** The most entries any download held at once since the last reset (tests read it). */
let peak = 0;
export const peakHeldEntries = (): number => peak;
export const resetPeakHeldEntries = (): void => void (peak = 0);

export class DownloadWindow {
  /** Pending entries held, in list order. */
  readonly items: DownloadItem[] = [];
  private readonly bySeq = new Map<number, DownloadItem>();
  /** The last seq read from SQL; nothing pending lies after it once `exhausted`. */
  private loadedTo = -1;
  private exhausted = false;
  readonly totals: DownloadTotals & { failed: number } = { files: 0, size: 0, complete: 0, progress: 0, failed: 0 };
  /** Bytes done of the entries not held. */
  private loose = 0;
  /** Entries before these places of the list had their URL asked for, their partial file made (warm()). */
  private urlsTo = 0;
  private opensTo = 0;

  constructor(
    private readonly db: AgentDb,
    private readonly row: store.DownloadRow,
    /** Entries held at most. */
    private readonly size: number,
  ) {
    this.recount();
  }

  held(seq: number): DownloadItem | undefined {
    return this.bySeq.get(seq);
  }

  /** Totals again from SQL (and the entries to read again from the start: a resume, a cancel). */
  recount(): void {
    const c = store.itemCounts(this.db, this.row.id, this.row.chunk_size, [...this.bySeq.keys()]);
    Object.assign(this.totals, { files: c.files, size: c.size, complete: c.complete, failed: c.failed });
    this.loose = c.progress;
    this.loadedTo = -1;
    this.exhausted = false;
  }

  /** Reads pending entries into the window once a quarter of it is free. */
  fill(): void {
    const room = this.size - this.items.length;
    if (this.exhausted || room < Math.max(1, this.size >> 2)) return;
    const rows = store.pendingAfter(this.db, this.row.id, this.loadedTo, room);
    if (rows.length < room) this.exhausted = true;
    if (rows.length === 0) return;
    this.loadedTo = rows[rows.length - 1]!.seq;
    const fresh = rows.filter((r) => !this.bySeq.has(r.seq));
    const ranges = store.rangesOf(this.db, this.row.id, fresh.map((r) => r.file_id));
    for (const r of fresh) {
      const item = new DownloadItem(r, this.row.chunk_size, ranges.get(r.file_id) ?? []);
      this.loose -= item.bytesDone;
      this.bySeq.set(r.seq, item);
      // In list order: after a resume, entries read again from the start go before those held.
      let at = this.items.length;
      while (at > 0 && this.items[at - 1]!.index > item.index) at--;
      this.items.splice(at, 0, item);
    }
    peak = Math.max(peak, this.items.length);
  }

  /** The entry settled (complete, skipped or failed): it leaves memory, its bytes go to the totals. */
  release(item: DownloadItem): void {
    if (this.bySeq.get(item.index) !== item) return;
    this.bySeq.delete(item.index);
    this.items.splice(this.items.indexOf(item), 1);
    if (item.state === 'complete') {
      this.totals.complete++;
      this.loose += item.size;
    } else if (item.state === 'skipped') {
      this.totals.size -= item.size;
    } else {
      this.totals.failed++;
      this.loose += item.bytesDone;
    }
  }

  /** Whether any entry is still to fetch, held or not. */
  get anyPending(): boolean {
    return this.items.length > 0 || !this.exhausted;
  }

  get progress(): number {
    let p = this.loose;
    for (const item of this.items) p += item.progress;
    return p;
  }

  /**
   * Small files wait on the service for their URL and on the disk for their
   * folder and partial file: the entries after the one at `i` get those
   * started now (their URLs gathered into full requests), so that a slot
   * finds them ready.
   */
  warm(i: number, writer: DownloadWriter, signal: AbortSignal): void {
    const items = this.items;
    if (this.urlsTo < items[i]!.index + URLS_AHEAD / 2) {
      for (let j = i + 1, n = 0; j < items.length && n < URLS_AHEAD; j++) {
        if (items[j]!.index < this.urlsTo) continue;
        writer.warm(items[j]!, signal, false);
        this.urlsTo = items[j]!.index + 1;
        n++;
      }
    }
    for (let j = i + 1; j < Math.min(items.length, i + 1 + OPEN_AHEAD); j++) {
      if (items[j]!.index < this.opensTo) continue;
      writer.warm(items[j]!, signal, true);
      this.opensTo = items[j]!.index + 1;
    }
  }

  /** What was warmed with an aborted signal (a pause, a kick) is asked for again. */
  coldAgain(): void {
    this.urlsTo = this.opensTo = 0;
  }

  /**
   * Every pending entry ends in `error`: those held let go of their partial
   * files, then every pending row, held or not, is failed in SQL and `removePart`
   * hears of each (its partial file to remove).
   */
  async cancel(error: string, removePart: (row: store.ItemRow) => Promise<void> | undefined): Promise<void> {
    for (const item of [...this.items]) {
      item.state = 'error';
      item.error = error;
      item.resetRanges();
      await item.opening?.catch(() => undefined);
      await item.closeFile();
      this.release(item);
    }
    for (const r of store.failPending(this.db, this.row.id, error)) await removePart(r);
    this.recount();
  }

  /** Pending entries held and their partial files (pause, stop): closed. */
  async closeFiles(): Promise<void> {
    await Promise.all(this.items.map((i) => i.closeFile()));
  }
}
