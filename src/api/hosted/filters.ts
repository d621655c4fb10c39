// Filters: rules that narrow which files of a Package a cloud connection
// delivers. The filter object and its create / update bodies.
import { Type, type Static } from 'typebox';
import { TeamParams } from './tags.js';

export { TeamParams };

const NoNul = '^[^\\u0000]*$';

export const MAX_FILTER_RULES = 20;

/**
 * file_name: the file's name; file_path (an addition): its relative path in the
 * Package with the name, "folder/sub/name.ext" ("name.ext" at the top).
 */
export const FILTER_CRITERIA = ['file_name', 'file_path'] as const;
export type FilterCriterion = (typeof FILTER_CRITERIA)[number];

export const FilterRule = Type.Object({
  /** include: a file must match; exclude: a file must not match. */
  action: Type.Union([Type.Literal('include'), Type.Literal('exclude')]),
  criterion: Type.Union([Type.Literal('file_name'), Type.Literal('file_path')]),
  operator: Type.Literal('regex_match'),
  /** Regular expressions (RE2 syntax); a file matches the rule when any of them is found in it. */
  values: Type.Array(Type.String({ minLength: 1, maxLength: 500, pattern: NoNul }), { minItems: 1, maxItems: 50 }),
});
export type FilterRule = Static<typeof FilterRule>;

const Rules = Type.Array(FilterRule, { minItems: 1, maxItems: MAX_FILTER_RULES });

export const Filter = Type.Object({
  id: Type.String(),
  name: Type.String(),
  rules: Type.Array(FilterRule),
  created_at: Type.String(),
  updated_at: Type.String(),
});
export type Filter = Static<typeof Filter>;

export const CreateFilterBody = Type.Object({
  name: Type.String({ minLength: 1, maxLength: 255, pattern: NoNul }),
  rules: Rules,
});
export type CreateFilterBody = Static<typeof CreateFilterBody>;

/** rules replace the filter's rules whole; an omitted name is kept. */
export const UpdateFilterBody = Type.Object({
  name: Type.Optional(Type.String({ minLength: 1, maxLength: 255, pattern: NoNul })),
  rules: Rules,
});
export type UpdateFilterBody = Static<typeof UpdateFilterBody>;

export const FilterParams = Type.Object({ filter_id: Type.String({ maxLength: 100 }) });
