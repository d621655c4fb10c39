// Tags: labels a Team puts on Packages and Portals.
import { Type, type Static } from 'typebox';

/** Printable names: no NUL bytes. */
const NoNul = '^[^\\u0000]*$';

export const Tag = Type.Object({
  id: Type.String(),
  name: Type.String(),
  team_id: Type.String(),
  active: Type.Boolean(),
  created_at: Type.String(),
  updated_at: Type.String(),
});
export type Tag = Static<typeof Tag>;

export const CreateTagBody = Type.Object({
  name: Type.String({ minLength: 1, maxLength: 100, pattern: NoNul }),
});
export type CreateTagBody = Static<typeof CreateTagBody>;

/**
 * A tag as accepted on a Package or Portal: id and/or name. A known id wins; else
 * the name is used (the tag is created when missing); an unknown id alone is ignored.
 */
export const TagRef = Type.Object({
  id: Type.Optional(Type.String({ maxLength: 100 })),
  name: Type.Optional(Type.String({ minLength: 1, maxLength: 100, pattern: NoNul })),
});
export type TagRef = Static<typeof TagRef>;

/** The tag as shown on a Package. */
export const TagSummary = Type.Object({ id: Type.String(), name: Type.String() });
export type TagSummary = Static<typeof TagSummary>;

export const TeamParams = Type.Object({ team_id: Type.String({ maxLength: 100 }) });
export const TagParams = Type.Object({ tag_id: Type.String({ maxLength: 100 }) });
