// AWS Signature Version 4, the parts both sides share: the embedded store checks
// signatures with them (src/objectstore/sigv4.ts) and the hosted service makes
// pre-signed URLs with them (src/hosted/storage/presign.ts), so the two cannot
// drift apart. https://docs.aws.amazon.com/AmazonS3/latest/API/sig-v4-authenticating-requests.html

import { createHash, createHmac } from 'node:crypto';

export const ALGORITHM = 'AWS4-HMAC-SHA256';
export const UNSIGNED_PAYLOAD = 'UNSIGNED-PAYLOAD';

/** RFC 3986 encoding as AWS wants it: unreserved kept, everything else %XX upper-case. */
export function awsUriEncode(s: string): string {
  return encodeURIComponent(s).replace(/[!'()*]/g, (c) => '%' + c.charCodeAt(0).toString(16).toUpperCase());
}

const sha256hex = (s: string): string => createHash('sha256').update(s, 'utf8').digest('hex');
const hmac = (key: Buffer | string, data: string): Buffer => createHmac('sha256', key).update(data, 'utf8').digest();

const keyCache = new Map<string, Buffer>();
/** The day's key for `region` and S3: four HMACs, so kept (it changes once a day). */
export function signingKey(secret: string, date: string, region: string): Buffer {
  const id = `${secret}\n${date}\n${region}`;
  let key = keyCache.get(id);
  if (!key) {
    key = hmac(hmac(hmac(hmac('AWS4' + secret, date), region), 's3'), 'aws4_request');
    if (keyCache.size > 64) keyCache.clear();
    keyCache.set(id, key);
  }
  return key;
}

/** Decoded pairs, encoded and sorted by name then value, joined as S3 signs them. */
export function canonicalQuery(pairs: ReadonlyArray<readonly [string, string]>, skip?: string): string {
  return pairs
    .filter(([k]) => k !== skip)
    .map(([k, v]) => [awsUriEncode(k), awsUriEncode(v)] as const)
    .sort((a, b) => (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : a[1] < b[1] ? -1 : a[1] > b[1] ? 1 : 0))
    .map(([k, v]) => `${k}=${v}`)
    .join('&');
}

/** Hex signature of a canonical request with the day's key. */
export function signCanonical(canonical: string, amzDate: string, scope: string, key: Buffer): string {
  const stringToSign = `${ALGORITHM}\n${amzDate}\n${scope}\n${sha256hex(canonical)}`;
  return createHmac('sha256', key).update(stringToSign, 'utf8').digest('hex');
}

/** yyyymmddThhmmssZ of a date. */
const amzDateOf = (d: Date): string => d.toISOString().replace(/[-:]/g, '').replace(/\.\d{3}/, '');

export interface PresignInput {
  method: string;
  /** Origin host as sent in the Host header (host[:port]). */
  host: string;
  /** The path as sent: already percent-encoded, S3 style (never normalised). */
  path: string;
  /** Decoded query pairs to sign along (sub-resources, response overrides). */
  query: Record<string, string>;
  /**
   * Headers the request must carry with exactly these values, besides host (names
   * in lower case): a signed `content-length` makes the store refuse a body of
   * any other length.
   */
  headers?: Record<string, string>;
  accessKey: string;
  secretKey: string;
  sessionToken?: string;
  region: string;
  expiresIn: number;
  now: Date;
}

/** The query string of a pre-signed URL (host and `headers` signed, payload unsigned). */
export function presignedQuery(p: PresignInput): string {
  const amzDate = amzDateOf(p.now);
  const date = amzDate.slice(0, 8);
  const scope = `${date}/${p.region}/s3/aws4_request`;
  const headers = Object.entries({ ...p.headers, host: p.host }).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  const signedHeaders = headers.map(([name]) => name).join(';');
  const pairs: [string, string][] = [
    ...Object.entries(p.query),
    ['X-Amz-Algorithm', ALGORITHM],
    ['X-Amz-Content-Sha256', UNSIGNED_PAYLOAD],
    ['X-Amz-Credential', `${p.accessKey}/${scope}`],
    ['X-Amz-Date', amzDate],
    ['X-Amz-Expires', String(p.expiresIn)],
    ['X-Amz-SignedHeaders', signedHeaders],
  ];
  if (p.sessionToken) pairs.push(['X-Amz-Security-Token', p.sessionToken]);
  const query = canonicalQuery(pairs);
  const canonicalHeaders = headers.map(([name, value]) => `${name}:${value.trim()}\n`).join('');
  const canonical = `${p.method}\n${p.path}\n${query}\n${canonicalHeaders}\n${signedHeaders}\n${UNSIGNED_PAYLOAD}`;
  return `${query}&X-Amz-Signature=${signCanonical(canonical, amzDate, scope, signingKey(p.secretKey, date, p.region))}`;
}
