// The files of an upload run still to prepare, read from SQLite a window at a
// time in index order: a run of a million files holds a window of rows (and the
// files in flight), never the whole list. A file that starts over comes back
// first. Files finished in this run are behind the cursor, so a done flag still
// waiting for its commit (db.soon) never brings one back.
import type { AgentDb } from '../store/db.js';
import { filesLeftAfter, partsOfFilesLeft, type PartRow } from '../store/uploadStore.js';
import { FileTransfer } from './uploadFile.js';

export class PendingFiles {
  private again: FileTransfer[] = [];
  private read: FileTransfer[] = [];
  private head = 0;
  private after = -1;
  private exhausted = false;

  constructor(
    private readonly db: AgentDb,
    private readonly uploadId: string,
    /** Rows read at once (tuning.readAhead: 256, a few times the preparation window, so reads are rare and small). */
    private readonly readAhead: number,
  ) {}

  /** Whether no file is left to prepare (reads the next window to know). */
  get empty(): boolean {
    return this.peek() === undefined;
  }

  /** Files held in memory, waiting: at most a window (and those that start over). */
  get held(): number {
    return this.again.length + this.read.length - this.head;
  }

  next(): FileTransfer | undefined {
    const f = this.peek();
    if (!f) return undefined;
    if (this.again.length) this.again.shift();
    else this.head++;
    return f;
  }

  /** The file starts over: it is prepared again before any other. */
  putBack(f: FileTransfer): void {
    this.again.unshift(f);
  }

  private peek(): FileTransfer | undefined {
    if (this.again.length) return this.again[0];
    if (this.head === this.read.length && !this.exhausted) this.fill();
    return this.read[this.head];
  }

  private fill(): void {
    const rows = filesLeftAfter(this.db, this.uploadId, this.after, this.readAhead);
    this.exhausted = rows.length < this.readAhead;
    this.read = [];
    this.head = 0;
    if (!rows.length) return;
    this.after = rows[rows.length - 1]!.idx;
    const parts = new Map<number, PartRow[]>();
    for (const p of partsOfFilesLeft(this.db, this.uploadId, rows[0]!.idx, this.after)) {
      const list = parts.get(p.file_idx) ?? [];
      list.push({ part_number: p.part_number, etag: p.etag, size: p.size });
      parts.set(p.file_idx, list);
    }
    this.read = rows.map((r) => new FileTransfer(r, parts.get(r.idx)));
  }
}
