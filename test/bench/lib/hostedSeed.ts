// Fills a Team with N Packages for the hosted benchmark, written straight into
// the service's database through its own Kysely layer (schema.ts types), in
// batches of one transaction each: 100,000 Packages through HTTP would take
// longer than the measurement. Dialect-neutral inserts, so the same code seeds
// PostgreSQL once a Kysely on it is passed in.
//
// The mix: every Package is in the Team; one in 10 came through the bench's
// Portal, one in 10 (others) is in its Teamspace; one in 20 is expired, one in 40
// is still new (not listed by default), the rest finalized. Names carry
// "reel K" with K = i mod 50, so a name filter of "reel 7" matches 2%.
import type { Kysely } from 'kysely';
import type { Database, PackagesTable } from '../../../src/hosted/db/schema.js';

export interface SeedPlan {
  teamId: string;
  userId: string;
  portalId: string;
  teamspaceId: string;
  count: number;
}

const BATCH = 500;
const MINUTE = 60_000;

export function seededPackage(plan: SeedPlan, i: number, now: number): PackagesTable {
  const created = new Date(now - (plan.count - i) * MINUTE).toISOString();
  const state = i % 40 === 3 ? 'new' : i % 20 === 19 ? 'expired' : 'finalized';
  return {
    id: `pkg_bench${String(i).padStart(7, '0')}`,
    team_id: plan.teamId,
    portal_id: i % 10 === 0 ? plan.portalId : null,
    teamspace_id: i % 10 === 1 ? plan.teamspaceId : null,
    created_by: i % 10 === 0 ? null : plan.userId,
    name: `Dailies ${i} reel ${i % 50}`,
    description: '',
    sender: `sender${i % 100}@example.com`,
    recipients: '[]',
    state,
    size: ((i * 7919) % 100_000) * 1024,
    total_files: 1 + (i % 30),
    access_limit: null,
    password_hash: null,
    contains_virus: 0,
    custom_expiry: 0,
    custom_metadata_id: null,
    expiry: new Date(Date.parse(created) + 30 * 24 * 60 * MINUTE).toISOString(),
    unlimited_storage: 0,
    chunk_size: 0,
    tag_id: null,
    finalized_at: state === 'new' ? null : created,
    objects_deleted: 0,
    created_at: created,
    updated_at: created,
    private_access: 0,
    terms_accepted_at: null,
  };
}

/** Inserts plan.count Packages; resolves the number of them each list shows by default (finalized or expired). */
export async function seedPackages(db: Kysely<Database>, plan: SeedPlan): Promise<{ listed: number; portal: number; teamspace: number }> {
  const now = Date.now();
  const counts = { listed: 0, portal: 0, teamspace: 0 };
  for (let first = 0; first < plan.count; first += BATCH) {
    const rows: PackagesTable[] = [];
    for (let i = first; i < Math.min(plan.count, first + BATCH); i++) {
      const p = seededPackage(plan, i, now);
      rows.push(p);
      if (p.state === 'new') continue;
      counts.listed++;
      if (p.portal_id) counts.portal++;
      if (p.teamspace_id) counts.teamspace++;
    }
    await db.transaction().execute((trx) => trx.insertInto('packages').values(rows).execute());
  }
  return counts;
}
