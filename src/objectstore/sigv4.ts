// AWS Signature Version 4 verification, header and pre-signed (query) forms.
// https://docs.aws.amazon.com/AmazonS3/latest/API/sig-v4-authenticating-requests.html
// Canonical forms are rebuilt from the decoded request, so clients that escape
// differently on the wire (e.g. `!` raw vs `%21`) still verify: S3 signs the
// once-encoded path and never normalises `.`/`..` or double slashes.

import { createHmac, timingSafeEqual } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import { ALGORITHM, awsUriEncode, canonicalQuery, signCanonical, signingKey, UNSIGNED_PAYLOAD } from '../sigv4/sign.js';
import { s3err } from './errors.js';

export const EMPTY_SHA256 = 'e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855';
const MAX_SKEW_MS = 15 * 60 * 1000;
const MAX_PRESIGN_SECONDS = 7 * 24 * 3600;

export interface Credentials {
  accessKey: string;
  secretKey: string;
  region: string;
}

export interface AuthContext {
  /** Value from x-amz-content-sha256 (or UNSIGNED-PAYLOAD for pre-signed URLs). */
  payloadHash: string;
  presigned: boolean;
  /** What aws-chunked chunk signatures chain from. */
  seedSignature: string;
  amzDate: string;
  scope: string;
  signingKey: Buffer;
}

function decodeComponent(s: string): string {
  try {
    return decodeURIComponent(s);
  } catch {
    throw s3err('InvalidURI', 'Couldn\'t parse the specified URI.');
  }
}

export function canonicalUri(rawPath: string): string {
  return rawPath.split('/').map((seg) => awsUriEncode(decodeComponent(seg))).join('/') || '/';
}

/** Decoded query pairs, in wire order; `+` is a literal plus, as in AWS SDKs. */
export function parseQuery(rawQuery: string): Array<[string, string]> {
  if (!rawQuery) return [];
  return rawQuery.split('&').filter(Boolean).map((pair) => {
    const eq = pair.indexOf('=');
    return eq < 0
      ? [decodeComponent(pair), '']
      : [decodeComponent(pair.slice(0, eq)), decodeComponent(pair.slice(eq + 1))];
  });
}

/** Values of the signed headers from rawHeaders (repeats joined by ','; spaces collapsed). */
function canonicalHeaders(req: IncomingMessage, signed: string[]): string {
  const values = new Map<string, string[]>();
  const raw = req.rawHeaders;
  for (let i = 0; i < raw.length; i += 2) {
    const name = raw[i]!.toLowerCase();
    if (!signed.includes(name)) continue;
    const list = values.get(name) ?? [];
    list.push(raw[i + 1]!.trim().replace(/\s+/g, ' '));
    values.set(name, list);
  }
  return signed.map((h) => `${h}:${(values.get(h) ?? []).join(',')}\n`).join('');
}

/** Constant-time comparison of two hex signatures. */
export function signaturesEqual(a: string, b: string): boolean {
  const x = Buffer.from(a, 'utf8');
  const y = Buffer.from(b, 'utf8');
  return x.length === y.length && timingSafeEqual(x, y);
}

/** yyyymmddThhmmssZ -> epoch ms, or NaN. */
function parseAmzDate(s: string): number {
  const m = /^(\d{4})(\d{2})(\d{2})T(\d{2})(\d{2})(\d{2})Z$/.exec(s);
  return m ? Date.UTC(+m[1]!, +m[2]! - 1, +m[3]!, +m[4]!, +m[5]!, +m[6]!) : NaN;
}

interface Parsed {
  credential: string;
  signedHeaders: string;
  signature: string;
  amzDate: string;
  payloadHash: string;
  expires?: number;
}

function fromHeader(req: IncomingMessage, auth: string): Parsed {
  if (!auth.startsWith(ALGORITHM + ' ')) {
    throw s3err('InvalidRequest', 'The authorization mechanism you have provided is not supported. Please use AWS4-HMAC-SHA256.');
  }
  const fields = new Map<string, string>();
  for (const part of auth.slice(ALGORITHM.length + 1).split(',')) {
    const eq = part.indexOf('=');
    if (eq > 0) fields.set(part.slice(0, eq).trim(), part.slice(eq + 1).trim());
  }
  const amzDate = String(req.headers['x-amz-date'] ?? '');
  const payloadHash = req.headers['x-amz-content-sha256'];
  if (typeof payloadHash !== 'string') {
    throw s3err('InvalidRequest', 'Missing required header for this request: x-amz-content-sha256');
  }
  const p = { credential: fields.get('Credential'), signedHeaders: fields.get('SignedHeaders'), signature: fields.get('Signature') };
  if (!p.credential || !p.signedHeaders || !p.signature || !amzDate) {
    throw s3err('AuthorizationHeaderMalformed', 'The authorization header is malformed.');
  }
  return { credential: p.credential, signedHeaders: p.signedHeaders, signature: p.signature, amzDate, payloadHash };
}

