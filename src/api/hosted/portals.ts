// Portals: hosted upload pages of a Team. The Portal object, its create/update
// body, the paged /v1.1 list, the public view by subdomain and the body that
// creates a Package through a Portal.
import { Type, type Static, type TSchema } from 'typebox';
import { TagRef, TagSummary, TeamParams } from './tags.js';
import { WebhookRef } from './customWebhooks.js';
import { PortalCloudConnection } from './cloudConnections.js';
import { FormField, TermsOfService } from './forms.js';

export { TeamParams };

const NoNul = '^[^\\u0000]*$';
const Email = Type.String({ format: 'email', maxLength: 254 });
const Nullable = <T extends TSchema>(t: T) => Type.Union([t, Type.Null()]);

/** A DNS label (letters are lower-cased by the service). */
export const SUBDOMAIN_PATTERN = '^[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?$';

export const AccessLevel = Type.Union([Type.Literal('regular'), Type.Literal('private')]);

export const Portal = Type.Object({
  id: Type.String(),
  team_id: Type.String(),
  name: Type.String(),
  subdomain: Type.String(),
  message: Type.String(),
  /** The code itself is never returned. */
  has_access_code: Type.Boolean(),
  active: Type.Boolean(),
  recipients: Type.Array(Type.String()),
  /** The password itself is never returned. */
  has_download_password: Type.Boolean(),
  /** 0: the Team's default; -1: kept until deleted; else days after finalization. */
  custom_expiry_days: Type.Integer(),
  tag: Nullable(TagSummary),
  access_level: AccessLevel,
  /** The Teamspace its Packages join; null for none. */
  teamspace_id: Nullable(Type.String()),
  package_size_restriction_enabled: Type.Boolean(),
  max_package_size: Nullable(Type.Integer()),
  max_file_size: Nullable(Type.Integer()),
  max_file_count: Nullable(Type.Integer()),
  file_type_restriction_enabled: Type.Boolean(),
  file_types: Type.Array(Type.String()),
  expiry_enabled: Type.Boolean(),
  expiry: Nullable(Type.String()),
  /** '' when names are free. */
  package_name_format: Type.String(),
  user_authentication_required: Type.Boolean(),
  /** The custom webhooks attached: they receive the events of the Portal's Packages. */
  custom_webhooks: Type.Array(WebhookRef),
  /** The cloud connections each finalized Package is delivered to, in order. */
  cloud_connections: Type.Array(PortalCloudConnection),
  terms_of_service_enabled: Type.Boolean(),
  /** {title, text}; null when never set. */
  terms_of_service: Nullable(TermsOfService),
  /** The enabled form's fields as uploaders see them (hidden ones left out), by position; [] without one. */
  custom_metadata: Type.Array(FormField),
  /** Whether a Package needs form_data_id: the Portal has an enabled form. */
  custom_metadata_required: Type.Boolean(),
  created_at: Type.String(),
  updated_at: Type.String(),
});
export type Portal = Static<typeof Portal>;

const Limit = Nullable(Type.Integer({ minimum: 1, maximum: Number.MAX_SAFE_INTEGER }));
const Secret = Type.String({ minLength: 1, maxLength: 200, pattern: NoNul });

/** Every settable field but name and subdomain, all optional. */
const PortalSettings = {
  message: Type.Optional(Type.String({ maxLength: 10_000, pattern: NoNul })),
  has_access_code: Type.Optional(Type.Boolean()),
  access_code: Type.Optional(Secret),
  active: Type.Optional(Type.Boolean()),
  recipients: Type.Optional(Type.Array(Email, { maxItems: 1000 })),
  has_download_password: Type.Optional(Type.Boolean()),
  download_password: Type.Optional(Secret),
  custom_expiry_days: Type.Optional(Type.Integer({ minimum: -1, maximum: 65535 })),
  tag: Type.Optional(Nullable(TagRef)),
  access_level: Type.Optional(AccessLevel),
  /** A Teamspace of the Team, or null (or '') for none; omitted: unchanged. */
  teamspace_id: Type.Optional(Nullable(Type.String({ maxLength: 100 }))),
  package_size_restriction_enabled: Type.Optional(Type.Boolean()),
  max_package_size: Type.Optional(Limit),
  max_file_size: Type.Optional(Limit),
  max_file_count: Type.Optional(Limit),
  file_type_restriction_enabled: Type.Optional(Type.Boolean()),
  /** Extensions with a leading dot, e.g. ".mov"; compared case-insensitively. */
  file_types: Type.Optional(Type.Array(Type.String({ pattern: '^\\.[^\\u0000/\\\\]{1,31}$' }), { maxItems: 200 })),
  expiry_enabled: Type.Optional(Type.Boolean()),
  expiry: Type.Optional(Nullable(Type.String({ format: 'date-time' }))),
  /** A JavaScript regular expression (checked by the service); '' for none. */
  package_name_format: Type.Optional(Type.String({ maxLength: 500, pattern: NoNul })),
  user_authentication_required: Type.Optional(Type.Boolean()),
  /** The complete list of webhooks to keep attached (others are detached); omitted: unchanged. */
  custom_webhooks: Type.Optional(Type.Array(WebhookRef, { maxItems: 100 })),
  /** true: cloud_connections (required then) is the complete list to keep; otherwise cloud_connections is ignored. */
  configure_cloud_connections: Type.Optional(Type.Boolean()),
  cloud_connections: Type.Optional(Type.Array(PortalCloudConnection, { maxItems: 50 })),
  /** true needs terms_of_service (given now or kept from before). */
  terms_of_service_enabled: Type.Optional(Type.Boolean()),
  terms_of_service: Type.Optional(Nullable(TermsOfService)),
};

