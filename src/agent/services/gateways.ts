// Storage gateways: a local folder (root_path) exposed to the hosted service as
// a cloud connection's storage. Registered with the connection's id and secret
// (the service's create answer), kept in SQLite, and each connected to its
// service by a WebSocket the agent opens and keeps open (gateway/link.ts).
// `w` gateways receive deliveries into the root (gateway/receive.ts); `r`
// gateways serve files of the root as Packages (gateway/serve.ts). Every change
// of a gateway's state is on the /events feed (type `gateway`). A signed-in
// Owner or Admin can also make the connection itself on the service from here.
import path from 'node:path';
import type { AgentContext } from '../context.js';
import type { GatewayOp, OpArgs } from '../../api/hosted/storageGateway.js';
import type { GatewayRecord, NewConnectionAnswer, NewConnectionBody, RegisterGatewayBody, UpdateGatewayBody } from '../../api/agent/storageGateway.js';
import type { CloudConnection, CreateCloudConnectionBody } from '../../api/hosted/cloudConnections.js';
import { HostedApiError } from '../../client/http.js';
import { fromHosted, type SessionService } from './session.js';
import { SECRET_MASK } from '../../api/agent/storageGateway.js';
import { AgentError, conflict, invalid, notFound, upstream } from '../errors.js';
import { AgentErrorCode } from '../../api/agent/errors.js';
import * as store from '../store/gatewayStore.js';
import { GatewayLink, GatewayFailure, probeGateway, type Handler } from '../gateway/link.js';
import { Receiver, removePartials } from '../gateway/receive.js';
import { Server } from '../gateway/serve.js';
import { createRangeTransport } from '../engine/rangeFetch.js';
import { ObjectHttp } from '../engine/objectHttp.js';
import { TransferFeed } from '../engine/feed.js';
import { engineTuning } from '../engine/retry.js';
import { buildInfo } from './system.js';
import { checkRequestPath } from '../engine/requestPath.js';

/** A uid/gid override must be one this process can apply (and means nothing on Windows or for a gateway that writes nothing). */
function checkOwnership(permissions: 'r' | 'w', uid: number | null, gid: number | null): void {
  if (uid === null && gid === null) return;
  if (process.platform === 'win32') throw invalid('user_id and group_id are not supported on Windows');
  if (permissions === 'r') throw invalid('user_id and group_id are for gateways that write (permissions w); a read-only gateway writes no files');
  if (!process.getuid || process.getuid() === 0) return;
  if (uid !== null && uid !== process.getuid()) throw invalid('user_id: giving files to another user needs the agent to run as root');
  if (gid !== null && gid !== process.getgid?.() && !(process.getgroups?.() ?? []).includes(gid)) {
    throw invalid('group_id: the agent is not a member of that group (or must run as root)');
  }
}

/** root_path: an existing folder (a gateway never makes its root: a volume not mounted must not become an empty folder), writable for a gateway that writes. */
async function checkRoot(root: string, permissions: 'r' | 'w'): Promise<string> {
  return (await checkRequestPath(root, { field: 'root_path', kind: 'folder', write: permissions === 'w' })).abs;
}

/** A refusal of the service's, in words: a member may not make connections. */
function connectionRefusal(err: unknown): never {
  if (err instanceof HostedApiError && err.status === 403) {
    throw new AgentError(403, AgentErrorCode.forbidden, 'Only an Owner or an Admin of the Team can make a storage gateway connection. Ask one of them for a connection ID and secret.');
  }
  if (err instanceof HostedApiError && err.status === 404) throw invalid('That Team is not one of yours.', 'team_id');
  return fromHosted(err);
}