function fromQuery(req: IncomingMessage, q: Map<string, string>): Parsed {
  const get = (k: string): string => {
    const v = q.get(k);
    if (v === undefined) throw s3err('AuthorizationQueryParametersError', `Query-string authentication requires the ${k} parameter.`);
    return v;
  };
  if (get('X-Amz-Algorithm') !== ALGORITHM) {
    throw s3err('AuthorizationQueryParametersError', 'X-Amz-Algorithm only supports "AWS4-HMAC-SHA256"');
  }
  const expires = Number(get('X-Amz-Expires'));
  if (!Number.isInteger(expires) || expires < 1 || expires > MAX_PRESIGN_SECONDS) {
    throw s3err('AuthorizationQueryParametersError', 'X-Amz-Expires must be between 1 and 604800 seconds.');
  }
  const header = req.headers['x-amz-content-sha256'];
  return {
    credential: get('X-Amz-Credential'),
    signedHeaders: get('X-Amz-SignedHeaders'),
    signature: get('X-Amz-Signature'),
    amzDate: get('X-Amz-Date'),
    payloadHash: typeof header === 'string' ? header : UNSIGNED_PAYLOAD,
    expires,
  };
}

/**
 * Verifies the request signature; throws the S3 error a real bucket would answer.
 * `rawPath` is exactly as received (still percent-encoded); `query` is decoded.
 */
export function verifySignature(
  req: IncomingMessage,
  rawPath: string,
  query: Array<[string, string]>,
  creds: Credentials,
  now = Date.now(),
): AuthContext {
  const q = new Map(query);
  const header = req.headers.authorization;
  const presigned = q.has('X-Amz-Algorithm') || q.has('X-Amz-Signature');
  if (presigned && header !== undefined) throw s3err('InvalidArgument', 'Only one auth mechanism allowed; only the X-Amz-Algorithm query parameter or the Authorization header should be specified');
  if (header === undefined && !presigned) throw s3err('AccessDenied', 'Anonymous access is not allowed.');
  const p = presigned ? fromQuery(req, q) : fromHeader(req, header!);

  const [accessKey, date, region, service, terminator, ...rest] = p.credential.split('/');
  if (!accessKey || !date || !region || service !== 's3' || terminator !== 'aws4_request' || rest.length) {
    throw s3err(presigned ? 'AuthorizationQueryParametersError' : 'AuthorizationHeaderMalformed', 'The credential is malformed.');
  }
  if (!signaturesEqual(accessKey, creds.accessKey)) throw s3err('InvalidAccessKeyId');
  if (region !== creds.region) {
    throw s3err(presigned ? 'AuthorizationQueryParametersError' : 'AuthorizationHeaderMalformed',
      `The credential's region '${region}' is wrong; expecting '${creds.region}'`);
  }
  const signedAt = parseAmzDate(p.amzDate);
  if (Number.isNaN(signedAt) || p.amzDate.slice(0, 8) !== date) {
    throw s3err('AccessDenied', 'X-Amz-Date is malformed or does not match the credential date.');
  }
  if (presigned) {
    if (now > signedAt + p.expires! * 1000) throw s3err('AccessDenied', 'Request has expired');
    if (signedAt - now > MAX_SKEW_MS) throw s3err('AccessDenied', 'Request is not valid yet');
  } else if (Math.abs(now - signedAt) > MAX_SKEW_MS) {
    throw s3err('RequestTimeTooSkewed');
  }

  const signed = p.signedHeaders.split(';');
  if (!signed.includes('host')) throw s3err('AccessDenied', 'The host header must be signed.');
  const canonical = [
    req.method ?? 'GET',
    canonicalUri(rawPath),
    canonicalQuery(query, presigned ? 'X-Amz-Signature' : undefined),
    canonicalHeaders(req, signed),
    p.signedHeaders,
    p.payloadHash,
  ].join('\n');
  const scope = `${date}/${region}/s3/aws4_request`;
  const key = signingKey(creds.secretKey, date, region);
  const expected = signCanonical(canonical, p.amzDate, scope, key);
  if (!signaturesEqual(expected, p.signature)) throw s3err('SignatureDoesNotMatch');
  return { payloadHash: p.payloadHash, presigned, seedSignature: p.signature, amzDate: p.amzDate, scope, signingKey: key };
}

/** Expected signature of one aws-chunked chunk, chained from the previous one. */
export function chunkSignature(auth: AuthContext, previous: string, chunkSha256: string): string {
  const toSign = `AWS4-HMAC-SHA256-PAYLOAD\n${auth.amzDate}\n${auth.scope}\n${previous}\n${EMPTY_SHA256}\n${chunkSha256}`;
  return createHmac('sha256', auth.signingKey).update(toSign, 'utf8').digest('hex');
}
