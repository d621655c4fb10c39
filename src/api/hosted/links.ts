// Wire shapes of Links: making and listing them (uploader side) and resolving
// one (recipient side, the first step of the download flow).
import { Type, type Static } from 'typebox';

export const LinkParams = Type.Object({ link_id: Type.String({ minLength: 1, maxLength: 64 }) });
export type LinkParams = Static<typeof LinkParams>;

export const CreateLinkBody = Type.Object({
  email: Type.Optional(Type.String({ format: 'email', maxLength: 254 })),
  /** Omitted: the Package's access_limit; null: unlimited. */
  access_limit: Type.Optional(Type.Union([Type.Integer({ minimum: 1, maximum: 1_000_000_000 }), Type.Null()])),
  /** Must lie in the future; omitted or null: the Link lives as long as its Package. */
  expiry: Type.Optional(Type.Union([Type.String({ format: 'date-time' }), Type.Null()])),
  /** Omitted: the Package's password; empty string: no password. */
  password: Type.Optional(Type.String({ maxLength: 1024 })),
  active: Type.Optional(Type.Boolean()),
});
export type CreateLinkBody = Static<typeof CreateLinkBody>;

export const LinkObject = Type.Object({
  id: Type.String(),
  package_id: Type.String(),
  email: Type.Union([Type.String(), Type.Null()]),
  expiry: Type.Union([Type.String(), Type.Null()]),
  /** Whether the Link asks for a password (X-Link-Password). */
  locked: Type.Boolean(),
  access_limit: Type.Union([Type.Integer(), Type.Null()]),
  access_count: Type.Integer(),
  active: Type.Boolean(),
  created_at: Type.String(),
});
export type LinkObject = Static<typeof LinkObject>;

/** The create answer is the only place the secret (and so the url) appears. */
export const CreatedLink = Type.Object({
  ...LinkObject.properties,
  secret: Type.String(),
  url: Type.String(),
});
export type CreatedLink = Static<typeof CreatedLink>;

export const LinkList = Type.Array(LinkObject);

export const ResolveLinkQuery = Type.Object({ secret: Type.Optional(Type.String({ maxLength: 256 })) });
export type ResolveLinkQuery = Static<typeof ResolveLinkQuery>;

/** The Link page (`/l/{id}`): `after` shows the files after that place (the `next` of the page before). */
export const LinkPageQuery = Type.Object({
  ...ResolveLinkQuery.properties,
  after: Type.Optional(Type.String({ minLength: 1, maxLength: 16_384, pattern: '^[A-Za-z0-9_-]+$' })),
});
export type LinkPageQuery = Static<typeof LinkPageQuery>;

export const LinkInfo = Type.Object({
  branding: Type.Object({ primary_color: Type.String() }),
  /** The earlier of the Link's and the Package's expiry; null when neither expires. */
  expiry: Type.Union([Type.String(), Type.Null()]),
  id: Type.String(),
  name: Type.String(),
  package_id: Type.String(),
  package_size: Type.Integer(),
  /** How many files the Package holds (folders not counted); an addition, absent from services without it. */
  total_files: Type.Optional(Type.Integer()),
  /** Read-only package token: list files, get download URLs. */
  package_token: Type.String(),
  recipient_email: Type.Union([Type.String(), Type.Null()]),
  sender_email: Type.String(),
  /** The sender's message (the Package's description); an addition to the spec's Link info, absent from services without it. */
  description: Type.Optional(Type.String()),
});
export type LinkInfo = Static<typeof LinkInfo>;
