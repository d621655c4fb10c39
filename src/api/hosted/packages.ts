// Team Packages: the Package object, create / update / expiry bodies, the
// paged /v1.1 list and bulk archive.
import { Type, type Static } from 'typebox';
import { TagRef, TagSummary, TeamParams } from './tags.js';

export { TeamParams };

const NoNul = '^[^\\u0000]*$';
const Email = Type.String({ format: 'email', maxLength: 254 });
const DateTime = Type.String({ format: 'date-time' });

export const PackageState = Type.Union([
  Type.Literal('new'),
  Type.Literal('finalized'),
  Type.Literal('expired'),
  Type.Literal('archived'),
]);
export type PackageState = Static<typeof PackageState>;

/** Shown instead of a Package's download password; sending it back keeps the password. */
export const PASSWORD_MASK = '********';

export const Package = Type.Object({
  id: Type.String(),
  name: Type.String(),
  description: Type.String(),
  sender: Type.String(),
  recipients: Type.Array(Type.String()),
  state: PackageState,
  size: Type.Integer(),
  total_files: Type.Integer(),
  /** Default access limit of new Links; 0 when unlimited. */
  access_limit: Type.Integer(),
  /** "" when none, else the mask. */
  password: Type.String(),
  access_token: Type.String(),
  contains_virus: Type.Boolean(),
  custom_expiry: Type.Boolean(),
  custom_metadata_id: Type.Union([Type.String(), Type.Null()]),
  expiry: Type.Union([Type.String(), Type.Null()]),
  unlimited_storage: Type.Boolean(),
  /** name is absent when the Teamspace was deleted. */
  teamspace: Type.Union([Type.Object({ id: Type.String(), name: Type.Optional(Type.String()) }), Type.Null()]),
  chunk_size: Type.Integer(),
  created_at: Type.String(),
  updated_at: Type.String(),
  tag: Type.Union([TagSummary, Type.Null()]),
});
export type Package = Static<typeof Package>;

const Name = Type.String({ minLength: 1, maxLength: 255, pattern: NoNul });
const Description = Type.String({ maxLength: 10_000, pattern: NoNul });
const Recipients = Type.Array(Email, { maxItems: 1000 });
const AccessLimit = Type.Integer({ minimum: 0, maximum: 1_000_000 });
const Password = Type.String({ maxLength: 200, pattern: NoNul });
/** 0 (the default) or within the chunk limits of /v1/system/packages/spec (checked by the service). */
const ChunkSize = Type.Integer({ minimum: 0 });

export const CreatePackageBody = Type.Object({
  name: Name,
  description: Description,
  recipients: Recipients,
  access_limit: Type.Optional(AccessLimit),
  password: Type.Optional(Password),
  tag: Type.Optional(TagRef),
  unlimited_storage: Type.Optional(Type.Boolean()),
  chunk_size: Type.Optional(ChunkSize),
  teamspace_id: Type.Optional(Type.String({ maxLength: 100 })),
});
export type CreatePackageBody = Static<typeof CreatePackageBody>;

/** The complete Package object; read-only fields are ignored. Omitting tag removes it. */
export const UpdatePackageBody = Type.Object({
  name: Name,
  description: Type.Optional(Description),
  recipients: Type.Optional(Recipients),
  access_limit: Type.Optional(AccessLimit),
  password: Type.Optional(Password),
  tag: Type.Optional(Type.Union([TagRef, Type.Null()])),
  unlimited_storage: Type.Optional(Type.Boolean()),
  chunk_size: Type.Optional(ChunkSize),
});
export type UpdatePackageBody = Static<typeof UpdatePackageBody>;

export const ExpiryBody = Type.Object({
  expiry: Type.Optional(DateTime),
  unlimited_storage: Type.Optional(Type.Boolean({ default: false })),
});
export type ExpiryBody = Static<typeof ExpiryBody>;

export const PackageParams = Type.Object({ package_id: Type.String({ maxLength: 100 }) });

export const BulkArchiveBody = Type.Object({ expiry_start: DateTime, expiry_end: DateTime });
export type BulkArchiveBody = Static<typeof BulkArchiveBody>;
export const BulkArchiveResult = Type.Object({ count: Type.Integer() });
export type BulkArchiveResult = Static<typeof BulkArchiveResult>;

export const SORT_FIELDS = ['name', 'created_at', 'size', 'usage_total_bytes', 'expiry', 'sender', 'status', 'teamspace_id'] as const;
export type SortField = (typeof SORT_FIELDS)[number];
export const STATES = ['new', 'finalized', 'expired', 'archived'] as const;

const oneState = `(${STATES.join('|')})`;
/** A date (YYYY-MM-DD) or a date-time. */
const DateOrTime = Type.Union([Type.String({ format: 'date' }), DateTime]);
const IdList = Type.String({ maxLength: 4000 });

export const PackageListQuery = Type.Object({
  /** Bounded so that the row offset stays an exact integer for the database. */
  page: Type.Integer({ minimum: 1, maximum: 1_000_000, default: 1 }),
  limit: Type.Integer({ minimum: 1, maximum: 50, default: 50 }),
  sort: Type.Optional(Type.String({ pattern: `^-?(${SORT_FIELDS.join('|')})$` })),
  /** Repeated (`status=a&status=b`) or comma-separated; default finalized and expired. */
  status: Type.Optional(Type.Array(Type.String({ pattern: `^${oneState}(,${oneState})*$` }), { maxItems: 10 })),
  name: Type.Optional(Type.String({ maxLength: 255 })),
  sender: Type.Optional(Type.String({ maxLength: 254 })),
  tags: Type.Optional(IdList),
  created_at_start: Type.Optional(DateOrTime),
  created_at_end: Type.Optional(DateOrTime),
  teamspaces: Type.Optional(IdList),
  expiry_start: Type.Optional(DateTime),
  expiry_end: Type.Optional(DateTime),
  extra_storage: Type.Optional(Type.Boolean()),
});
export type PackageListQuery = Static<typeof PackageListQuery>;

export const PackageListPage = Type.Object({
  metadata: Type.Object({ total: Type.Integer(), page: Type.Integer(), limit: Type.Integer() }),
  records: Type.Array(Package),
});
export type PackageListPage = Static<typeof PackageListPage>;
