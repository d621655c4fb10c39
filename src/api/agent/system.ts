// Wire shapes of the agent's System group: /about, /version_check, /health,
// /validation, /shutdown.
import { Type, type Static } from 'typebox';

/** `{code}` answers: 0 means done. */
export const CodeAnswer = Type.Object({ code: Type.Integer() });
export type CodeAnswer = Static<typeof CodeAnswer>;

export const VersionInfo = Type.Object({
  version: Type.String(),
  /** `VERSION+HASH`, e.g. 0.1.0+3f2a9c1d0b7e, or 0.1.0+dev outside a build. */
  build_stamp: Type.String(),
  /** The hosted service this agent talks to (its --hosted-url). */
  masv_host: Type.String(),
});
export type VersionInfo = Static<typeof VersionInfo>;

export const About = Type.Object({
  ...VersionInfo.properties,
  backend: Type.Object({ hash: Type.String(), build_number: Type.String(), build_time: Type.String() }),
  /** The agent's effective start settings that change how transfers behave. */
  settings: Type.Object({ auto_finalize: Type.Boolean(), chunk_size: Type.Integer(), concurrency: Type.Integer() }),
});
export type About = Static<typeof About>;

export const VersionCheck = Type.Object({
  current_version: VersionInfo,
  latest_version: VersionInfo,
  update_available: Type.Boolean(),
});
export type VersionCheck = Static<typeof VersionCheck>;

export const Health = Type.Object({
  /** 0 healthy; otherwise the code of what is wrong (the status is then 503). */
  code: Type.Integer(),
  database: Type.Union([Type.Literal('ok'), Type.Literal('error')]),
  hosted: Type.Union([Type.Literal('reachable'), Type.Literal('unreachable')]),
});
export type Health = Static<typeof Health>;

/** One input rule of the agent, for clients that check before they send. */
export const Rule = Type.Object({
  description: Type.String(),
  type: Type.Union([Type.Literal('integer'), Type.Literal('string'), Type.Literal('array'), Type.Literal('boolean')]),
  /** Which request fields it applies to, e.g. "POST /uploads chunk_size". */
  applies_to: Type.Array(Type.String()),
  minimum: Type.Optional(Type.Integer()),
  maximum: Type.Optional(Type.Integer()),
  default: Type.Optional(Type.Union([Type.Integer(), Type.String(), Type.Boolean()])),
  min_length: Type.Optional(Type.Integer()),
  max_length: Type.Optional(Type.Integer()),
  min_items: Type.Optional(Type.Integer()),
  max_items: Type.Optional(Type.Integer()),
  format: Type.Optional(Type.String()),
});
export type Rule = Static<typeof Rule>;

export const Validation = Type.Object({
  /** The version of the agent's interface description these rules belong to. */
  version: Type.String(),
  rules: Type.Record(Type.String(), Rule),
});
export type Validation = Static<typeof Validation>;
