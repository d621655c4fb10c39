// Wire shapes of GET /events, the agent's Server-Sent Events stream.
import { Type, type Static } from 'typebox';

export const EVENT_TYPES = ['upload', 'download', 'session', 'automation', 'gateway'] as const;
export type EventType = (typeof EVENT_TYPES)[number];

export const EventsQuery = Type.Object({
  /** Replay the held events after this id (the Last-Event-ID header wins over it). */
  since: Type.Optional(Type.Integer({ minimum: 0, maximum: Number.MAX_SAFE_INTEGER })),
  /** Comma-separated event types to receive; default all. */
  types: Type.Optional(Type.String({ maxLength: 100 })),
});
export type EventsQuery = Static<typeof EventsQuery>;

/** One event as it arrives: `id:` and `event:` lines, and this JSON as `data:`. */
export interface StreamEvent<T = unknown> { id: number; type: EventType; data: T }
