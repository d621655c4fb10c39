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
export const newSecret = (bytes = 32) => randomBytes(bytes).toString('base64url');
export const nowIso = () => new Date().toISOString();
