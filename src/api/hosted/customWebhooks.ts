// Custom webhooks: the webhook object, its create/update body, the event body
// a receiver gets, and the record of an event's delivery attempts (an addition).
import { Type, type Static } from 'typebox';
import { TeamParams } from './tags.js';

export { TeamParams };

const NoNul = '^[^\\u0000]*$';

export const WEBHOOK_EVENT_TYPES = ['package.created', 'package.finalized'] as const;
export type WebhookEventType = (typeof WEBHOOK_EVENT_TYPES)[number];
export const WebhookEventTypeSchema = Type.Union([Type.Literal('package.created'), Type.Literal('package.finalized')]);

/** Keys of the event body itself: body_extras may not use them. */
export const RESERVED_BODY_KEYS = ['event_id', 'event_time', 'event_type', 'custom_webhook_id', 'object'] as const;

/** An HTTP header name (RFC 9110 token); the service checks names (a schema's key pattern would only drop bad ones). */
export const HEADER_NAME = /^[!#$%&'*+.^_`|~0-9A-Za-z-]{1,100}$/;

/** Header name to value; values are one line. */
const Headers = Type.Record(Type.String(), Type.String({ maxLength: 4096, pattern: '^[^\\u0000\\r\\n]*$' }), { maxProperties: 50 });
/** Key to string value, merged into the top level of every event body (keys checked by the service). */
const BodyExtras = Type.Record(Type.String(), Type.String({ maxLength: 4096, pattern: NoNul }), { maxProperties: 50 });

export const CustomWebhook = Type.Object({
  id: Type.String(),
  name: Type.String(),
  active: Type.Boolean(),
  events: Type.Array(WebhookEventTypeSchema),
  method: Type.Union([Type.Literal('POST'), Type.Literal('PUT')]),
  url: Type.String(),
  headers: Type.Record(Type.String(), Type.String()),
  body_extras: Type.Record(Type.String(), Type.String()),
  /** How many Portals have it attached. */
  connections: Type.Integer(),
  created_at: Type.String(),
  updated_at: Type.String(),
});
export type CustomWebhook = Static<typeof CustomWebhook>;

/** Create, and the complete object of an update: omitted optional fields keep their value on update. */
export const CustomWebhookBody = Type.Object({
  active: Type.Boolean(),
  events: Type.Array(WebhookEventTypeSchema, { minItems: 1, maxItems: WEBHOOK_EVENT_TYPES.length, uniqueItems: true }),
  method: Type.Union([Type.Literal('POST'), Type.Literal('PUT')]),
  /** http:// or https://, without user:password (send credentials in headers). */
  url: Type.String({ minLength: 1, maxLength: 2048, pattern: '^[Hh][Tt][Tt][Pp][Ss]?://[^\\s]+$' }),
  name: Type.Optional(Type.String({ maxLength: 255, pattern: NoNul })),
  headers: Type.Optional(Headers),
  body_extras: Type.Optional(BodyExtras),
});
export type CustomWebhookBody = Static<typeof CustomWebhookBody>;

export const CustomWebhookParams = Type.Object({ custom_webhook_id: Type.String({ maxLength: 100 }) });

/** The Package as an event carries it. */
export const WebhookEventObject = Type.Object({
  id: Type.String(),
  name: Type.String(),
  sender: Type.String(),
  state: Type.String(),
  /** 0 in package.created. */
  size: Type.Integer(),
  /** 0 in package.created. */
  total_files: Type.Integer(),
  created_at: Type.String(),
  updated_at: Type.String(),
  /** Only for Packages that came through a Portal. */
  portal_id: Type.Optional(Type.String()),
});
export type WebhookEventObject = Static<typeof WebhookEventObject>;

/** The JSON body of every delivery; the webhook's body_extras are further top-level string keys. */
export const WebhookEventBody = Type.Object(
  {
    event_id: Type.String(),
    event_time: Type.String(),
    event_type: WebhookEventTypeSchema,
    custom_webhook_id: Type.String(),
    object: WebhookEventObject,
  },
  { additionalProperties: Type.String() },
);
export type WebhookEventBody = Static<typeof WebhookEventBody> & Record<string, unknown>;

export const WebhookAttempt = Type.Object({
  attempt: Type.Integer(),
  /** The receiver's HTTP status; null when none came (then error says why). */
  status: Type.Union([Type.Integer(), Type.Null()]),
  error: Type.Union([Type.String(), Type.Null()]),
  started_at: Type.String(),
  /** null while in flight, or when the service stopped during the attempt. */
  finished_at: Type.Union([Type.String(), Type.Null()]),
});
export type WebhookAttempt = Static<typeof WebhookAttempt>;

/** GET /v1/custom_webhooks/{id}/events (an addition): what became of each event. */
export const WebhookEventRecord = Type.Object({
  event_id: Type.String(),
  event_type: WebhookEventTypeSchema,
  package_id: Type.String(),
  /** pending: attempts left; delivered: a 2xx came; failed: given up after the last attempt. */
  state: Type.Union([Type.Literal('pending'), Type.Literal('delivered'), Type.Literal('failed')]),
  attempts: Type.Array(WebhookAttempt),
  /** The body sent on every attempt. */
  body: Type.Record(Type.String(), Type.Unknown()),
  created_at: Type.String(),
  updated_at: Type.String(),
});
export type WebhookEventRecord = Static<typeof WebhookEventRecord>;

export const WebhookEventsQuery = Type.Object({
  limit: Type.Integer({ minimum: 1, maximum: 100, default: 50 }),
});
export type WebhookEventsQuery = Static<typeof WebhookEventsQuery>;

export const WebhookEventsPage = Type.Object({ records: Type.Array(WebhookEventRecord) });
export type WebhookEventsPage = Static<typeof WebhookEventsPage>;

/** A webhook as a Portal lists it: the spec's items carry only the id. */
export const WebhookRef = Type.Object({ id: Type.String({ minLength: 1, maxLength: 100 }) });
export type WebhookRef = Static<typeof WebhookRef>;
