import { Type, type Static } from 'typebox';

/** A ready-made HTTP request against object storage; send it exactly as given. */
export const Blueprint = Type.Object({
  url: Type.String(),
  method: Type.Union([Type.Literal('GET'), Type.Literal('POST'), Type.Literal('PUT'), Type.Literal('DELETE')]),
  headers: Type.Record(Type.String(), Type.String()),
  body: Type.String(),
});
export type Blueprint = Static<typeof Blueprint>;
