// The agent's change feed: services publish, the SSE route (and the desktop app's
// IPC bridge) subscribe. Each event has an increasing id so a client can resume.
export type AgentEventType = 'upload' | 'download' | 'session' | 'automation' | 'gateway';

export interface AgentEvent {
  id: number;
  type: AgentEventType;
  /** The changed record, as the REST API shows it. */
  data: unknown;
}

export class EventBus {
  private seq = 0;
  private readonly listeners = new Set<(e: AgentEvent) => void>();
  private readonly recent: AgentEvent[] = [];

  publish(type: AgentEventType, data: unknown): void {
    const event = { id: ++this.seq, type, data };
    this.recent.push(event);
    if (this.recent.length > 1000) this.recent.shift();
    for (const l of this.listeners) l(event);
  }

  /** The id of the last event published: a snapshot taken now includes every event up to it. */
  get lastId(): number {
    return this.seq;
  }

  /** Replays the events after `since` still held, then follows new ones. Returns the unsubscribe function. */
  subscribe(listener: (e: AgentEvent) => void, since?: number): () => void {
    if (since !== undefined) for (const e of this.recent) if (e.id > since) listener(e);
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }
}
