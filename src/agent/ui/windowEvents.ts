// The agent's events as a window takes them, for both of its hosts (the desktop
// app's port, agentHost.ts, and the browser's WebSocket, server/ui.ts). Each
// transfer's changes are throttled at the source (engine/feed.ts); here the
// changes of many transfers that come close together go in one message, one per
// `batchMs` at most, so a window with 500 busy transfers gets 10 messages a
// second rather than 2,000. Nothing is dropped or merged: the window applies
// every change in order.
import type { EventBus } from '../events.js';
import type { EventName, EventOf, TransferEvent } from '../../ipc/contract.js';

export type WindowSend = <E extends EventName>(event: E, payload: EventOf<E>) => void;

export interface WindowEventsOptions {
  /** Replay what came after this event id (the window's snapshot cursor). */
  since?: number;
  batchMs?: number;
  now?: () => number;
}

export function followForWindow(bus: EventBus, send: WindowSend, o: WindowEventsOptions = {}): () => void {
  const batchMs = o.batchMs ?? 100;
  const now = o.now ?? Date.now;
  let batch: TransferEvent[] = [];
  let timer: NodeJS.Timeout | undefined;
  let last = -Infinity;
  let closed = false;

  const flush = () => {
    timer = undefined;
    if (closed || batch.length === 0) return;
    last = now();
    const out = batch;
    batch = [];
    send('transfers.changed', out);
  };

  const unsubscribe = bus.subscribe(
    (e) => {
      if (e.type === 'upload' || e.type === 'download') {
        batch.push(e);
        timer ??= setTimeout(flush, Math.max(0, last + batchMs - now()));
        timer.unref?.();
      } else if (e.type === 'session') send('session.changed', e.data);
      else if (e.type === 'automation') send('automations.changed', e.data);
      else send('gateways.changed', e.data);
    },
    { ...(o.since !== undefined ? { since: o.since } : {}) },
  );

  return () => {
    closed = true;
    clearTimeout(timer);
    unsubscribe();
  };
}
