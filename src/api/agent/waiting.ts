// The `waiting` field of upload and download records: a transfer that is still
// `transferring` but cannot go on right now, because the service or the store
// cannot be reached or keeps failing, says so, and when it tries next.
import { Type, type Static } from 'typebox';

export const Waiting = Type.Object({
  /** `*_unreachable`: no connection, or 502/503/504; `*_error`: other 5xx, 429, 408. */
  reason: Type.Union([Type.Literal('service_unreachable'), Type.Literal('service_error'), Type.Literal('store_unreachable'), Type.Literal('store_error')]),
  /** When the transfer last made progress, or first failed since then (ISO 8601). */
  since: Type.String(),
  /** When the next try is due (ISO 8601): the next probe during an outage, else this request's retry. */
  next_attempt_at: Type.String(),
  last_error: Type.String(),
});
export type Waiting = Static<typeof Waiting>;
export type WaitReason = Waiting['reason'];
