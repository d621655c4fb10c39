// Realtime events: what the Server-Sent Events streams of a Package and of a
// Team carry (docs/hosted-api-notes/events.md). Each stream message has
// `id:` (the event's id), `event:` (its type) and `data:` (a StreamEvent as JSON).
import { Type, type Static } from 'typebox';

export const STREAM_EVENT_TYPES = [
  'package.created',
  'package.finalized',
  'package.expired',
  'package.archived',
  'package.unarchived',
  'file.registered',
  'file.progress',
  'file.finalized',
] as const;
export type StreamEventType = (typeof STREAM_EVENT_TYPES)[number];

/** Sent (never stored) when a replay cannot be complete: re-read the state, then follow the stream. */
export const RESET_EVENT = 'reset';

export const StreamEvent = Type.Object({
  id: Type.Integer(),
  type: Type.Union([
    Type.Literal('package.created'),
    Type.Literal('package.finalized'),
    Type.Literal('package.expired'),
    Type.Literal('package.archived'),
    Type.Literal('package.unarchived'),
    Type.Literal('file.registered'),
    Type.Literal('file.progress'),
    Type.Literal('file.finalized'),
  ]),
  team_id: Type.String(),
  package_id: Type.String(),
  portal_id: Type.Union([Type.String(), Type.Null()]),
  created_at: Type.String(),
  /** What the type says (see the docs): Package state and totals, or a file's id, name, path and sizes. */
  payload: Type.Record(Type.String(), Type.Unknown()),
});
export type StreamEvent = Static<typeof StreamEvent>;

/** The `reset` message's data. */
export const ResetEvent = Type.Object({
  reason: Type.Union([Type.Literal('replay_unavailable')]),
  /** The id to resume from (the stream's id is set to it too). */
  last_event_id: Type.Integer(),
});
export type ResetEvent = Static<typeof ResetEvent>;

export const EventsQuery = Type.Object({
  /** For clients that cannot set Last-Event-ID (the header wins when both are given). */
  last_event_id: Type.Optional(Type.String({ pattern: '^\\d{1,15}$' })),
  /** Only these types, comma-separated (e.g. `package.finalized`); `reset` is always sent. */
  types: Type.Optional(Type.String({ maxLength: 500 })),
});
export type EventsQuery = Static<typeof EventsQuery>;

/** Payloads by type, for the service that writes them and the clients that read them. */
export interface PackageStatePayload {
  state: string;
  name: string;
  size: number;
  total_files: number;
  /** package.expired: `deleted` (DELETE) or `expired` (its time came). */
  reason?: 'deleted' | 'expired';
}
export interface FilePayload {
  file_id: string;
  kind?: 'file' | 'directory';
  name: string;
  path: string;
  size: number | null;
}
export interface FileProgressPayload {
  file_id: string;
  upload_id: string;
  /** Parts stored so far and their bytes (the embedded store only). */
  parts: number;
  bytes: number;
}
