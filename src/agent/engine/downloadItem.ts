// One file of a download in memory: its ranges (done, in flight, next to hand
// out), its open partial file and its cached download URL.
import type { FileHandle } from 'node:fs/promises';
import type { ItemRow, ItemState } from '../store/downloadStore.js';

export class DownloadItem {
  readonly fileId: string;
  /** Its place in the download's list (its row's seq): the key of its changes and pages. */
  readonly index: number;
  readonly relPath: string;
  readonly segments: string[] | null;
  readonly size: number;
  readonly lastModified: string | null;
  localName: string | null;
  etag: string | null;
  state: ItemState;
  error: string | null;
  /** Number of ranges; an empty file has one empty range, so it too passes through the engine. */
  readonly count: number;
  readonly done = new Set<number>();
  /** Range index -> bytes written so far by the request in flight. */
  readonly inFlight = new Map<number, number>();
  /** Lowest range index not yet handed out in this run. */
  next = 0;
  bytesDone = 0;
  /** Bumped when the ranges are forgotten, so a range fetched before that is not recorded after it. */
  epoch = 0;
  finalizing = false;
  /** The folder the file goes to, once made. */
  dir: string | undefined;
  fh: FileHandle | undefined;
  /** `fh` was made empty in this run ('wx' or 'w'): every byte in it is one a range of this run wrote, so its size is known. */
  fhFresh = false;
  opening: Promise<FileHandle> | undefined;
  url: { value: string; at: number } | undefined;
  /** MD5 (hex) of the bytes of a one-range file as they arrived, for this epoch's finalize. */
  receivedMd5: string | undefined;
  urlPending: Promise<string> | undefined;

  constructor(
    row: ItemRow,
    readonly rangeSize: number,
    doneRanges: number[],
  ) {
    this.fileId = row.file_id;
    this.index = row.seq;
    this.relPath = row.rel_path;
    this.segments = row.segments ? (JSON.parse(row.segments) as string[]) : null;
    this.size = row.size;
    this.lastModified = row.last_modified;
    this.localName = row.local_name;
    this.etag = row.etag;
    this.state = row.state;
    this.error = row.error;
    this.count = Math.max(1, Math.ceil(row.size / rangeSize));
    for (const i of doneRanges) this.markDone(i);
  }

  /** Inclusive byte offsets of range i. */
  bounds(i: number): [number, number] {
    const start = i * this.rangeSize;
    return [start, Math.min(this.size, start + this.rangeSize) - 1];
  }

  length(i: number): number {
    const [s, e] = this.bounds(i);
    return e - s + 1;
  }

  markDone(i: number): void {
    if (i < 0 || i >= this.count || this.done.has(i)) return;
    this.done.add(i);
    this.bytesDone += this.length(i);
  }

  /** Forgets every finished range: the partial file is gone or failed its check. */
  resetRanges(): void {
    this.done.clear();
    this.bytesDone = 0;
    this.next = 0;
    this.etag = null;
    this.receivedMd5 = undefined;
    this.epoch++;
  }

  get allDone(): boolean {
    return this.done.size === this.count;
  }

  /** The next range to hand out, skipping finished and running ones; undefined when none. */
  take(): number | undefined {
    while (this.next < this.count && (this.done.has(this.next) || this.inFlight.has(this.next))) this.next++;
    return this.next < this.count ? this.next++ : undefined;
  }

  get progress(): number {
    if (this.state === 'complete') return this.size;
    let p = this.bytesDone;
    for (const n of this.inFlight.values()) p += n;
    return Math.min(p, this.size);
  }

  async closeFile(): Promise<void> {
    const fh = this.fh;
    this.fh = undefined;
    await fh?.close().catch(() => {});
  }
}
