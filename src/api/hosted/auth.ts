// Sign-in and the caller's identity: POST /v1/auth, /v1/auth/refresh,
// /v1/auth/sign_out_everywhere, GET /v1/me, POST /v1/me/password.
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

/** The fewest characters of a password a user or `ferry admin` sets. */
export const MIN_PASSWORD_LENGTH = 8;

/** POST /v1/me/password: the new password ends every session but the one it answers. */
export const PasswordChangeBody = Type.Object({
  current_password: Type.String({ minLength: 1, maxLength: 1024 }),
  new_password: Type.String({ minLength: MIN_PASSWORD_LENGTH, maxLength: 1024 }),
});
export type PasswordChangeBody = Static<typeof PasswordChangeBody>;

/** `token` goes in X-User-Token; it is a signed JWT valid 12 hours (renewable, within the session's maximum). */
export const AuthAnswer = Type.Object({
  token: Type.String(),
  user: User,
});
export type AuthAnswer = Static<typeof AuthAnswer>;
