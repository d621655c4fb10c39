// The rules of form fields: a form's field list checked and completed on write,
// and one answer checked against its field's type (used for default values and
// for responses alike).
import type { FieldValue, FormField, FormFieldInput } from '../../api/hosted/forms.js';
import { CHOICE_TYPES, PACKAGE_TYPES } from '../../api/hosted/forms.js';
import { badRequest } from '../errors.js';

const EMAIL = /^[^\s@<>",;]+@[^\s@<>",;]+\.[^\s@<>",;]+$/;
const DATE = /^(\d{4})-(\d{2})-(\d{2})$/;
const NUMBER = /^-?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?$/;
/** Text limits per type (characters). */
const MAX_LENGTH: Partial<Record<FormField['type'], number>> = { short_text: 255, package_name: 255, email: 254, sender_email: 254, url: 2048, date: 10 };
const LONG_MAX = 10_000;

const isValidDate = (s: string) => {
  const m = DATE.exec(s);
  if (!m) return false;
  const d = new Date(Date.UTC(+m[1]!, +m[2]! - 1, +m[3]!));
  return d.getUTCFullYear() === +m[1]! && d.getUTCMonth() === +m[2]! - 1 && d.getUTCDate() === +m[3]!;
};

const isHttpUrl = (s: string) => {
  try {
    const u = new URL(s);
    return (u.protocol === 'http:' || u.protocol === 'https:') && u.hostname.length > 0;
  } catch {
    return false;
  }
};

/** A checkbox answer as the list of options checked: an array, or one comma-separated string. */
function checkboxList(raw: unknown): string[] | undefined {
  if (Array.isArray(raw)) return raw.every((v) => typeof v === 'string') ? raw.map((v) => v.trim()).filter(Boolean) : undefined;
  if (typeof raw === 'string') return raw.split(',').map((v) => v.trim()).filter(Boolean);
  return undefined;
}

/** The value stored when a field has none. */
export const emptyValue = (f: Pick<FormField, 'type'>): FieldValue => (f.type === 'checkbox' ? [] : f.type === 'number' ? null : '');

export const isEmpty = (v: FieldValue) => v === null || v === '' || (Array.isArray(v) && v.length === 0);

/**
 * Checks `raw` against the field's type; answers the value to store, or throws
 * 400 `invalid_field_value` naming the field. An empty answer is the empty value.
 */
export function fieldValue(f: Pick<FormField, 'name' | 'type' | 'options'>, raw: unknown): FieldValue {
  const bad = (why: string) => badRequest(`field "${f.name}": ${why}`, 'invalid_field_value');
  if (raw === null || raw === undefined) return emptyValue(f);
  if (f.type === 'checkbox') {
    const list = checkboxList(raw);
    if (!list) throw bad('a checkbox value is an array of options or a comma-separated string');
    for (const v of list) if (!f.options.includes(v)) throw bad(`"${v}" is not one of its options`);
    if (new Set(list).size !== list.length) throw bad('an option is checked twice');
    return f.options.filter((o) => list.includes(o)); // in the options' order
  }
  if (f.type === 'number' && typeof raw === 'number') {
    if (!Number.isFinite(raw)) throw bad('not a finite number');
    return raw;
  }
  if (typeof raw !== 'string') throw bad('the value must be a string');
  if (/[\u0000-\u0008\u000B\u000C\u000E-\u001F]/.test(raw)) throw bad('control characters are not allowed');
  const v = f.type === 'long_text' || f.type === 'package_description' ? raw : raw.trim();
  if (v === '') return emptyValue(f);
  if (v.length > (MAX_LENGTH[f.type] ?? LONG_MAX)) throw bad(`at most ${MAX_LENGTH[f.type] ?? LONG_MAX} characters`);
  switch (f.type) {
    case 'short_text':
    case 'package_name':
      if (/[\r\n\t]/.test(v)) throw bad('one line of text, without tabs');
      return v;
    case 'radio':
    case 'dropdown':
      if (!f.options.includes(v)) throw bad(`"${v}" is not one of its options`);
      return v;
    case 'date':
      if (!isValidDate(v)) throw bad('a date is written YYYY-MM-DD');
      return v;
    case 'number': {
      if (!NUMBER.test(v) || !Number.isFinite(Number(v))) throw bad('not a number');
      return Number(v);
    }
    case 'url':
      if (!isHttpUrl(v)) throw bad('not an http or https URL');
      return v;
    case 'email':
    case 'sender_email':
      if (!EMAIL.test(v)) throw bad('not an e-mail address');
      return v.toLowerCase();
    default:
      return v;
  }
}

/**
 * A form's field list on write: names unique (letter case ignored), options
 * required for choices and refused elsewhere (checkbox options without commas,
 * since a checkbox answer may be a comma list), at most one field of each
 * package type, default values valid for their type. Fields come back complete
 * and ordered by position (ties: the order given).
 */
export function normalizeFields(input: FormFieldInput[]): FormField[] {
  const names = new Set<string>();
  const packageTypes = new Set<string>();
  const out = input.map((f, i): FormField => {
    const key = f.name.toLowerCase();
    if (names.has(key)) throw badRequest(`field names must be unique: "${f.name}" is used twice`, 'duplicate_field_name');
    names.add(key);
    if (PACKAGE_TYPES.includes(f.type)) {
      if (packageTypes.has(f.type)) throw badRequest(`a form has at most one ${f.type} field`, 'duplicate_package_field');
      packageTypes.add(f.type);
    }
    const options = f.options ?? [];
    if (CHOICE_TYPES.includes(f.type)) {
      if (options.length === 0) throw badRequest(`field "${f.name}": a ${f.type} field needs options`, 'options_required');
      if (new Set(options).size !== options.length) throw badRequest(`field "${f.name}": options must be unique`, 'invalid_options');
      if (f.type === 'checkbox' && options.some((o) => o.includes(','))) {
        throw badRequest(`field "${f.name}": checkbox options may not contain commas`, 'invalid_options');
      }
    } else if (options.length > 0) {
      throw badRequest(`field "${f.name}": only checkbox, radio and dropdown fields take options`, 'options_not_allowed');
    }
    const field: FormField = { name: f.name, label: f.label, type: f.type, visibility: f.visibility, default_value: f.default_value ?? '', position: f.position ?? i, options };
    if (field.default_value !== '') fieldValue(field, field.default_value); // 400 when the default could not be answered
    return field;
  });
  return out.map((f, i) => ({ f, i })).sort((a, b) => a.f.position - b.f.position || a.i - b.i).map(({ f }) => f);
}

/** The default value of a field as stored (it was checked on write). */
export const defaultOf = (f: FormField): FieldValue => fieldValue(f, f.default_value);
