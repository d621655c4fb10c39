// What the Transfers list knows of a transfer beyond its status line: the detail
// under its name, when it ran and how fast, whether a search finds it, how the
// list orders it, and the totals of the status line. Pure functions of records.
import { speed } from '../format.js';
import { transferName, type TransferSummary as Transfer } from '../../src/ipc/transfers.js';
import { isCanceled } from './transferStatus.js';

export { isCanceled };

/** A transfer's place in the agent's queue; undefined while it may run. */
export const queuePosition = (t: Transfer): number | undefined => (t.state === 'transferring' ? t.queue_position : undefined);

export type Shown = 'transferring' | 'queued' | 'paused' | 'complete' | 'error' | 'canceled' | 'idle';
export const shownState = (t: Transfer): Shown => (queuePosition(t) !== undefined ? 'queued' : isCanceled(t) ? 'canceled' : t.state);
export const STATE_WORDS: Record<Shown, string> = {
  transferring: 'Transferring', queued: 'Queued', paused: 'Paused', complete: 'Complete', error: 'Failed', canceled: 'Canceled', idle: 'Finishing',
};
/** Done with: complete, or canceled. "Clear completed" and Remove take these; the others end through Cancel. */
export const isFinished = (t: Transfer) => t.state === 'complete' || isCanceled(t);
/** What Resume can start again: paused, or failed (a canceled one stays canceled). */
export const isResumable = (t: Transfer) => t.state === 'paused' || (t.state === 'error' && !isCanceled(t));

/** "1 file", "50,000 files": grouped as the details' "Files 1–200 of 50,000" are. */
const plural = (n: number, one: string) => `${n.toLocaleString('en')} ${one}${n === 1 ? '' : 's'}`;

/** The muted line under the Package name: the folder or file it was made of, how many files, where a download goes. */
export function detailOf(t: Transfer): string {
  const parts: string[] = [];
  // Under way, a dataset's files count as they go: "2,000 of 150,000 files".
  const files = t.state !== 'complete' && t.file_count > 1 ? `${t.files_done.toLocaleString('en')} of ${plural(t.file_count, 'file')}` : plural(t.file_count, 'file');
  if (t.direction === 'upload') {
    if (t.name !== t.package_name) parts.push(t.name);
    parts.push(files);
    const to = t.recipients ?? [];
    if (to.length > 0) parts.push(`to ${to[0]}${to.length > 1 ? ` and ${to.length - 1} more` : ''}`);
  } else {
    parts.push(files, `into ${t.dst_folder}`);
  }
  return parts.join(' · ');
}

const clock = (d: Date) => d.toLocaleTimeString(undefined, { hour: '2-digit', minute: '2-digit' });
const dayOf = (d: Date) => new Date(d.getFullYear(), d.getMonth(), d.getDate()).getTime();

/** "Today 14:02", "Yesterday 09:10", "3 Nov 16:45": a time as a person reads it from where they are. */
export function when(iso: string, now = new Date()): string {
  const d = new Date(iso);
  const days = Math.round((dayOf(now) - dayOf(d)) / 86_400_000);
  const day = days === 0 ? 'Today' : days === 1 ? 'Yesterday' : d.toLocaleDateString(undefined, { day: 'numeric', month: 'short', ...(d.getFullYear() === now.getFullYear() ? {} : { year: 'numeric' }) });
  return `${day} ${clock(d)}`;
}

/** "42 s", "18 min", "1 h 5 min". */
export function duration(ms: number): string {
  const s = Math.max(0, Math.round(ms / 1000));
  if (s < 60) return `${s} s`;
  const min = Math.round(s / 60);
  if (min < 60) return `${min} min`;
  return `${Math.floor(min / 60)} h ${min % 60} min`;
}

/**
 * When it started, and once complete when it finished, how long it took and how
 * fast on average. The records carry no finish time of their own: a complete
 * record's `updated_at` is the moment it became complete (nothing changes it after).
 * Nor do they say how long it moved: the average (its size over that span) holds
 * only for a transfer that ran in one go, so one the window saw stop (`stopped`:
 * paused, failed, or unfinished while the agent was out of sight) shows none.
 */
