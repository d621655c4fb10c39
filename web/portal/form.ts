// The Portal's custom metadata form as page fields, and the response body the
// service takes: `{field_name: {value}}`. Fields of type package_name,
// package_description and sender_email stand in for the page's own fields.
import type { FormField } from '../../src/api/hosted/forms.js';

const INPUT_TYPES: Record<string, string> = {
  short_text: 'text', package_name: 'text', number: 'number', url: 'url', email: 'email', sender_email: 'email', date: 'date',
};

let seq = 0;

function h<K extends keyof HTMLElementTagNameMap>(tag: K, props: Record<string, unknown> = {}, ...kids: (Node | string)[]): HTMLElementTagNameMap[K] {
  const el = document.createElement(tag);
  for (const [k, v] of Object.entries(props)) if (v !== undefined && v !== false) (k in el ? ((el as unknown as Record<string, unknown>)[k] = v) : el.setAttribute(k, String(v)));
  el.append(...kids);
  return el;
}

export interface RenderedField {
  field: FormField;
  el: HTMLElement;
  /** The value to send: a string, or the ticked options of a checkbox field. */
  value(): string | string[];
  /** What is missing, or undefined. */
  problem(): string | undefined;
  showError(message: string | undefined): void;
}

/** One field with its label, hint and error line. */
export function renderField(f: FormField): RenderedField {
  const id = `f${++seq}-${f.name.replace(/[^A-Za-z0-9_-]/g, '')}`;
  const required = f.visibility === 'required';
  const readOnly = f.visibility === 'readonly';
  const err = h('span', { className: 'err', id: `${id}-err` });
  const label = `${f.label}${required || readOnly ? '' : ' (optional)'}`;
  const described = `${id}-err`;
  let value: () => string | string[];
  let control: HTMLElement;
  const opts = f.options ?? [];
  if (f.type === 'checkbox' || f.type === 'radio') {
    const boxes = opts.map((o, i) =>
      h('input', { type: f.type, name: id, value: o, id: `${id}-${i}`, checked: f.default_value === o || (f.type === 'checkbox' && (f.default_value ?? '').split(',').includes(o)), disabled: readOnly }),
    );
    control = h('fieldset', { className: 'field', 'aria-describedby': described },
      h('legend', {}, label),
      ...boxes.map((b, i) => h('label', { className: 'choice', htmlFor: b.id }, b, opts[i]!)),
      err);
    value = () => (f.type === 'checkbox' ? boxes.filter((b) => b.checked).map((b) => b.value) : (boxes.find((b) => b.checked)?.value ?? ''));
  } else {
    let input: HTMLInputElement | HTMLTextAreaElement | HTMLSelectElement;
    if (f.type === 'dropdown') {
      input = h('select', { id, required, disabled: readOnly, 'aria-describedby': described },
        h('option', { value: '' }, required ? 'Choose…' : '(none)'), ...opts.map((o) => h('option', { value: o, selected: f.default_value === o }, o)));
    } else if (f.type === 'long_text' || f.type === 'package_description') {
      input = h('textarea', { id, rows: 3, required, readOnly, value: f.default_value ?? '', 'aria-describedby': described });
    } else {
      input = h('input', { id, type: INPUT_TYPES[f.type] ?? 'text', required, readOnly, value: f.default_value ?? '', 'aria-describedby': described });
    }
    control = h('div', { className: 'field' }, h('label', { htmlFor: id }, label), input, err);
    value = () => input.value.trim();
  }
  const showError = (m: string | undefined) => {
    err.textContent = m ?? '';
  };
  const problem = () => {
    const v = value();
    if (required && (Array.isArray(v) ? v.length === 0 : v === '')) return `${f.label} is required`;
    const input = control.querySelector('input:not([type=checkbox]):not([type=radio])') as HTMLInputElement | null;
    if (input && input.value !== '' && !input.validity.valid) return `${f.label}: ${input.validationMessage}`;
    return undefined;
  };
  return { field: f, el: control, value, problem, showError };
}

/** The fields an uploader fills in, in the Portal's order; hidden ones are not shown but still sent. */
export function visibleFields(fields: FormField[]): FormField[] {
  return [...fields].sort((a, b) => (a.position ?? 0) - (b.position ?? 0)).filter((f) => f.visibility !== 'hidden');
}

/** The response body: every field the form has (hidden ones with their default). */
export function responseBody(fields: FormField[], rendered: RenderedField[]): Record<string, { value: string | string[] }> {
  const out: Record<string, { value: string | string[] }> = {};
  for (const f of fields) {
    const r = rendered.find((x) => x.field === f);
    const v = r ? r.value() : (f.default_value ?? '');
    if (Array.isArray(v) ? v.length > 0 : v !== '') out[f.name] = { value: v };
  }
  return out;
}

export { h };
