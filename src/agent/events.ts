// The agent's change feed: services publish, the SSE route, the window's hosts and
// the automations subscribe. Each event has an increasing id so a client can
// resume from the last it saw, as far as the last 1,000 events go. A transfer's
// file changes are the exception: they go only to the subscribers that follow
// that transfer's files, and are not kept for replay (a client that reconnects
// reads the files again, a page at a time).
import type { EventData, EventType, StreamEvent } from '../api/agent/events.js';

export type AgentEvent = StreamEvent;
export type { EventType as AgentEventType };

export interface Subscription {
  /** Replay the held events after this id first. */
  since?: number;
  /** Whose file changes this subscriber follows (upload and download ids). */
  files?: (id: string) => boolean;
}

interface Listener {
  on(e: AgentEvent): void;
  files?: (id: string) => boolean;
}

const KEEP = 1000;

export class EventBus {
  private seq = 0;
  private readonly listeners = new Set<Listener>();
  private readonly recent: AgentEvent[] = [];

  publish<T extends EventType>(type: T, data: EventData[T]): void {
    const event = { id: ++this.seq, type, data } as AgentEvent;
    this.recent.push(event);
    if (this.recent.length > KEEP) this.recent.shift();
    for (const l of this.listeners) l.on(event);
  }

  /** A transfer's file changes: to its followers only, and not kept. */
  publishFiles<T extends 'upload' | 'download'>(type: T, transferId: string, data: EventData[T]): void {
    let event: AgentEvent | undefined;
    for (const l of this.listeners) {
      if (!l.files?.(transferId)) continue;
      event ??= { id: ++this.seq, type, data } as AgentEvent;
      l.on(event);
    }
  }

  /** Whether anyone follows the files of this transfer (its feed builds file changes only then). */
  followsFiles(transferId: string): boolean {
    for (const l of this.listeners) if (l.files?.(transferId)) return true;
    return false;
  }

  /** The id of the last event published: a snapshot taken now includes every event up to it. */
  get lastId(): number {
    return this.seq;
  }

  /** Replays the events after `since` still held, then follows new ones. Returns the unsubscribe function. */
  subscribe(listener: (e: AgentEvent) => void, { since, files }: Subscription = {}): () => void {
    if (since !== undefined) for (const e of this.recent) if (e.id > since) listener(e);
    const l: Listener = { on: listener, ...(files ? { files } : {}) };
    this.listeners.add(l);
    return () => this.listeners.delete(l);
  }
}
