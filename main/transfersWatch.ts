// What main knows of the transfers, from the agent's events: enough for the tray's
// overall progress and for a notification when one completes or fails. (Main moves
// no bytes and keeps no state of its own: a snapshot after each connection, then events.)
import type { TransferEvent } from '../src/ipc/contract.js';
import { applyChange, keyOfChange, keyOfTransfer, transferName, withDirection, type TransferSummary } from '../src/ipc/transfers.js';
import type { UploadSummary } from '../src/api/agent/uploads.js';
import type { DownloadSummary } from '../src/api/agent/downloads.js';
import type { Direction } from '../src/api/agent/transfers.js';

export interface Seen {
  key: string;
  direction: Direction;
  name: string;
  state: string;
  progress: number;
  size: number;
  files: number;
  error?: string;
}

export type Outcome = { kind: 'complete' | 'failed'; transfer: Seen };

function seen(t: TransferSummary): Seen {
  return {
    key: keyOfTransfer(t),
    direction: t.direction,
    name: transferName(t),
    state: t.state,
    progress: t.progress,
    size: t.size,
    files: t.file_count,
    ...(t.error ? { error: t.error } : {}),
  };
}

export class TransfersWatch {
  private readonly all = new Map<string, TransferSummary>();

  /** Replaces what is known (after a (re)connection); reports no outcome. */
  reset(uploads: UploadSummary[], downloads: DownloadSummary[]): void {
    this.all.clear();
    for (const u of uploads) this.put(withDirection.upload(u));
    for (const d of downloads) this.put(withDirection.download(d));
  }

  /** Applies a batch; answers the transfers that completed or failed in it. */
  apply(batch: TransferEvent[]): Outcome[] {
    const out: Outcome[] = [];
    for (const e of batch) {
      const key = keyOfChange(e);
      const before = this.all.get(key);
      const next = applyChange(before, e);
      if (!next) {
        this.all.delete(key);
        continue;
      }
      this.put(next);
      if (before?.state === next.state) continue;
      if (next.state === 'complete') out.push({ kind: 'complete', transfer: seen(next) });
      // A transfer the user canceled did not fail: no notification says it did.
      else if (next.state === 'error' && !next.canceled_at) out.push({ kind: 'failed', transfer: seen(next) });
    }
    return out;
  }

  /** The transfers under way (transferring, or an upload finishing) and how far they are together; fraction undefined when none. */
  overall(): { active: number; fraction: number | undefined } {
    let done = 0, size = 0, active = 0;
    for (const t of this.all.values()) {
      if (t.state !== 'transferring' && t.state !== 'idle') continue;
      active++;
      done += t.progress;
      size += t.size;
    }
    return { active, fraction: active === 0 ? undefined : size > 0 ? done / size : 0 };
  }

  private put(t: TransferSummary): void {
    this.all.set(keyOfTransfer(t), t);
  }
}
