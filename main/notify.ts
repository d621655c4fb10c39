// Notifications when a transfer completes or fails, with its name and outcome
// ("Dailies sent: 42 files, 18.3 GiB"); none while the window has the focus (the
// user sees it there). A click opens the window on Transfers.
import { bytes } from '../src/format/sizes.js';
import type { Outcome } from './transfersWatch.js';

export interface NotifierLike {
  show(n: { title: string; body: string; onClick(): void }): void;
}

export function notification(o: Outcome): { title: string; body: string } {
  const t = o.transfer;
  const what = `${t.files} file${t.files === 1 ? '' : 's'}, ${bytes(t.size)}`;
  if (o.kind === 'complete') return { title: `${t.name} ${t.direction === 'upload' ? 'sent' : 'received'}`, body: what };
  return { title: `${t.name} failed`, body: t.error ?? 'Open Ferry to see why.' };
}

export function notifyOutcomes(outcomes: Outcome[], o: { notifier: NotifierLike; windowFocused(): boolean; enabled(): boolean; open(): void }): void {
  if (!o.enabled() || o.windowFocused()) return;
  for (const out of outcomes) o.notifier.show({ ...notification(out), onClick: o.open });
}
