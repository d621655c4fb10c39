import { Type, type Static } from 'typebox';

export const PackagesSpec = Type.Object({
  max_chunk_count: Type.Integer(),
  max_chunk_size: Type.Integer(),
  min_chunk_size: Type.Integer(),
});
export type PackagesSpec = Static<typeof PackagesSpec>;
