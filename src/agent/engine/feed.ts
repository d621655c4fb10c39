// What the event feed hears of a transfer (upload or download), and the one
// throttle between the engine and every client. The engine says that something
// changed (a state at once; progress, and which file); the feed reads the
// transfer's summary and sends what changed: the whole summary when anything
// beyond its moving totals differs from what it last sent (state, error, wait,
// place in line), else the totals alone, at most every `everyMs` per transfer
// (the last change always gets out). Reading a summary of a transfer of a million
// files costs more than one of a single file, so progress also waits `costFactor`
// times as long as the last read took: the feed never takes more than about
// 1/costFactor of the agent's time. File changes are read and sent only while
// someone follows that transfer's files.
import type { Totals } from '../../api/agent/transfers.js';

export type FeedChange<S, F> =
  | { change: 'record'; summary: S }
  | { change: 'progress'; totals: Totals }
  | { change: 'files'; files: F[] }
  | { change: 'removed' };

export interface FeedSource<S, F> {
  summary(id: string): S | undefined;
  /** Whether its moving totals go alone when nothing else changed (transfers); false: every change sends the whole summary. */
  totals: boolean;
  /** The files at these indexes; `all`: every file not complete (its transfer's state changed), a page at a time. */
  files?(id: string, indexes: number[] | 'all'): Iterable<F[]>;
  followsFiles?(id: string): boolean;
  send(id: string, change: FeedChange<S, F>): void;
}

interface Slot {
  /** performance.now() of the last send. */
  last: number;
  /** How long the last summary read took, ms. */
  cost: number;
  /** The summary last sent, without its totals, as JSON: what tells a new record from progress. */
  rest: string;
  totals: string;
  timer?: NodeJS.Timeout;
  /** Files changed since the last send (while followed). */
  files?: Set<number>;
  /** The state changed while followed: every file not complete is sent too. */
  allOpen?: boolean;
}

const TOTALS = ['progress', 'size', 'file_count', 'files_done', 'updated_at'] as const;

function split(s: object, withTotals: boolean): { rest: string; totals?: Totals } {
  if (!withTotals) return { rest: JSON.stringify(s) };
  const t = s as Totals;
  const rest: Record<string, unknown> = { ...s };
  for (const k of TOTALS) delete rest[k];
  return { rest: JSON.stringify(rest), totals: { progress: t.progress, size: t.size, file_count: t.file_count, files_done: t.files_done, updated_at: t.updated_at } };
}

export class TransferFeed<S extends object, F = never> {
  private readonly slots = new Map<string, Slot>();
  private closed = false;

  constructor(
    private readonly source: FeedSource<S, F>,
    private readonly everyMs = 250,
    private readonly costFactor = 10,
    private readonly now: () => number = () => performance.now(),
  ) {}

  /** Something of the transfer changed; `file`: the index of a file whose state or progress did. */
  changed(id: string, kind: 'state' | 'progress', file?: number): void {
    if (this.closed) return;
    const slot = this.slotOf(id);
    // Called for every part the engine stores: the followers are asked only when there is a file change to keep.
    if ((kind === 'state' || file !== undefined) && this.source.followsFiles?.(id)) {
      if (kind === 'state') slot.allOpen = true;
      if (file !== undefined) (slot.files ??= new Set()).add(file);
    }
    const gap = Math.max(this.everyMs, slot.cost * this.costFactor);
    const since = this.now() - slot.last;
    if (kind === 'state' || since >= gap) return this.fire(id, slot);
    if (slot.timer) return;
    slot.timer = setTimeout(() => this.fire(id, slot), gap - since);
    slot.timer.unref();
  }

  /** It is gone: said once, and forgotten. */
  removed(id: string): void {
    const slot = this.slots.get(id);
    clearTimeout(slot?.timer);
    this.slots.delete(id);
    if (!this.closed) this.source.send(id, { change: 'removed' });
  }

  close(): void {
    this.closed = true;
    for (const s of this.slots.values()) clearTimeout(s.timer);
    this.slots.clear();
  }

  private slotOf(id: string): Slot {
    let slot = this.slots.get(id);
    if (!slot) this.slots.set(id, (slot = { last: -Infinity, cost: 0, rest: '', totals: '' }));
    return slot;
  }

  private sendFiles(id: string, files: F[]): void {
    if (files.length > 0) this.source.send(id, { change: 'files', files });
  }

  private fire(id: string, slot: Slot): void {
    clearTimeout(slot.timer);
    slot.timer = undefined;
    if (this.closed) return;
    const start = this.now();
    const summary = this.source.summary(id);
    if (!summary) return void this.slots.delete(id);
    const { rest, totals } = split(summary, this.source.totals);
    const totalsJson = JSON.stringify(totals ?? null);
    if (rest !== slot.rest) this.source.send(id, { change: 'record', summary });
    else if (totals && totalsJson !== slot.totals) this.source.send(id, { change: 'progress', totals });
    slot.rest = rest;
    slot.totals = totalsJson;
    const { files, allOpen } = slot;
    slot.files = undefined;
    slot.allOpen = false;
    if ((files || allOpen) && this.source.files && this.source.followsFiles?.(id)) {
      if (files) for (const page of this.source.files(id, [...files])) this.sendFiles(id, page);
      if (allOpen) for (const page of this.source.files(id, 'all')) this.sendFiles(id, page);
    }
    const end = this.now();
    slot.last = end;
    slot.cost = end - start;
  }
}
