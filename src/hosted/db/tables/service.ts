// The service's own bookkeeping: rate limit windows, wrong-secret lockouts,
// realtime events, leases between instances, applied migrations.
import type { Generated } from 'kysely';

/** One fixed window of a rate limit (src/hosted/ratelimit/store.ts); times in ms since the epoch. */
export interface RateLimitsTable {
  /** `CLASS:WHO`, e.g. `api:key_...` or `public:203.0.113.9`. */
  key: string;
  window_start: number;
  count: number;
}

/** Wrong Link passwords and Portal access codes from one address (services/lockouts.ts). */
export interface SecretFailuresTable {
  /** `link:ID`, `portal:ID`, or `account:SHA256(e-mail)` (with address `*`: services/lockouts.ts). */
  subject: string;
  address: string;
  failures: number;
  last_failure_at: number;
  locked_until: number | null;
}

/** One realtime event (services/events.ts), written in the transaction of the change it tells of. */
export interface EventsTable {
  id: Generated<number>;
  team_id: string;
  package_id: string;
  portal_id: string | null;
  type: string;
  payload: string; // JSON object
  created_at: string;
}

/** A named lease: one instance at a time does the work it names (jobs/lease.ts). */
export interface LeasesTable {
  name: string;
  owner: string;
  lease_until: string;
}

export interface MigrationsTable {
  version: number;
  name: string;
  applied_at: string;
}
