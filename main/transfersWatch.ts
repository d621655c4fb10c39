// What main knows of the transfers, from the agent's events: enough for the tray's
// overall progress and for a notification when one completes or fails. (Main moves
// no bytes and keeps no state of its own: a snapshot after each connection, then events.)
import type { TransferEvent } from '../src/ipc/contract.js';

export interface Seen {
  key: string;
  direction: 'upload' | 'download';
  name: string;
  state: string;
  progress: number;
  size: number;
  files: number;
  error?: string;
}

export type Outcome = { kind: 'complete' | 'failed'; transfer: Seen };

interface RecordData { upload_id?: string; download_id?: string; name?: string; package_name?: string; state?: string; progress?: number; size?: number; items?: unknown[]; error?: string; canceled_at?: string; deleted?: boolean }

function seen(type: 'upload' | 'download', r: RecordData): Seen {
  return {
    key: `${type}:${r.upload_id ?? r.download_id}`,
    direction: type,
    name: (type === 'upload' ? r.name : r.package_name) ?? '',
    state: r.state ?? '',
    progress: r.progress ?? 0,
    size: r.size ?? 0,
    files: r.items?.length ?? 0,
    ...(r.error ? { error: r.error } : {}),
  };
}

export class TransfersWatch {
  private readonly all = new Map<string, Seen>();

  /** Replaces what is known (after a (re)connection); reports no outcome. */
  reset(uploads: RecordData[], downloads: RecordData[]): void {
    this.all.clear();
    for (const u of uploads) this.put(seen('upload', u));
    for (const d of downloads) this.put(seen('download', d));
  }

  /** Applies a batch; answers the transfers that completed or failed in it. */
  apply(batch: TransferEvent[]): Outcome[] {
    const out: Outcome[] = [];
    for (const e of batch) {
      const r = e.data as RecordData;
      const next = seen(e.type, r);
      const before = this.all.get(next.key);
      if (r.deleted) {
        this.all.delete(next.key);
        continue;
      }
      this.put(next);
      if (before?.state === next.state) continue;
      if (next.state === 'complete') out.push({ kind: 'complete', transfer: next });
      // A transfer the user canceled did not fail: no notification says it did.
      else if (next.state === 'error' && !r.canceled_at) out.push({ kind: 'failed', transfer: next });
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

  private put(t: Seen): void {
    this.all.set(t.key, t);
  }
}
