// Wire shapes of GET /events, the agent's Server-Sent Events stream.
import { Type, type Static } from 'typebox';
import type { SessionUser } from './session.js';
import type { AutomationRecord } from './automations.js';
import type { GatewayRecord } from './storageGateway.js';
import type { DownloadChange, UploadChange } from './transfers.js';

export const EVENT_TYPES = ['upload', 'download', 'session', 'automation', 'gateway'] as const;
export type EventType = (typeof EVENT_TYPES)[number];

export const EventsQuery = Type.Object({
  /** Replay the held events after this id (the Last-Event-ID header wins over it). */
  since: Type.Optional(Type.Integer({ minimum: 0, maximum: Number.MAX_SAFE_INTEGER })),
  /** Comma-separated event types to receive; default all. */
  types: Type.Optional(Type.String({ maxLength: 100 })),
  /** Comma-separated upload and download ids whose file changes to receive too, or `*` for every transfer's. */
  files: Type.Optional(Type.String({ maxLength: 10_000, pattern: '^(\\*|[A-Za-z0-9_-]{1,100}(,[A-Za-z0-9_-]{1,100})*)$' })),
});
export type EventsQuery = Static<typeof EventsQuery>;

/** What each event type carries as `data`. */
export interface EventData {
  upload: UploadChange;
  download: DownloadChange;
  session: { user: Static<typeof SessionUser> | null };
  automation: Static<typeof AutomationRecord> | { automation_id: string; deleted: true };
  gateway: Static<typeof GatewayRecord> | { id: string; deleted: true };
}

/** One event as it arrives: `id:` and `event:` lines, and `data` as JSON in `data:`. */
export type StreamEvent = { [T in EventType]: { id: number; type: T; data: EventData[T] } }[EventType];
