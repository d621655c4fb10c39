// Custom metadata forms: the form a Portal's uploaders fill in, the Team's
// templates, a form response, and the fields as an uploader sees them.
import { Type, type Static } from 'typebox';

/** No C0 control character but tab, LF and CR: every value must fit in XML 1.0. */
const PLAIN = '^[^\\u0000-\\u0008\\u000B\\u000C\\u000E-\\u001F]*$';
/** One line of text. */
const LINE = '^[^\\u0000-\\u001F]*$';

export const FIELD_TYPES = [
  'checkbox', 'radio', 'dropdown', 'date', 'short_text', 'long_text', 'number', 'url', 'email',
  'package_name', 'package_description', 'sender_email',
] as const;
export type FieldType = (typeof FIELD_TYPES)[number];
/** Types whose value is chosen among `options`. */
export const CHOICE_TYPES: readonly FieldType[] = ['checkbox', 'radio', 'dropdown'];
/** Types that feed the Package created with the response: at most one of each per form. */
export const PACKAGE_TYPES: readonly FieldType[] = ['package_name', 'package_description', 'sender_email'];

export const VISIBILITIES = ['required', 'optional', 'readonly', 'hidden'] as const;
export type Visibility = (typeof VISIBILITIES)[number];

export const DELIVERY_FORMATS = ['json', 'csv', 'xml', 'email_body'] as const;
export type DeliveryFormat = (typeof DELIVERY_FORMATS)[number];

const literals = <T extends readonly string[]>(values: T) => Type.Enum([...values] as T[number][]);

/** A field name: a key of the response body, a CSV column, an XML attribute. */
export const FIELD_NAME_PATTERN = '^[A-Za-z0-9_][A-Za-z0-9_.-]{0,99}$';

export const FormField = Type.Object({
  name: Type.String({ pattern: FIELD_NAME_PATTERN, maxLength: 100 }),
  label: Type.String({ minLength: 1, maxLength: 500, pattern: LINE }),
  type: literals(FIELD_TYPES),
  visibility: literals(VISIBILITIES),
  default_value: Type.String({ maxLength: 10_000, pattern: PLAIN }),
  position: Type.Integer({ minimum: 0, maximum: 1_000_000 }),
  options: Type.Array(Type.String({ minLength: 1, maxLength: 255, pattern: LINE })),
});
export type FormField = Static<typeof FormField>;

/** A field as written: default_value, position and options may be left out. */
export const FormFieldInput = Type.Object({
  name: FormField.properties.name,
  label: FormField.properties.label,
  type: FormField.properties.type,
  visibility: FormField.properties.visibility,
  default_value: Type.Optional(FormField.properties.default_value),
  /** Render order, ascending; defaults to the field's index in the list. */
  position: Type.Optional(FormField.properties.position),
  options: Type.Optional(Type.Array(FormField.properties.options.items, { maxItems: 100 })),
});
export type FormFieldInput = Static<typeof FormFieldInput>;

const Name = Type.String({ minLength: 1, maxLength: 255, pattern: LINE });
/** Duplicates are dropped. */
const Formats = Type.Array(literals(DELIVERY_FORMATS), { minItems: 1, maxItems: 8 });
const Fields = Type.Array(FormFieldInput, { maxItems: 100 });

export const MetadataForm = Type.Object({
  id: Type.String(),
  team_id: Type.String(),
  portal_id: Type.String(),
  name: Type.String(),
  delivery_formats: Type.Array(literals(DELIVERY_FORMATS)),
  form_template_id: Type.Union([Type.String(), Type.Null()]),
  disabled: Type.Boolean(),
  fields: Type.Array(FormField),
  created_at: Type.String(),
  updated_at: Type.String(),
});
export type MetadataForm = Static<typeof MetadataForm>;

export const FormTemplate = Type.Object({
  id: Type.String(),
  team_id: Type.String(),
  name: Type.String(),
  delivery_formats: Type.Array(literals(DELIVERY_FORMATS)),
  disabled: Type.Boolean(),
  fields: Type.Array(FormField),
  created_at: Type.String(),
  updated_at: Type.String(),
});
export type FormTemplate = Static<typeof FormTemplate>;
export const FormTemplateList = Type.Array(FormTemplate);

/** POST /v1/portals/{portal_id}/form. Without fields, a template's fields are copied. */
export const CreateFormBody = Type.Object({
  name: Name,
  delivery_formats: Formats,
  form_template_id: Type.Optional(Type.String({ maxLength: 100 })),
  disabled: Type.Optional(Type.Boolean()),
  fields: Type.Optional(Fields),
});
export type CreateFormBody = Static<typeof CreateFormBody>;

/** PUT of a form or template, and POST of a template: omitted disabled / fields keep their value. */
export const UpdateFormBody = Type.Object({
  name: Name,
  delivery_formats: Formats,
  disabled: Type.Optional(Type.Boolean()),
  fields: Type.Optional(Fields),
});
export type UpdateFormBody = Static<typeof UpdateFormBody>;

export const FormParams = Type.Object({ form_id: Type.String({ maxLength: 100 }) });
export const TemplateParams = Type.Object({ form_template_id: Type.String({ maxLength: 100 }) });

/**
 * POST /v1/portals/{portal_id}/form/responses: keyed by field name, each `{value}`.
 * A value is a string; a number field also takes a JSON number, a checkbox field
 * an array of options (or one string of comma-separated options).
 */
export const FormResponseBody = Type.Record(Type.String({ maxLength: 100 }), Type.Object({ value: Type.Unknown() }), { maxProperties: 100 });
export type FormResponseBody = Static<typeof FormResponseBody>;

/** A stored value: string (text, choice, date, url, email), number or null (number), string[] (checkbox). */
export const FieldValue = Type.Union([Type.String(), Type.Number(), Type.Null(), Type.Array(Type.String())]);
export type FieldValue = Static<typeof FieldValue>;

export const FormResponse = Type.Object({
  id: Type.String(),
  portal_id: Type.String(),
  form_id: Type.String(),
  /** The Package that took the response (form_data_id); null until then. */
  package_id: Type.Union([Type.String(), Type.Null()]),
  created_at: Type.String(),
  /** Every field of the form as it was when the response was made, keyed by name. */
  data: Type.Record(Type.String(), Type.Object({ value: FieldValue, label: Type.String(), type: Type.String() })),
});
export type FormResponse = Static<typeof FormResponse>;

/** Portal terms of service. */
export const TermsOfService = Type.Object({
  title: Type.String({ minLength: 1, maxLength: 255, pattern: LINE }),
  text: Type.String({ minLength: 1, maxLength: 100_000, pattern: PLAIN }),
});
export type TermsOfService = Static<typeof TermsOfService>;
