// Named leases: work that one instance at a time must do (the sweeper) is done
// by whoever holds its lease. Taking or keeping one is one upsert that writes
// only when the lease is free, run out, or already this owner's; a stopping
// holder gives it back so that another takes it over at once. Plain SQL with
// ON CONFLICT and RETURNING, the same on SQLite and PostgreSQL.
import type { Kysely } from 'kysely';
import type { Database } from '../db/schema.js';

const iso = (ms: number) => new Date(ms).toISOString();

/** Takes (or keeps) lease `name` for `owner` until now + ms; false while another owner holds it. */
export async function takeLease(db: Kysely<Database>, name: string, owner: string, ms: number, now = Date.now()): Promise<boolean> {
  const until = iso(now + ms);
  const row = await db
    .insertInto('leases')
    .values({ name, owner, lease_until: until })
    .onConflict((oc) =>
      oc
        .column('name')
        .doUpdateSet({ owner, lease_until: until })
        .where((eb) => eb.or([eb('leases.owner', '=', owner), eb('leases.lease_until', '<=', iso(now))])),
    )
    .returning('owner')
    .executeTakeFirst();
  return row?.owner === owner;
}

/** Gives lease `name` back if `owner` holds it: the next taker need not wait for it to run out. */
export async function releaseLease(db: Kysely<Database>, name: string, owner: string, now = Date.now()): Promise<void> {
  await db.updateTable('leases').set({ lease_until: iso(now) }).where('name', '=', name).where('owner', '=', owner).execute();
}
