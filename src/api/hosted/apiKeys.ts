// API keys of a Team, managed with X-User-Token. The full secret (`key`) is
// answered only by the create route; every other answer shows it masked.
import { Type, type Static } from 'typebox';
import { User } from './auth.js';

const NoNul = '^[^\\u0000]*$';

export const ApiKeyState = Type.Union([Type.Literal('active'), Type.Literal('inactive')]);
export type ApiKeyState = Static<typeof ApiKeyState>;

export const ApiKey = Type.Object({
  id: Type.String(),
  name: Type.String(),
  description: Type.String(),
  key: Type.String(),
  expiry: Type.Union([Type.String(), Type.Null()]),
  state: ApiKeyState,
  last_request_at: Type.Union([Type.String(), Type.Null()]),
  created_at: Type.String(),
  updated_at: Type.String(),
  owner: User,
});
export type ApiKey = Static<typeof ApiKey>;

export const ApiKeyList = Type.Array(ApiKey);

const Name = Type.String({ minLength: 1, maxLength: 200, pattern: NoNul });
const Description = Type.String({ maxLength: 2000, pattern: NoNul });
/** A future date-time, or null for a key that never expires. */
const Expiry = Type.Union([Type.String({ format: 'date-time' }), Type.Null()]);

export const CreateApiKeyBody = Type.Object({
  name: Name,
  description: Type.Optional(Description),
  expiry: Type.Optional(Expiry),
  state: Type.Optional(ApiKeyState),
});
export type CreateApiKeyBody = Static<typeof CreateApiKeyBody>;

/** The owner as a user id, or as the `owner` object a GET answered (its id counts). */
const OwnerRef = Type.Union([
  Type.String({ minLength: 1, maxLength: 100 }),
  Type.Object({ id: Type.String({ minLength: 1, maxLength: 100 }) }),
]);

/** Fields left out are unchanged. */
export const UpdateApiKeyBody = Type.Object({
  name: Type.Optional(Name),
  description: Type.Optional(Description),
  expiry: Type.Optional(Expiry),
  state: Type.Optional(ApiKeyState),
  owner: Type.Optional(OwnerRef),
});
export type UpdateApiKeyBody = Static<typeof UpdateApiKeyBody>;

export const ApiKeyIdParams = Type.Object({ api_key_id: Type.String({ minLength: 1, maxLength: 100 }) });
export type ApiKeyIdParams = Static<typeof ApiKeyIdParams>;
