// Package finalize: the end of the upload. Unfinished files are dropped, totals
// fixed, the expiry clock started, every recipient gets a Link by e-mail,
// package.finalized is raised for the webhooks, and a Portal Package is queued
// for delivery to each cloud connection attached to its Portal; its form
// response is delivered as metadata files and in the e-mail (formDelivery.ts).
import type { HostedContext } from '../context.js';
import { lockRow } from '../db/dialect.js';
import type { PackagesTable } from '../db/schema.js';
import { conflict } from '../errors.js';
import { abortQuietly, requireNew } from './files.js';
import { insertLink, linkUrl, packageAccessLimit } from './links.js';
import { notifyRecipients, type Delivery } from './notify.js';
import { portalDelivery } from './portalPackages.js';
import { eventsRaised, raisePackageEvent } from './webhookEvents.js';
import { raisePortalTransfers } from './cloudTransfers.js';
import { insertMetadataFiles, prepareMetadata } from './formDelivery.js';
import { packagePayload, raiseEvent } from './events.js';

const DAY_MS = 24 * 3600 * 1000;

/**
 * The expiry a Package gets when it is finalized: none with unlimited storage,
 * the one already set when custom, else the Team's default number of days
 * (a default of 0 or less means the Team keeps Packages until deleted).
 */
export function expiryAtFinalize(pkg: Pick<PackagesTable, 'unlimited_storage' | 'custom_expiry' | 'expiry'>, teamDefaultDays: number, now: Date): string | null {
  if (pkg.unlimited_storage === 1) return null;
  if (pkg.custom_expiry === 1 && pkg.expiry) return pkg.expiry;
  return teamDefaultDays > 0 ? new Date(now.getTime() + teamDefaultDays * DAY_MS).toISOString() : null;
}

function recipientsOf(pkg: Pick<PackagesTable, 'recipients'>): string[] {
  try {
    const list: unknown = JSON.parse(pkg.recipients);
    return Array.isArray(list) ? [...new Set(list.filter((e): e is string => typeof e === 'string' && e.length > 0))] : [];
  } catch {
    return [];
  }
}

export async function finalizePackage(ctx: HostedContext, pkg: PackagesTable): Promise<void> {
  requireNew(pkg);
  const team = await ctx.db.selectFrom('teams').select('custom_expiry_default').where('id', '=', pkg.team_id).executeTakeFirstOrThrow();
  const now = new Date();
  const nowStr = now.toISOString();
  // A Portal Package goes to the Portal's recipients and keeps the Portal's period.
  const portal = await portalDelivery(ctx.db, pkg);
  const expiry = expiryAtFinalize(pkg, portal?.expiryDays ?? team.custom_expiry_default, now);
  const recipients = portal ? portal.recipients : recipientsOf(pkg);
  // A form response's files: objects now, rows in the transaction below (formDelivery.ts).
  const metadata = await prepareMetadata(ctx, pkg);

  const { dropped, finalized, deliveries, events } = await ctx.db.transaction().execute(async (trx) => {
    // A second finalize of the Package waits here, then finds it finalized (PostgreSQL; SQLite serializes writers).
    await lockRow(trx, 'packages', pkg.id);
    const dropped = await trx
      .selectFrom('files')
      .select(['id', 'object_key', 'upload_id'])
      .where('package_id', '=', pkg.id)
      .where('state', '=', 'pending')
      .execute();
    if (dropped.length > 0) await trx.deleteFrom('files').where('id', 'in', dropped.map((f) => f.id)).execute();
    await insertMetadataFiles(trx, pkg.id, metadata, nowStr);
    const totals = await trx
      .selectFrom('files')
      .select((eb) => [eb.fn.countAll<number>().as('count'), eb.fn.coalesce(eb.fn.sum<number>('size'), eb.lit(0)).as('bytes')])
      .where('package_id', '=', pkg.id)
      .where('kind', '=', 'file')
      .executeTakeFirstOrThrow();
    const r = await trx
      .updateTable('packages')
      .set({
        state: 'finalized',
        size: Number(totals.bytes),
        total_files: Number(totals.count),
        finalized_at: nowStr,
        expiry,
        updated_at: nowStr,
        ...(portal ? { recipients: JSON.stringify(recipients) } : {}),
      })
      .where('id', '=', pkg.id)
      .where('state', '=', 'new')
      .executeTakeFirst();
    if (r.numUpdatedRows === 0n) throw conflict('package was finalized or deleted meanwhile', 'package_not_new');
    const deliveries: Delivery[] = [];
    for (const email of recipients) {
      const { row, secret } = await insertLink(trx, pkg.id, {
        email,
        accessLimit: packageAccessLimit(pkg),
        expiry: null,
        passwordHash: pkg.password_hash,
        active: true,
      });
      deliveries.push({ email, url: linkUrl(ctx, row.id, secret) });
    }
    const finalized = { ...pkg, state: 'finalized' as const, size: Number(totals.bytes), total_files: Number(totals.count), expiry, updated_at: nowStr };
    await raiseEvent(ctx, trx, 'package.finalized', finalized, packagePayload(finalized), nowStr);
    const events = (await raisePackageEvent(trx, 'package.finalized', finalized, now)) + (await raisePortalTransfers(ctx, trx, finalized, now));
    return { dropped, finalized, deliveries, events };
  });
  eventsRaised(ctx, events);

  // Mail goes out after the answer: a slow or unreachable relay must not hold up
  // the uploader. Failures are logged; the Links exist either way (GET .../links).
  void notifyRecipients(ctx, finalized, deliveries, metadata.emailLines).catch((err) => ctx.log.error({ err, packageId: pkg.id }, 'package e-mails failed'));
  for (const f of dropped) await abortQuietly(ctx, f);
}
