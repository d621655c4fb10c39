// GET /healthz and GET /readyz: what a load balancer or an orchestrator asks an instance.
import { Type, type Static } from 'typebox';

/** /healthz: the process runs and answers. */
export const Health = Type.Object({ status: Type.Literal('ok') });
export type Health = Static<typeof Health>;

/** /readyz when the instance can serve: its database answers with every migration applied, and its store answers. */
export const Ready = Type.Object({
  status: Type.Literal('ready'),
  role: Type.Union([Type.Literal('api'), Type.Literal('worker'), Type.Literal('all')]),
});
export type Ready = Static<typeof Ready>;

/** Why /readyz answers 503 (the `code` of its `{code, message}`). */
export const NOT_READY = {
  shuttingDown: 'shutting_down',
  database: 'database_unavailable',
  migrations: 'migrations_pending',
  store: 'store_unavailable',
} as const;
