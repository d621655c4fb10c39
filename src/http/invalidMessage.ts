// A schema error in words a person reads, and the field it belongs to. Ajv's own
// text names JSON paths ("request/recipients/0 must match format "email"") and,
// for a union (the automation kinds), the branch that did not apply ("request/type
// must be equal to constant"). The error kept is the deepest one that is not the
// union's own or a discriminator's; the field is its path without the leading
// slash (`recipients/0`, `fields/recipients/0`), so a form can put the message
// beside the input that can fix it.
import type { ErrorObject } from 'ajv';
import { TIME_PATTERN } from '../format/rateSchedule.js';

export interface Invalid { message: string; field?: string }

const UNION = new Set(['anyOf', 'oneOf', 'if', 'not']);

/** The value at a JSON pointer of the request, for quoting it back. */
function valueAt(root: unknown, pointer: string): unknown {
  let v = root;
  for (const seg of pointer.split('/').slice(1)) {
    if (v === null || typeof v !== 'object') return undefined;
    v = (v as Record<string, unknown>)[seg.replace(/~1/g, '/').replace(/~0/g, '~')];
  }
  return v;
}

/** Fields as the app's forms name them; others are their name in words (`team_id` → "Team id"). */
const LABELS: Record<string, string> = {
  url: 'The Link', hosted_url: 'The server', delete_after: 'Expiry (days)', dst_folder: 'The destination folder', root_path: 'The folder',
  path: 'The folder', paths: 'What to send', recipients: 'Recipients', recipient_emails: 'Recipients', package_name: 'Package name',
  package_description: 'Description', id: 'The connection ID', listen: 'The local API address', local_api_key: 'The local API key', chunk_size: 'Chunk size',
  fifo: 'FIFO mode', max_active_uploads: 'Uploads at once', max_active_downloads: 'Downloads at once', connections_per_transfer: 'Connections per transfer',
};

/** `fields/recipients/0` → "Recipients"; `dst_folder` → "The destination folder"; `closeToTray` → "Close to tray". */
function labelOf(field: string | undefined): string {
  const name = field?.split('/').filter((s) => !/^\d+$/.test(s)).pop();
  if (!name) return 'The request';
  if (LABELS[name]) return LABELS[name];
  const words = name.replace(/_/g, ' ').replace(/([a-z])([A-Z])/g, (_, a: string, b: string) => `${a} ${b.toLowerCase()}`);
  return words[0]!.toUpperCase() + words.slice(1);
}

const quote = (v: unknown) => (typeof v === 'string' ? `"${v.length > 60 ? `${v.slice(0, 57)}…` : v}"` : JSON.stringify(v));

const TYPES: Record<string, string> = {
  integer: 'a whole number', number: 'a number', string: 'text', boolean: 'true or false', array: 'a list', object: 'an object', null: 'empty',
};

function words(e: ErrorObject, label: string, value: unknown): string {
  const p = e.params as Record<string, unknown>;
  switch (e.keyword) {
    case 'required':
      return `${label} is missing.`;
    case 'format':
      if (p.format === 'email') return `${quote(value)} is not an email address.`;
      if (p.format === 'uri' || p.format === 'url') return `${label}: ${quote(value)} is not a web address (like https://ferry.example.com).`;
      if (p.format === 'date-time') return `${label}: ${quote(value)} is not a date and time (like 2026-05-01T12:00:00Z).`;
      return `${label}: ${quote(value)} is not a valid ${String(p.format)}.`;
    case 'pattern':
      if (/https\?/.test(String(p.pattern))) return `${label}: ${quote(value)} is not a web address (like https://ferry.example.com).`;
      if (String(p.pattern).startsWith('^[A-Za-z0-9_-]')) return `${label} holds letters, digits, - and _ only.`;
      if (p.pattern === TIME_PATTERN) return `${label}: ${quote(value)} is not a time of day from 00:00 to 23:59 (like 09:00).`;
      return `${label}: ${quote(value)} is not in the expected form.`;
    case 'minLength':
      return p.limit === 1 ? `${label} is empty.` : `${label} is shorter than ${String(p.limit)} characters.`;
    case 'maxLength':
      return `${label} is longer than ${String(p.limit)} characters.`;
    case 'minimum':
    case 'exclusiveMinimum':
      return `${label} is ${e.keyword === 'minimum' ? 'at least' : 'more than'} ${String(p.limit)}.`;
    case 'maximum':
    case 'exclusiveMaximum':
      return `${label} is ${e.keyword === 'maximum' ? 'at most' : 'less than'} ${String(p.limit)}.`;
    case 'minItems':
      return p.limit === 1 ? `${label} needs at least one.` : `${label} needs at least ${String(p.limit)}.`;
    case 'maxItems':
      return `${label} holds at most ${String(p.limit)}.`;
    case 'uniqueItems':
      return `${label} lists the same one twice.`;
    case 'type':
      return `${label} is ${TYPES[String(p.type)] ?? String(p.type)}.`;
    case 'enum':
      return `${label} is one of: ${(p.allowedValues as unknown[]).map((v) => String(v)).join(', ')}.`;
    case 'const':
      return `${label} is ${String(p.allowedValue)}.`;
    default:
      return `${label} ${e.message ?? 'is invalid'}.`;
  }
}

/** The error of `errors` to tell: not a union's summary, not a discriminator of a branch that did not apply, the deepest. */
function pick(errors: ErrorObject[]): ErrorObject | undefined {
  const own = errors.filter((e) => !UNION.has(e.keyword));
  const pool = own.some((e) => e.keyword !== 'const') ? own.filter((e) => e.keyword !== 'const') : own;
  const depth = (e: ErrorObject) => e.instancePath.split('/').length + (e.keyword === 'required' ? 1 : 0);
  return pool.reduce<ErrorObject | undefined>((best, e) => (!best || depth(e) > depth(best) ? e : best), undefined) ?? errors[0];
}

/** What is wrong with `data`, in words, and where. */
export function invalidMessage(errors: ErrorObject[] | null | undefined, data: unknown): Invalid {
  const e = pick(errors ?? []);
  if (!e) return { message: 'The request is not valid.' };
  const path = e.keyword === 'required' ? `${e.instancePath}/${String((e.params as { missingProperty: string }).missingProperty)}` : e.instancePath;
  const field = path.replace(/^\//, '') || undefined;
  return { message: words(e, labelOf(field), valueAt(data, e.instancePath)), ...(field ? { field } : {}) };
}
