// The storage gateways attached to this process: one socket per connection (a
// new one replaces the old), the connection's state kept in step (ok while one
// is attached, disconnected otherwise), and the transfers that waited for a
// gateway woken when it connects. Sessions live in the process their socket
// reached; with the embedded store one service runs per data dir, so at start
// no gateway is attached and every gateway connection is marked disconnected.
import type { WebSocket } from 'ws';
import type { HostedContext } from '../context.js';
import type { GatewayPermissions } from '../../api/hosted/storageGateway.js';
import { GatewayClose } from '../../api/hosted/storageGateway.js';
import { GATEWAY_TRANSFER_JOB } from '../services/cloudTransfers.js';
import { newId, nowIso } from '../ids.js';
import { GatewaySession } from './session.js';

export interface GatewayHub {
  /** The session attached for the connection, if one is open. */
  get(connectionId: string): GatewaySession | undefined;
  /** The session attached now, or the next one to attach within `ms`; undefined after that (or when `signal` aborts). */
  whenAttached(connectionId: string, ms: number, signal: AbortSignal): Promise<GatewaySession | undefined>;
  attach(socket: WebSocket, conn: { id: string; name: string; direction: 'svc_to_cloud' | 'cloud_to_svc' }, hello: { permissions: GatewayPermissions; version: string }): Promise<GatewaySession>;
  /** Closes the connection's socket (deleted, or its secret changed). */
  revoke(connectionId: string, why: string): void;
  close(): Promise<void>;
}

/** Every gateway connection as disconnected: no socket survives a restart of the service. */
export async function detachAll(ctx: Pick<HostedContext, 'db'>): Promise<void> {
  await ctx.db
    .updateTable('cloud_connections')
    .set({ state: 'disconnected', gateway_session: null })
    .where('provider', '=', 'storage_gateway')
    .where((eb) => eb.or([eb('state', '!=', 'disconnected'), eb('gateway_session', 'is not', null)]))
    .execute();
}

export function createGatewayHub(ctx: HostedContext): GatewayHub {
  const sessions = new Map<string, GatewaySession>();
  const waiters = new Map<string, Set<(s: GatewaySession) => void>>();
  let closing = false;

  /** Transfers of the connection waiting in the jobs table run now. */
  async function wake(connectionId: string): Promise<void> {
    const waiting = await ctx.db
      .selectFrom('cloud_transfers')
      .select('id')
      .where('cloud_connection_id', '=', connectionId)
      .where('state', 'in', ['queued', 'running'])
      .execute();
    if (waiting.length === 0) return;
    // The payload is written by enqueueJob as JSON.stringify({transfer_id}).
    const payloads = waiting.map((t) => JSON.stringify({ transfer_id: t.id }));
    await ctx.db
      .updateTable('jobs')
      .set({ run_after: nowIso() })
      .where('kind', '=', GATEWAY_TRANSFER_JOB)
      .where('state', '=', 'queued')
      .where('payload', 'in', payloads)
      .execute();
    ctx.jobs.notify();
  }

  async function detached(session: GatewaySession): Promise<void> {
    if (sessions.get(session.info.connectionId) === session) sessions.delete(session.info.connectionId);
    const r = await ctx.db
      .updateTable('cloud_connections')
      .set({ state: 'disconnected', gateway_session: null })
      .where('id', '=', session.info.connectionId)
      .where('gateway_session', '=', session.info.id)
      .executeTakeFirst();
    if (r.numUpdatedRows > 0n) ctx.log.info({ connection: session.info.connectionId }, 'a storage gateway disconnected');
  }

  return {
    get(connectionId) {
      const s = sessions.get(connectionId);
      return s?.isOpen ? s : undefined;
    },

    whenAttached(connectionId, ms, signal) {
      const now = sessions.get(connectionId);
      if (now?.isOpen) return Promise.resolve(now);
      return new Promise((resolve) => {
        let set = waiters.get(connectionId);
        if (!set) waiters.set(connectionId, (set = new Set()));
        const done = (s: GatewaySession | undefined) => {
          clearTimeout(timer);
          signal.removeEventListener('abort', onAbort);
          set.delete(done);
          if (set.size === 0 && waiters.get(connectionId) === set) waiters.delete(connectionId);
          resolve(s);
        };
        const onAbort = () => done(undefined);
        const timer = setTimeout(() => done(undefined), ms);
        signal.addEventListener('abort', onAbort, { once: true });
        set.add(done);
      });
    },

    async attach(socket, conn, hello) {
      const session = new GatewaySession(
        socket,
        { id: newId('gws'), connectionId: conn.id, permissions: hello.permissions, version: hello.version },
        { connection_id: conn.id, name: conn.name, direction: conn.direction },
        ctx.config.gatewayHeartbeatMs,
        ctx.log,
      );
      const before = sessions.get(conn.id);
      sessions.set(conn.id, session);
      // Written before the gateway it replaces is closed, so that once that one sees its close the state is this socket's.
      await ctx.db
        .updateTable('cloud_connections')
        .set({
          state: 'ok',
          last_error: null,
          gateway_session: session.info.id,
          gateway_connected_at: nowIso(),
          gateway_info: JSON.stringify({ permissions: hello.permissions, version: hello.version }),
        })
        .where('id', '=', conn.id)
        .execute();
      before?.close(GatewayClose.replaced, 'another gateway connected with this id');
      void session.closed().then(() => detached(session).catch((err) => ctx.log.error({ err }, 'recording a gateway disconnect failed')));
      for (const w of [...(waiters.get(conn.id) ?? [])]) w(session);
      if (closing) session.close(GatewayClose.shutdown, 'the service is stopping');
      ctx.log.info({ connection: conn.id, permissions: hello.permissions, version: hello.version }, 'a storage gateway connected');
      await wake(conn.id).catch((err) => ctx.log.error({ err }, 'waking the transfers of a gateway failed'));
      return session;
    },

    revoke(connectionId, why) {
      sessions.get(connectionId)?.close(GatewayClose.revoked, why);
    },

    async close() {
      closing = true;
      const all = [...sessions.values()];
      for (const s of all) s.close(GatewayClose.shutdown, 'the service is stopping');
      // Bounded: close() cuts off a gateway that does not answer the close handshake.
      await Promise.all(all.map((s) => s.closed()));
      // Only this process's sessions: another instance's gateways stay connected to it.
      for (const s of all) await detached(s);
    },
  };
}
