// Wire shapes of the agent's settings: GET and PATCH /settings, and the app's
// Settings screen. They are kept in the agent's config.yml; a setting given by
// a flag or the environment wins over the file, so the app shows it locked.
import { Type, type Static } from 'typebox';
import { SessionAnswer } from './session.js';
import { RateLimitsNow, rateSettings } from './rateLimits.js';

export const MIN_CHUNK_SIZE = 5 * 1024 * 1024;
export const MAX_CHUNK_SIZE = 5 * 1024 ** 3;

const editable = {
  /** The hosted service the agent sends through. Changing it ends the session. */
  hosted_url: Type.String({ minLength: 1, maxLength: 2048, pattern: '^https?://' }),
  /** Use a hosted service run on this machine ("Try it on this computer"); hosted_url is then its address. */
  this_computer: Type.Boolean(),
  /** Parts in flight, uploads and downloads together. */
  concurrency: Type.Integer({ minimum: 1, maximum: 64 }),
  /** Bytes per part of a new upload. */
  chunk_size: Type.Integer({ minimum: MIN_CHUNK_SIZE, maximum: MAX_CHUNK_SIZE }),
  /** Send a Package once all its files are up. */
  auto_finalize: Type.Boolean(),
  /** Whether the REST API listens at all (the desktop app talks to the agent over IPC). */
  local_api: Type.Boolean(),
  /** Where the REST API listens, HOST:PORT; beyond loopback it needs a key. */
  listen: Type.String({ minLength: 3, maxLength: 300, pattern: '^(\\[[^\\]]+\\]|[^:\\s]+):\\d{1,5}$' }),
  /** The key requests to the REST API must send as X-API-Key (it signs nothing in); null for none. */
  local_api_key: Type.Union([Type.String({ minLength: 16, maxLength: 256, pattern: '^[\\x21-\\x7e]+$' }), Type.Null()]),
  // Queueing: FIFO mode and parts in flight per transfer (docs/agent-api-notes/transfers.md, "Taking turns").
  /** Transfers start in the order they were made (priority first), at most max_active_* per direction at once; the others wait in line. */
  fifo: Type.Boolean(),
  /** Uploads that run at once in FIFO mode. */
  max_active_uploads: Type.Integer({ minimum: 1, maximum: 64 }),
  /** Downloads that run at once in FIFO mode. */
  max_active_downloads: Type.Integer({ minimum: 1, maximum: 64 }),
  /** Parts in flight of one transfer at most; null for no cap but `concurrency`, which caps all. */
  connections_per_transfer: Type.Union([Type.Integer({ minimum: 1, maximum: 64 }), Type.Null()]),
  /** Bandwidth limits and their schedules. */
  ...rateSettings,
};

export const AgentSettings = Type.Object({
  ...editable,
  /** The settings this agent cannot change, each with why (e.g. "set by --listen"). */
  locked: Type.Record(Type.String(), Type.String()),
  /** The bandwidth limits in force now, and until when. */
  rate_limits_now: RateLimitsNow,
});
export type AgentSettings = Static<typeof AgentSettings>;

export const SettingsChange = Type.Object(
  Object.fromEntries(Object.entries(editable).map(([k, v]) => [k, Type.Optional(v)])) as { [K in keyof typeof editable]: ReturnType<typeof Type.Optional<(typeof editable)[K]>> },
  { additionalProperties: false, minProperties: 1 },
);
export type SettingsChange = Static<typeof SettingsChange>;

export const SettingsAnswer = Type.Object({
  settings: AgentSettings,
  /** The change needs the agent to start again, which it does right after answering: the app reconnects. */
  restarting: Type.Boolean(),
});
export type SettingsAnswer = Static<typeof SettingsAnswer>;

/** "Try it on this computer": signed in at once when the agent already uses that service, else it starts again on it (and signs in as its owner). */
export const ThisComputerAnswer = Type.Object({ restarting: Type.Boolean(), session: Type.Union([SessionAnswer, Type.Null()]) });
export type ThisComputerAnswer = Static<typeof ThisComputerAnswer>;
