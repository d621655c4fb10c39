// The error body every Ferry server answers with: `{code, message}` (plus
// `details` for validation failures). One schema for servers and clients.
import { Type, type Static } from 'typebox';

export const ErrorBody = Type.Object({
  code: Type.Union([Type.String(), Type.Integer()]),
  message: Type.String(),
  details: Type.Optional(Type.Array(Type.Object({ path: Type.String(), message: Type.String() }))),
});
export type ErrorBody = Static<typeof ErrorBody>;
