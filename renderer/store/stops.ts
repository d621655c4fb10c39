// Which transfers the window has seen stop before they were complete: paused,
// failed, or unfinished while the window lost the agent (the agent may have
// restarted). Their records say when they were made and when they completed,
// not how long they moved, so their average speed over that span would be wrong
// (docs/desktop.md, "The Transfers screen"): the row shows none for them.
import type { TransferSummary } from '../../src/ipc/transfers.js';

/** By `upload:<id>` / `download:<id>`. */
export type Stops = Readonly<Record<string, true>>;

const stopped = (t: TransferSummary) => t.state === 'paused' || t.state === 'error';

/** The marks after these records changed: each one now paused or failed is marked. */
export function stopsAfterChanges(stops: Stops, changed: Iterable<[string, TransferSummary]>): Stops {
  let out: Record<string, true> | undefined;
  for (const [key, t] of changed) {
    if (!stopped(t) || stops[key]) continue;
    out ??= { ...stops };
    out[key] = true;
  }
  return out ?? stops;
}

/**
 * The marks after a snapshot: the window had lost the agent (the snapshot follows
 * each reconnection), so each transfer unfinished before it is marked, and so is
 * each one the snapshot shows paused or failed. Marks of transfers gone are dropped.
 */
export function stopsAfterSnapshot(stops: Stops, before: Record<string, TransferSummary>, after: Record<string, TransferSummary>): Stops {
  const out: Record<string, true> = {};
  for (const [key, t] of Object.entries(after)) {
    const was = before[key];
    if (stops[key] || stopped(t) || (was && was.state !== 'complete')) out[key] = true;
  }
  return out;
}
