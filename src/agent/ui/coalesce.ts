// Progress coalesced at the source: however many parts are in flight, a window
// gets at most 4 progress updates a second per transfer, sent together in one
// batch per 100 ms at most. A change that matters (a new state, a wait that
// begins or ends, a removal) is never held back past the next batch.
import type { TransferEvent } from '../../ipc/contract.js';

export interface CoalesceOptions {
  /** Least time between two batches. */
  batchMs?: number;
  /** Least time between two progress-only updates of one transfer. */
  progressMs?: number;
  now?: () => number;
}

interface Slot {
  /** The latest event not sent yet. */
  pending?: TransferEvent;
  /** When this transfer was last sent. */
  sentAt: number;
  /** What decides whether an event is more than progress. */
  signature: string;
  urgent: boolean;
}

const keyOf = (e: TransferEvent) => {
  const d = e.data as { upload_id?: string; download_id?: string };
  return `${e.type} ${d.upload_id ?? d.download_id ?? ''}`;
};

const signatureOf = (e: TransferEvent) => {
  const d = e.data as { state?: string; deleted?: boolean; error?: string; waiting?: { reason?: string } };
  return `${d.state}|${d.deleted === true}|${d.error ?? ''}|${d.waiting?.reason ?? ''}`;
};

export class TransferCoalescer {
  private readonly slots = new Map<string, Slot>();
  private timer: NodeJS.Timeout | undefined;
  private lastBatch = -Infinity;
  private readonly batchMs: number;
  private readonly progressMs: number;
  private readonly now: () => number;
  private closed = false;

  constructor(
    private readonly send: (batch: TransferEvent[]) => void,
    o: CoalesceOptions = {},
  ) {
    this.batchMs = o.batchMs ?? 100;
    this.progressMs = o.progressMs ?? 250;
    this.now = o.now ?? Date.now;
  }

  push(e: TransferEvent): void {
    if (this.closed) return;
    const key = keyOf(e);
    const signature = signatureOf(e);
    const slot = this.slots.get(key) ?? { sentAt: -Infinity, signature: '', urgent: false };
    slot.urgent ||= signature !== slot.signature;
    slot.signature = signature;
    slot.pending = e;
    this.slots.set(key, slot);
    // A removed transfer is sent once more and then forgotten.
    this.schedule();
  }

  /** Sends what is due now: urgent changes, and progress of transfers not sent for progressMs. */
  flush(): void {
    this.timer = undefined;
    if (this.closed) return;
    const now = this.now();
    const batch: TransferEvent[] = [];
    let waiting = false;
    for (const [key, slot] of this.slots) {
      if (!slot.pending) continue;
      if (slot.urgent || now - slot.sentAt >= this.progressMs) {
        batch.push(slot.pending);
        if ((slot.pending.data as { deleted?: boolean }).deleted) this.slots.delete(key);
        slot.pending = undefined;
        slot.urgent = false;
        slot.sentAt = now;
      } else waiting = true;
    }
    if (batch.length > 0) {
      this.lastBatch = now;
      this.send(batch.sort((a, b) => a.id - b.id));
    }
    if (waiting) this.schedule();
  }

  close(): void {
    this.closed = true;
    clearTimeout(this.timer);
    this.slots.clear();
  }

  private schedule(): void {
    if (this.timer || this.closed) return;
    const wait = Math.max(0, this.lastBatch + this.batchMs - this.now());
    this.timer = setTimeout(() => this.flush(), wait);
    this.timer.unref?.();
  }
}