export function createGatewaysService(ctx: AgentContext, session: SessionService) {
  const tuning = engineTuning(process.env, ctx.config.retryForMs);
  const version = buildInfo().version;
  const links = new Map<string, GatewayLink>();
  const transport = createRangeTransport(tuning.timeoutMs, { disks: ctx.disks, bucket: ctx.rates.download });
  const objects = new ObjectHttp({ timeoutMs: tuning.timeoutMs, disks: ctx.disks, bucket: ctx.rates.upload });
  let closed = false;

  const record = (g: store.GatewayRow): GatewayRecord => {
    const link = links.get(g.id);
    const transfers = store.recentTransfers(ctx.db, g.id);
    // The latest change of anything in the record: an answer that arrives after the event of a later change is older.
    const updatedAt = [g.updated_at, link?.changedAt ?? '', ...transfers.map((t) => t.updated_at)].reduce((a, b) => (b > a ? b : a));
    return {
      id: g.id,
      name: g.name,
      root_path: g.root_path,
      permissions: g.permissions,
      secret: SECRET_MASK,
      user_id: g.user_id,
      group_id: g.group_id,
      service_url: g.service_url,
      state: link?.state ?? 'connecting',
      last_error: link?.lastError ?? null,
      connected_at: link?.connectedAt ?? null,
      next_attempt_at: link?.nextAttemptAt ?? null,
      transfers: transfers.map((t) => ({
        transfer_id: t.transfer_id,
        direction: t.direction,
        package_id: t.package_id,
        package_name: t.package_name,
        folder: t.direction === 'svc_to_cloud' && t.folder !== null ? path.join(t.root_path, ...t.folder.split('/').filter(Boolean)) : null,
        state: t.state,
        files_total: t.files_total,
        files_done: t.files_done,
        bytes_total: t.bytes_total,
        bytes_done: t.bytes_done,
        error: t.error,
        created_at: t.created_at,
        updated_at: t.updated_at,
      })),
      created_at: g.created_at,
      updated_at: updatedAt,
    };
  };

  const feed = new TransferFeed<GatewayRecord>(
    {
      summary: (id) => {
        const g = store.getGateway(ctx.db, id);
        return g && record(g);
      },
      totals: false,
      send: (id, c) => {
        if (c.change === 'record') ctx.events.publish('gateway', c.summary);
        else if (c.change === 'removed') ctx.events.publish('gateway', { id, deleted: true });
      },
    },
    500,
  );
  const changed = (id: string, kind: 'state' | 'progress') => feed.changed(id, kind);

  const receiver = new Receiver({ db: ctx.db, log: ctx.log, transport, tuning, changed });
  const server = new Server({ db: ctx.db, log: ctx.log, objects, tuning, changed });

  /** Requests of the service, each for the gateway as it is registered now (an update applies to the next request). */
  const handlerFor = (id: string): Handler => async (op: GatewayOp, args, signal, progress) => {
    const g = store.getGateway(ctx.db, id);
    if (!g) throw new GatewayFailure('permission_denied', 'this gateway is being unregistered');
    switch (op) {
      case 'deliver.begin':
        return receiver.begin(g, args as OpArgs<'deliver.begin'>);
      case 'deliver.file':
        return receiver.file(g, args as OpArgs<'deliver.file'>, signal, progress);
      case 'deliver.end':
        return receiver.end(g, args as OpArgs<'deliver.end'>);
      case 'collect.list':
        return server.list(g, args as OpArgs<'collect.list'>, signal);
      case 'collect.part':
        return server.part(g, args as OpArgs<'collect.part'>, signal);
      case 'collect.end':
        return server.end(g, args as OpArgs<'collect.end'>);
    }
  };

  function startLink(g: store.GatewayRow): void {
    const link = new GatewayLink(g, {
      log: ctx.log,
      policy: tuning.retry,
      version,
      handle: handlerFor(g.id),
      changed: () => changed(g.id, 'state'),
    });
    links.set(g.id, link);
    link.start();
  }

  const gatewayOf = (id: string) => {
    const g = store.getGateway(ctx.db, id);
    if (!g) throw notFound('storage gateway');
    return g;
  };

  return {
    /** At agent start: every registered gateway connects. */
    start(): void {
      for (const g of store.listGateways(ctx.db)) startLink(g);
    },

    list: (): GatewayRecord[] => store.listGateways(ctx.db).map(record),

    /** POST /storage_gateway/register: checked, and its id and secret tried with the service, before anything is kept. */
    async register(body: RegisterGatewayBody): Promise<GatewayRecord> {
      if (store.getGateway(ctx.db, body.id)) throw conflict(`the storage gateway ${body.id} is registered already (unregister it first, or update it)`);
      const root = await checkRoot(body.root_path, body.permissions);
      checkOwnership(body.permissions, body.user_id ?? null, body.group_id ?? null);
      const at = new Date().toISOString();
      const g: store.GatewayRow = {
        id: body.id,
        name: body.name,
        permissions: body.permissions,
        root_path: root,
        secret: body.secret,
        user_id: body.user_id ?? null,
        group_id: body.group_id ?? null,
        service_url: ctx.config.hostedUrl,
        created_at: at,
        updated_at: at,
      };
      // A wrong id or secret is said now; a service that cannot be reached is tried again and again once registered.
      const probe = await probeGateway(g, version);
      if (!probe.ok && probe.refused) throw new AgentError(400, AgentErrorCode.badRequest, `the service refused this gateway's id and secret: ${probe.why}`);
      // Registered meanwhile by a request that got here first.
      if (store.getGateway(ctx.db, body.id)) throw conflict(`the storage gateway ${body.id} is registered already`);
      store.insertGateway(ctx.db, g);
      if (!closed) startLink(g);
      if (!probe.ok) links.get(g.id)!.lastError = probe.why;
      const rec = record(g);
      ctx.events.publish('gateway', rec);
      return rec;
    },

    /** POST /storage_gateway/connections: a storage gateway connection made on the service, for the session's Team; its secret is answered this once. */
    async newConnection(body: NewConnectionBody): Promise<NewConnectionAnswer> {
      const auth = session.credentials();
      const teamId = body.team_id ?? (await session.teams())[0]?.id;
      if (!teamId) throw invalid('You are in no Team on this server, so there is none to make the connection in.', 'team_id');
      const create: Omit<CreateCloudConnectionBody, 'provider'> & { provider: 'storage_gateway' } = {
        provider: 'storage_gateway',
        authorization: {},
        name: body.name,
        direction: body.permissions === 'w' ? 'svc_to_cloud' : 'cloud_to_svc',
      };
      const c = await session.hosted.request<CloudConnection>('POST', `/v1/teams/${encodeURIComponent(teamId)}/cloud_connections`, { auth, body: create }).catch(connectionRefusal);
      if (!c.secret) throw upstream('the service made the connection but answered no secret');
      ctx.log.info({ connection: c.id, team: teamId }, 'made a storage gateway connection on the service');
      return { id: c.id, secret: c.secret, name: c.name, permissions: body.permissions, team_id: teamId };
    },

    /** POST /storage_gateway/update: root_path and the ownership overrides (-1 removes one). Deliveries under way keep their root. */
    async update(body: UpdateGatewayBody): Promise<GatewayRecord> {
      const g = gatewayOf(body.id);
      if (body.root_path === undefined && body.user_id === undefined && body.group_id === undefined) throw invalid('nothing to update: give root_path, user_id or group_id');
      const set: Partial<Pick<store.GatewayRow, 'root_path' | 'user_id' | 'group_id'>> = {};
      if (body.root_path !== undefined) set.root_path = await checkRoot(body.root_path, g.permissions);
      if (body.user_id !== undefined) set.user_id = body.user_id === -1 ? null : body.user_id;
      if (body.group_id !== undefined) set.group_id = body.group_id === -1 ? null : body.group_id;
      const uid = set.user_id !== undefined ? set.user_id : g.user_id;
      const gid = set.group_id !== undefined ? set.group_id : g.group_id;
      // Only what this request sets is checked: an override kept as it was stays allowed.
      checkOwnership(g.permissions, body.user_id !== undefined ? uid : null, body.group_id !== undefined ? gid : null);
      store.updateGateway(ctx.db, g.id, set);
      const rec = record(gatewayOf(g.id));
      ctx.events.publish('gateway', rec);
      return rec;
    },

    /** POST /storage_gateway/unregister: the socket closes (the service shows the connection disconnected), the gateway is forgotten. */
    async unregister(id: string): Promise<GatewayRecord> {
      const g = gatewayOf(id);
      const link = links.get(id);
      links.delete(id);
      await link?.close();
      // Requests the closed socket left winding down end before their rows go.
      await receiver.idle();
      const rec = record(g);
      await removePartials(ctx.db, id);
      store.deleteGateway(ctx.db, id);
      feed.removed(id);
      return { ...rec, state: 'disconnected', connected_at: null, next_attempt_at: null };
    },

    /** The service answers again: gateways waiting for it try now. */
    retryNow(): void {
      for (const l of links.values()) l.retryNow();
    },

    /** After a sleep of the machine: sockets may be dead, so they are opened again. */
    reconnect(): void {
      transport.reconnect();
      objects.reconnect();
      for (const l of links.values()) l.reconnect();
    },

    /** Closes every socket; deliveries under way keep their progress for the next start. */
    async close(): Promise<void> {
      closed = true;
      feed.close();
      await Promise.all([...links.values()].map((l) => l.close()));
      links.clear();
      await receiver.idle();
      await transport.close().catch(() => {});
      await objects.close().catch(() => {});
    },
  };
}
export type GatewaysService = ReturnType<typeof createGatewaysService>;