/** Create, and the complete object of an update (read-only fields are ignored). */
export const PortalBody = Type.Object({
  name: Type.String({ minLength: 1, maxLength: 255, pattern: NoNul }),
  subdomain: Type.String({ minLength: 1, maxLength: 63, pattern: SUBDOMAIN_PATTERN }),
  ...PortalSettings,
});
export type PortalBody = Static<typeof PortalBody>;

export const PortalParams = Type.Object({ portal_id: Type.String({ maxLength: 100 }) });
export const SubdomainParams = Type.Object({ subdomain: Type.String({ maxLength: 253 }) });

export const PORTAL_SORT_FIELDS = ['name', 'created_at', 'active'] as const;
export type PortalSortField = (typeof PORTAL_SORT_FIELDS)[number];

export const PortalListQuery = Type.Object({
  page: Type.Integer({ minimum: 1, maximum: 1_000_000, default: 1 }),
  limit: Type.Integer({ minimum: 1, maximum: 50, default: 50 }),
  sort: Type.Optional(Type.String({ pattern: `^-?(${PORTAL_SORT_FIELDS.join('|')})$` })),
  name: Type.Optional(Type.String({ maxLength: 255 })),
  subdomain: Type.Optional(Type.String({ maxLength: 63 })),
  /** Comma-separated tag ids. */
  tags: Type.Optional(Type.String({ maxLength: 4000 })),
  /** Comma-separated Teamspace ids. */
  teamspaces: Type.Optional(Type.String({ maxLength: 4000 })),
});
export type PortalListQuery = Static<typeof PortalListQuery>;

export const PortalListPage = Type.Object({
  metadata: Type.Object({ total: Type.Integer(), page: Type.Integer(), limit: Type.Integer() }),
  records: Type.Array(Portal),
});
export type PortalListPage = Static<typeof PortalListPage>;

/** The limits an uploader must respect; a key is present only when it is enforced. */
export const PortalRestrictions = Type.Object({
  max_package_size: Type.Optional(Type.Integer()),
  max_file_size: Type.Optional(Type.Integer()),
  max_file_count: Type.Optional(Type.Integer()),
  file_types: Type.Optional(Type.Array(Type.String())),
  package_name_format: Type.Optional(Type.String()),
});
export type PortalRestrictions = Static<typeof PortalRestrictions>;

/** GET /v1/subdomains/portals/{subdomain}: what an uploader holding only the subdomain needs. */
export const PublicPortal = Type.Object({
  id: Type.String(),
  name: Type.String(),
  subdomain: Type.String(),
  message: Type.String(),
  has_access_code: Type.Boolean(),
  user_authentication_required: Type.Boolean(),
  /** The enabled form's fields as uploaders see them (hidden ones left out), by position; [] without one. */
  custom_metadata: Type.Array(FormField),
  /** Whether a Package needs form_data_id (a response to the form, even one with no visible field). */
  custom_metadata_required: Type.Boolean(),
  terms_of_service_enabled: Type.Boolean(),
  /** The terms an uploader must accept (terms_accepted: true); null when not enabled. */
  terms_of_service: Nullable(TermsOfService),
  restrictions: PortalRestrictions,
});
export type PublicPortal = Static<typeof PublicPortal>;

/** GET /v1/portals/{id}: the full Portal for a member of its Team, the public view for an access-code holder. */
export const PortalOrPublic = Type.Union([Portal, PublicPortal]);

/** POST /v1/portals/{portal_id}/packages. */
export const CreatePortalPackageBody = Type.Object({
  /** name, description and sender are required unless the form response answers them (its answers win). */
  name: Type.Optional(Type.String({ minLength: 1, maxLength: 255, pattern: NoNul })),
  description: Type.Optional(Type.String({ maxLength: 10_000, pattern: NoNul })),
  sender: Type.Optional(Email),
  /** 0 (the default) or within the chunk limits of /v1/system/packages/spec. */
  chunk_size: Type.Optional(Type.Integer({ minimum: 0 })),
  /** A response to the Portal's form (POST /v1/portals/{id}/form/responses); required while the form is enabled. */
  form_data_id: Type.Optional(Type.String({ maxLength: 100 })),
  /** Must be true when the Portal has terms of service. */
  terms_accepted: Type.Optional(Type.Boolean()),
});
export type CreatePortalPackageBody = Static<typeof CreatePortalPackageBody>;
