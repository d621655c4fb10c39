// Random identifiers and secrets, URL-safe.
import { randomBytes } from 'node:crypto';

const ALPHABET = '0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ';

/** A random base62 string; 22 characters carry ~131 bits. */
export function randomId(length = 22): string {
  const bytes = randomBytes(length * 2);
  let out = '';
  for (let i = 0; i < bytes.length && out.length < length; i++) {
    const b = bytes[i]!;
    if (b < 248) out += ALPHABET[b % 62]; // 248 = 4*62: keeps the distribution uniform
  }
  return out.length === length ? out : out + randomId(length - out.length);
}

export const newId = (prefix: string) => `${prefix}_${randomId(20)}`;

/** The base62 digits in byte order, so that a greater number is a greater text. */
const ORDERED = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';

/** The milliseconds of a time in 8 base62 digits (good until the year 8888), so that later is greater as text. */
function timeDigits(ms: number): string {
  let out = '';
  for (let i = 0; i < 8; i++, ms = Math.floor(ms / 62)) out = ORDERED[ms % 62]! + out;
  return out;
}

/**
 * An id like newId's (same prefix and length) whose first 8 characters are its
 * creation time, for rows made by the thousand (a Package's files): each lands
 * beside the one before in its table's primary-key index instead of on a random
 * page, so a commit writes a few pages rather than one per row, and a Package of
 * a million files keeps its recent pages in SQLite's cache. 12 random characters
 * (~71 bits) follow; ids are names, never secrets (newSecret).
 */
export const newOrderedId = (prefix: string, at = Date.now()) => `${prefix}_${timeDigits(at)}${randomId(12)}`;

export const newSecret = (bytes = 32) => randomBytes(bytes).toString('base64url');
export const nowIso = () => new Date().toISOString();
