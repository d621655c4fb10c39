// Sign-in and the caller's identity: POST /v1/auth, GET /v1/me.
import { Type, type Static } from 'typebox';

export const User = Type.Object({
  id: Type.String(),
  email: Type.String(),
  name: Type.String(),
});
export type User = Static<typeof User>;

export const AuthBody = Type.Object({
  email: Type.String({ format: 'email', maxLength: 254 }),
  password: Type.String({ minLength: 1, maxLength: 1024 }),
});
export type AuthBody = Static<typeof AuthBody>;

/** `token` goes in X-User-Token; it is a signed JWT valid 12 hours. */
export const AuthAnswer = Type.Object({
  token: Type.String(),
  user: User,
});
export type AuthAnswer = Static<typeof AuthAnswer>;
