// GET /v1.1/portals/{portal_id}/packages: the Packages received through one
// Portal, paged like the Team list. Ferry's additions: `status` (as on the Team
// list), `finalized_at_start` and the `finalized_at` sort, and each record's
// `portal_id` and `finalized_at`, so that a client can fetch what arrived after
// a given time (the agent's Portal download automations).
import { Type, type Static } from 'typebox';
import { Package, PackageListQuery } from './packages.js';

export const PORTAL_PACKAGE_SORT = '^-?(name|created_at|size|usage_total_bytes|expiry|sender|status|teamspace_id|finalized_at)$';

export const PortalPackageListQuery = Type.Object({
  ...PackageListQuery.properties,
  sort: Type.Optional(Type.String({ pattern: PORTAL_PACKAGE_SORT })),
  /** Only Packages finalized at or after this instant. */
  finalized_at_start: Type.Optional(Type.String({ format: 'date-time' })),
});
export type PortalPackageListQuery = Static<typeof PortalPackageListQuery>;

export const PortalPackage = Type.Object({
  ...Package.properties,
  portal_id: Type.String(),
  /** When the Package was finalized; null before. */
  finalized_at: Type.Union([Type.String(), Type.Null()]),
});
export type PortalPackage = Static<typeof PortalPackage>;

export const PortalPackageListPage = Type.Object({
  metadata: Type.Object({ total: Type.Integer(), page: Type.Integer(), limit: Type.Integer() }),
  records: Type.Array(PortalPackage),
});
export type PortalPackageListPage = Static<typeof PortalPackageListPage>;
