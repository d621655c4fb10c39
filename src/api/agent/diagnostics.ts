// Wire shapes of the agent's diagnostics (a Ferry addition; the contract names
// the group without routes): GET /diagnostics and POST /diagnostics/bundle.
// Secrets never appear in them: each is shown as HIDDEN.
import { Type, type Static } from 'typebox';

/** What a secret setting shows instead of its value. */
export const HIDDEN = '(hidden)';

/** One probe of a server: a real request, the time it took, or why it failed. */
export const Reach = Type.Object({
  /** The service's base URL, or a store's origin (credentials in it hidden). */
  url: Type.String(),
  reachable: Type.Boolean(),
  /** The HTTP status it answered (any answer proves the TCP and HTTP path). */
  status: Type.Union([Type.Integer(), Type.Null()]),
  /** Milliseconds from the request to the answer's headers; null when it did not answer. */
  latency_ms: Type.Union([Type.Number(), Type.Null()]),
  /** True when it did not answer within the probe's timeout. */
  timed_out: Type.Boolean(),
  /** Why it is unreachable, in words; null when it answered. */
  error: Type.Union([Type.String(), Type.Null()]),
});
export type Reach = Static<typeof Reach>;

export const StoreReach = Type.Object({
  ...Reach.properties,
  /** `used`: the agent sent parts to it or fetched ranges from it since it started; `this_computer`: the store of the service on this computer. */
  source: Type.Union([Type.Literal('used'), Type.Literal('this_computer')]),
});
export type StoreReach = Static<typeof StoreReach>;

/** The free space of the file system that holds a destination. */
export const DiskSpace = Type.Object({
  path: Type.String(),
  /** Why it is listed: a download's or a Portal download automation's folder, a writing gateway's root, the Downloads folder. */
  uses: Type.Array(Type.Union([Type.Literal('download'), Type.Literal('automation'), Type.Literal('gateway'), Type.Literal('downloads_folder')])),
  /** The folder measured: the path, or its nearest existing parent. */
  measured: Type.Union([Type.String(), Type.Null()]),
  free_bytes: Type.Union([Type.Integer(), Type.Null()]),
  total_bytes: Type.Union([Type.Integer(), Type.Null()]),
  timed_out: Type.Boolean(),
  error: Type.Union([Type.String(), Type.Null()]),
});
export type DiskSpace = Static<typeof DiskSpace>;

/** A warning or an error the agent logged, newest last. */
export const LoggedProblem = Type.Object({
  time: Type.String({ format: 'date-time' }),
  level: Type.Union([Type.Literal('warn'), Type.Literal('error'), Type.Literal('fatal')]),
  message: Type.String(),
  /** The error's message, when the record carries one. */
  error: Type.Union([Type.String(), Type.Null()]),
  /** The record's other fields, as JSON (at most 2,000 characters). */
  details: Type.Union([Type.String(), Type.Null()]),
});
export type LoggedProblem = Static<typeof LoggedProblem>;

export const Diagnostics = Type.Object({
  generated_at: Type.String({ format: 'date-time' }),
  versions: Type.Object({
    agent: Type.String(),
    build_stamp: Type.String(),
    node: Type.String(),
    os: Type.String(),
    platform: Type.String(),
    arch: Type.String(),
    /** The desktop app's version and its Electron, when the agent runs in the app; null otherwise. */
    app: Type.Union([Type.Object({ version: Type.String(), electron: Type.String() }), Type.Null()]),
  }),
  /** GET /settings's values and the start settings beside them, secrets hidden. */
  settings: Type.Record(Type.String(), Type.Unknown()),
  signed_in: Type.Boolean(),
  service: Reach,
  stores: Type.Array(StoreReach),
  disks: Type.Array(DiskSpace),
  recent_problems: Type.Array(LoggedProblem),
  /** The agent's log files (newest first), which a support bundle holds. */
  log_files: Type.Array(Type.String()),
});
export type Diagnostics = Static<typeof Diagnostics>;

export const BundleBody = Type.Object({
  /** The folder the bundle is written to (made when missing); default: the Downloads folder. */
  folder: Type.Optional(Type.String({ minLength: 1, maxLength: 4096, pattern: '^[^\\u0000]*$' })),
});
export type BundleBody = Static<typeof BundleBody>;

export const BundleAnswer = Type.Object({
  /** The ZIP's absolute path. */
  path: Type.String(),
  size: Type.Integer(),
});
export type BundleAnswer = Static<typeof BundleAnswer>;
