// Raising webhook events: package.created and package.finalized are composed
// (payload, method, url, headers) and queued in the transaction of the Package
// change, one event per webhook, so that an event exists if and only if the
// change committed. And the record of an event's attempts (an addition).
import type { Kysely, Transaction } from 'kysely';
import type { HostedContext } from '../context.js';
import type { CustomWebhooksTable, Database, PackagesTable, WebhookEventsTable } from '../db/schema.js';
import type { WebhookEventBody, WebhookEventObject, WebhookEventRecord, WebhookEventType } from '../../api/hosted/customWebhooks.js';
import { newId } from '../ids.js';
import { enqueueJob } from '../jobs/queue.js';
import { parseEvents, parseStringMap } from './customWebhooks.js';

type Conn = Kysely<Database> | Transaction<Database>;

export const WEBHOOK_JOB = 'webhook.deliver';
/** Events: "each event is attempted up to 5 times". */
export const WEBHOOK_MAX_ATTEMPTS = 5;

export type EventPackage = Pick<PackagesTable, 'id' | 'team_id' | 'portal_id' | 'name' | 'sender' | 'state' | 'size' | 'total_files' | 'created_at' | 'updated_at'>;

export function eventObject(pkg: EventPackage): WebhookEventObject {
  return {
    id: pkg.id,
    name: pkg.name,
    sender: pkg.sender,
    state: pkg.state,
    size: pkg.size,
    total_files: pkg.total_files,
    created_at: pkg.created_at,
    updated_at: pkg.updated_at,
    ...(pkg.portal_id ? { portal_id: pkg.portal_id } : {}),
  };
}

/**
 * The webhooks an event of `pkg` goes to: for a Portal Package, the active
 * webhooks attached to its Portal; for a Team Package, every active webhook of
 * the Team. Only those that subscribe to `type`.
 */
async function targets(db: Conn, pkg: EventPackage, type: WebhookEventType): Promise<CustomWebhooksTable[]> {
  const hooks = pkg.portal_id
    ? await db
        .selectFrom('custom_webhooks')
        .innerJoin('portal_custom_webhooks', 'portal_custom_webhooks.custom_webhook_id', 'custom_webhooks.id')
        .selectAll('custom_webhooks')
        .where('portal_custom_webhooks.portal_id', '=', pkg.portal_id)
        .where('custom_webhooks.active', '=', 1)
        .execute()
    : await db.selectFrom('custom_webhooks').selectAll().where('team_id', '=', pkg.team_id).where('active', '=', 1).execute();
  return hooks.filter((h) => parseEvents(h.events).includes(type));
}

/**
 * Raises `type` for `pkg` as it is after the change. Call it with the change's
 * transaction; answers how many events were queued (wake the worker after the commit).
 */
export async function raisePackageEvent(db: Conn, type: WebhookEventType, pkg: EventPackage, now = new Date()): Promise<number> {
  const hooks = await targets(db, pkg, type);
  const at = now.toISOString();
  for (const hook of hooks) {
    const eventId = newId('evt');
    const body: WebhookEventBody = {
      event_id: eventId,
      event_time: at,
      event_type: type,
      custom_webhook_id: hook.id,
      ...parseStringMap(hook.body_extras),
      object: eventObject(pkg),
    };
    const row: WebhookEventsTable = {
      id: eventId,
      custom_webhook_id: hook.id,
      team_id: pkg.team_id,
      package_id: pkg.id,
      event_type: type,
      method: hook.method,
      url: hook.url,
      headers: hook.headers,
      body: JSON.stringify(body),
      state: 'pending',
      attempts: 0,
      created_at: at,
      updated_at: at,
    };
    await db.insertInto('webhook_events').values(row).execute();
    await enqueueJob(db, { kind: WEBHOOK_JOB, payload: { event_id: eventId }, maxAttempts: WEBHOOK_MAX_ATTEMPTS }, now);
  }
  return hooks.length;
}

/** After the transaction that raised events committed: deliver without waiting for the next poll. */
export const eventsRaised = (ctx: HostedContext, count: number) => {
  if (count > 0) ctx.jobs.notify();
};

/** The latest events of a webhook, newest first, each with its attempts in order. */
export async function listWebhookEvents(ctx: HostedContext, webhookId: string, limit: number): Promise<WebhookEventRecord[]> {
  const events = await ctx.db
    .selectFrom('webhook_events')
    .selectAll()
    .where('custom_webhook_id', '=', webhookId)
    .orderBy('created_at', 'desc')
    .orderBy('id', 'desc')
    .limit(limit)
    .execute();
  if (events.length === 0) return [];
  const attempts = await ctx.db
    .selectFrom('webhook_attempts')
    .selectAll()
    .where('event_id', 'in', events.map((e) => e.id))
    .orderBy('event_id')
    .orderBy('attempt')
    .execute();
  const byEvent = new Map<string, WebhookEventRecord['attempts']>(events.map((e) => [e.id, []]));
  for (const a of attempts) {
    byEvent.get(a.event_id)!.push({ attempt: a.attempt, status: a.status, error: a.error, started_at: a.started_at, finished_at: a.finished_at });
  }
  return events.map((e) => ({
    event_id: e.id,
    event_type: e.event_type as WebhookEventType,
    package_id: e.package_id,
    state: e.state,
    attempts: byEvent.get(e.id)!,
    body: JSON.parse(e.body) as Record<string, unknown>,
    created_at: e.created_at,
    updated_at: e.updated_at,
  }));
}
