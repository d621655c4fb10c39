// What a transfer is called in the list, and the one line that says where it is:
// amount, speed and time left, or why it waits or failed.
import type { Transfer } from '../store/index.js';
import { bytes, speed, timeLeft } from '../format.js';

/** The Package's name, both ways (an upload's folder or file shows beside it, as detail). */
export const nameOf = (t: Transfer) => t.package_name;

export function status(t: Transfer, rate: number | undefined): string {
  const amount = `${bytes(t.progress)} of ${bytes(t.size)}`;
  if (t.state === 'transferring' && t.waiting) {
    const secs = Math.max(0, Math.ceil((Date.parse(t.waiting.next_attempt_at) - Date.now()) / 1000));
    return `${amount} · Waiting for the ${t.waiting.reason.startsWith('service') ? 'server' : 'storage'}, retry in ${secs} s`;
  }
  if (t.state === 'transferring') {
    const parts = [amount];
    if (rate !== undefined && rate > 0) parts.push(speed(rate), timeLeft((t.size - t.progress) / rate));
    return [...parts, 'Transferring'].join(' · ');
  }
  if (t.state === 'error') return `${amount} · Failed: ${t.error ?? 'unknown error'}`;
  const word = { paused: 'Paused', complete: 'Complete', idle: 'Finishing' }[t.state] ?? t.state;
  return `${amount} · ${word}`;
}

