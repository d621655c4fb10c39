// What a transfer is called in the list, and the one line that says where it is:
// amount, speed and time left, or why it waits (its turn, the server) or failed.
import type { TransferSummary as Transfer } from '../../src/ipc/transfers.js';
import { bytes, speed, timeLeft } from '../format.js';

/** 1st, 2nd, 3rd, 4th... 11th, 12th, 13th... 21st. */
function ordinal(n: number): string {
  const teen = n % 100 >= 11 && n % 100 <= 13;
  const suffix = teen ? 'th' : ({ 1: 'st', 2: 'nd', 3: 'rd' } as Record<number, string>)[n % 10] ?? 'th';
  return `${n}${suffix}`;
}

/** Stopped for good by the user (the agent keeps it as state error, error "Canceled"). */
export const isCanceled = (t: Transfer) => t.canceled_at !== undefined;

export function status(t: Transfer, rate: number | undefined): string {
  const amount = `${bytes(t.progress)} of ${bytes(t.size)}`;
  if (t.state === 'transferring' && t.queue_position !== undefined) return `${amount} · Queued · ${ordinal(t.queue_position)} in line`;
  if (t.state === 'transferring' && t.waiting) {
    const secs = Math.max(0, Math.ceil((Date.parse(t.waiting.next_attempt_at) - Date.now()) / 1000));
    return `${amount} · Waiting for the ${t.waiting.reason.startsWith('service') ? 'server' : 'storage'}, retry in ${secs} s`;
  }
  if (t.state === 'transferring') {
    const parts = [amount];
    if (rate !== undefined && rate > 0) parts.push(speed(rate), timeLeft((t.size - t.progress) / rate));
    return [...parts, 'Transferring'].join(' · ');
  }
  if (isCanceled(t)) return `${amount} · Canceled`;
  if (t.state === 'error') return `${amount} · Failed: ${t.error ?? 'unknown error'}`;
  const word = { paused: 'Paused', complete: 'Complete', idle: 'Finishing' }[t.state] ?? t.state;
  return `${amount} · ${word}`;
}

