// Wire shapes of the bandwidth limits (docs/agent-api-notes/bandwidth.md): the
// settings GET and PATCH /settings carry, and the limits in force now.
import { Type, type Static } from 'typebox';
import { TIME_PATTERN, WEEKDAYS } from '../../format/rateSchedule.js';

/** Bytes a second, 0 = none (up to 100 GB/s). */
const Rate = Type.Integer({ minimum: 0, maximum: 100_000_000_000 });

export const RateScheduleSchema = Type.Object(
  {
    /** The days it starts on. */
    days: Type.Array(Type.Enum([...WEEKDAYS]), { minItems: 1, maxItems: 7, uniqueItems: true }),
    /** Local time, "HH:MM". A start after the end runs past midnight; start and end may not be equal. */
    start: Type.String({ pattern: TIME_PATTERN }),
    end: Type.String({ pattern: TIME_PATTERN }),
    upload_rate_limit: Rate,
    download_rate_limit: Rate,
  },
  { additionalProperties: false },
);
export type RateScheduleWire = Static<typeof RateScheduleSchema>;

/** The editable settings of the limits (spread into the agent's settings). */
export const rateSettings = {
  /** Bytes a second for all uploads together (the storage gateway's too); 0 = none. */
  upload_rate_limit: Rate,
  /** Bytes a second for all downloads together; 0 = none. */
  download_rate_limit: Rate,
  /** The first that holds at the computer's local time wins over the two limits above. */
  rate_schedules: Type.Array(RateScheduleSchema, { maxItems: 50 }),
  /** No limit holds until this time ("Pause limits for an hour"); null when not paused. */
  rate_limits_paused_until: Type.Union([Type.String({ format: 'date-time' }), Type.Null()]),
};

/** The limits in force now (read only). */
export const RateLimitsNow = Type.Object({
  upload_rate_limit: Rate,
  download_rate_limit: Rate,
  /** When they next change (a schedule begins or ends, the pause ends); null: not within a week. */
  until: Type.Union([Type.String({ format: 'date-time' }), Type.Null()]),
  /** Set while the limits are paused. */
  paused_until: Type.Union([Type.String({ format: 'date-time' }), Type.Null()]),
});
export type RateLimitsNow = Static<typeof RateLimitsNow>;
