// What diagnostics and support bundles must never show: the agent's keys, the
// session's key or token, the owner's key of the service on this computer,
// gateway secrets, the tokens and secrets of recent transfers, and anything in
// the shape of a credential (a URL's user and password, a pre-signed request's
// signature, a password field, a bearer token). Known values are replaced
// wherever they appear, so a secret a log line carries in any form is gone too.
import type { AgentContext } from '../context.js';
import { loadSession } from '../store/sessionStore.js';
import { HIDDEN } from '../../api/agent/diagnostics.js';

/** Shorter values are left alone: replacing them would blot out ordinary words. */
const MIN_SECRET = 8;
/** Transfers whose tokens are gathered (the newest): older ones are long expired. */
const RECENT = 500;

/**
 * Every secret value the agent holds now: `keys` (its own keys, the session's,
 * gateways': few, each looked for anywhere in a text) and `tokens` (those of
 * recent transfers: many, each looked up as a whole word of the text).
 */
export interface Secrets { keys: string[]; tokens: Set<string> }

/** A word of a text, as tokens are made of. */
const WORD = /[A-Za-z0-9_-]{8,}/g;
const isWord = (s: string) => /^[A-Za-z0-9_-]+$/.test(s);

export function knownSecrets(ctx: AgentContext): Secrets {
  const keys = new Set<string>();
  const tokens = new Set<string>();
  const key = (v: unknown) => {
    if (typeof v === 'string' && v.length >= MIN_SECRET) keys.add(v);
  };
  const add = (v: unknown) => {
    if (typeof v === 'string' && v.length >= MIN_SECRET) (isWord(v) ? tokens : keys).add(v);
  };
  key(ctx.config.apiKey);
  key(ctx.config.localApiKey);
  key(ctx.ownerKey);
  const db = ctx.db;
  const rows = (sql: string): Record<string, unknown>[] => {
    try {
      return db.prepare(sql).all() as Record<string, unknown>[];
    } catch {
      return []; // a table this version does not have
    }
  };
  try {
    key(loadSession(db)?.secret);
  } catch {
    /* no session table */
  }
  for (const r of rows('SELECT secret FROM storage_gateways')) key(r.secret);
  for (const r of rows(`SELECT package_token FROM uploads ORDER BY created_at DESC LIMIT ${RECENT}`)) add(r.package_token);
  for (const r of rows(`SELECT link_secret, link_password, package_token FROM downloads ORDER BY created_at DESC LIMIT ${RECENT}`)) {
    add(r.link_secret);
    add(r.link_password);
    add(r.package_token);
  }
  for (const r of rows(`SELECT link_password FROM automation_packages WHERE link_password IS NOT NULL ORDER BY created_at DESC LIMIT ${RECENT}`)) add(r.link_password);
  // The longest first: a secret that holds another is replaced whole.
  return { keys: [...keys].sort((a, b) => b.length - a.length), tokens };
}

const PATTERNS: [RegExp, string][] = [
  // A URL's user and password.
  [/(\b[a-z][a-z0-9+.-]*:\/\/)[^\s/@"'<>]+@/gi, `$1${HIDDEN}@`],
  // A pre-signed request's signature, credential and token.
  [/(X-Amz-(?:Signature|Credential|Security-Token)=)[^&\s"'<>]+/gi, `$1${HIDDEN}`],
  // JSON fields named as secrets.
  [/("(?:[a-z_]*password|[a-z_]*secret|[a-z_]*token|api_?key|local_api_key|authorization|x-api-key)"\s*:\s*)"(?:[^"\\]|\\.)*"/gi, `$1"${HIDDEN}"`],
  // Headers in text.
  [/\b(Bearer|Basic)\s+[A-Za-z0-9._~+/=-]{8,}/g, `$1 ${HIDDEN}`],
];

/** `text` with every known secret and every credential-shaped value replaced by HIDDEN. */
export function redact(text: string, secrets: Secrets): string {
  let out = text;
  for (const s of secrets.keys) if (out.includes(s)) out = out.split(s).join(HIDDEN);
  if (secrets.tokens.size) out = out.replace(WORD, (w) => (secrets.tokens.has(w) ? HIDDEN : w));
  for (const [re, by] of PATTERNS) out = out.replace(re, by);
  return out;
}

/** `value` with redact() applied to every string in it. */
export function redactDeep<T>(value: T, secrets: Secrets): T {
  if (typeof value === 'string') return redact(value, secrets) as T;
  if (Array.isArray(value)) return value.map((v) => redactDeep(v, secrets)) as T;
  if (value && typeof value === 'object') return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, redactDeep(v, secrets)])) as T;
  return value;
}

/** A URL without its user and password. */
export const withoutCredentials = (url: string): string => url.replace(PATTERNS[0]![0], PATTERNS[0]![1]);