export function timesOf(t: Transfer, stopped = false, now = new Date()): string {
  const start = when(t.created_at, now);
  if (t.state !== 'complete') return start;
  const took = Date.parse(t.updated_at) - Date.parse(t.created_at);
  const end = new Date(t.updated_at);
  const sameDay = dayOf(end) === dayOf(new Date(t.created_at));
  const parts = [`${start} → ${sameDay ? clock(end) : when(t.updated_at, now)}`, duration(took)];
  if (took >= 1000 && t.size > 0 && !stopped) parts.push(`${speed((t.size * 1000) / took)} average`);
  return parts.join(' · ');
}

/** Whether a search finds the transfer: its Package name, the folder or file it was made of, its recipients, where it goes. (The window holds no file lists: a transfer may have a million.) */
export function found(t: Transfer, query: string): boolean {
  const q = query.trim().toLowerCase();
  if (!q) return true;
  const has = (s: string | undefined) => s !== undefined && s.toLowerCase().includes(q);
  if (has(transferName(t))) return true;
  if (t.direction === 'upload') return has(t.name) || (t.recipients ?? []).some(has);
  return has(t.dst_folder);
}

export type Order = 'newest' | 'oldest' | 'name' | 'size' | 'state';
export const ORDERS: { id: Order; label: string }[] = [
  { id: 'newest', label: 'Newest first' },
  { id: 'oldest', label: 'Oldest first' },
  { id: 'name', label: 'Name' },
  { id: 'size', label: 'Size, largest first' },
  { id: 'state', label: 'State' },
];
/** Running first, then waiting, then what needs a look, then done. */
const STATE_RANK: Record<Shown, number> = { transferring: 0, idle: 1, queued: 2, paused: 3, error: 4, complete: 5, canceled: 6 };
const byName = new Intl.Collator(undefined, { numeric: true, sensitivity: 'base' });
// ISO-8601 times order as plain strings: no locale comparison in a sort of thousands.
const newestFirst = (a: Transfer, b: Transfer) => (a.created_at < b.created_at ? 1 : a.created_at > b.created_at ? -1 : 0);

export function compare(order: Order): (a: Transfer, b: Transfer) => number {
  switch (order) {
    case 'newest': return newestFirst;
    case 'oldest': return (a, b) => -newestFirst(a, b);
    // "batch-2" before "batch-10": numbers in names compare as numbers.
    case 'name': return (a, b) => byName.compare(transferName(a), transferName(b)) || newestFirst(a, b);
    case 'size': return (a, b) => b.size - a.size || newestFirst(a, b);
    case 'state': return (a, b) => STATE_RANK[shownState(a)] - STATE_RANK[shownState(b)] || newestFirst(a, b);
  }
}

export interface Totals {
  /** Bytes a second, summed over the running transfers' meters. */
  up: number;
  down: number;
  active: number;
  queued: number;
  paused: number;
  failed: number;
  /** Of the transfers not finished (complete or canceled). */
  done: number;
  size: number;
}

export function totals(transfers: Transfer[], rateOf: (t: Transfer) => number | undefined): Totals {
  const s: Totals = { up: 0, down: 0, active: 0, queued: 0, paused: 0, failed: 0, done: 0, size: 0 };
  for (const t of transfers) {
    const shown = shownState(t);
    if (shown === 'transferring' || shown === 'idle') {
      s.active++;
      const r = rateOf(t) ?? 0;
      if (r > 0) s[t.direction === 'upload' ? 'up' : 'down'] += r;
    } else if (shown === 'queued') s.queued++;
    else if (shown === 'paused') s.paused++;
    else if (shown === 'error') s.failed++;
    if (!isFinished(t)) {
      s.done += t.progress;
      s.size += t.size;
    }
  }
  return s;
}
