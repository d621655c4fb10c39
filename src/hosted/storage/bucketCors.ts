// The CORS an external bucket needs for the Portal page, which uploads from the
// browser straight to the store: the service's origins (its public URL's, every
// Portal subdomain's with --portal-domain, and --cors-origin's) may PUT, POST,
// GET and HEAD with any request header, and read each answer's ETag (the page
// names every part's to finalize). `ferry serve` checks it at start
// (checkBucketCors: GetBucketCors) and `ferry admin bucket-cors` applies it
// (applyBucketCors: PutBucketCors, the bucket's other rules kept). The embedded
// store takes its origins at start instead (src/objectstore/cors.ts).
import { GetBucketCorsCommand, PutBucketCorsCommand, type CORSRule, type S3Client } from '@aws-sdk/client-s3';
import { storageFailure } from './failure.js';

export const CORS_METHODS: readonly string[] = ['PUT', 'POST', 'GET', 'HEAD'];
/** The ID of the rule Ferry writes, so that applying it again replaces it rather than adding a second. */
export const FERRY_CORS_RULE_ID = 'ferry-browser-uploads';

export function ferryCorsRule(origins: readonly string[]): CORSRule {
  return { ID: FERRY_CORS_RULE_ID, AllowedOrigins: [...origins], AllowedMethods: [...CORS_METHODS], AllowedHeaders: ['*'], ExposeHeaders: ['ETag'], MaxAgeSeconds: 3600 };
}

/** What one origin lacks: methods no complete rule allows it, and why the rules that name it fall short. */
export interface CorsGap { origin: string; methods: string[]; headers: boolean; etag: boolean }

export type CorsCheck =
  | { state: 'ok' }
  /** `none`: the bucket has no CORS configuration at all. */
  | { state: 'missing'; none: boolean; gaps: CorsGap[] }
  /** The store does not answer GetBucketCors (NotImplemented, 405, 501). */
  | { state: 'unsupported'; code: string }
  | { state: 'failed'; code: string };

/** An AllowedOrigin (at most one `*`, any characters) against an origin, or a pattern of ours taken literally. */
function originMatches(pattern: string, origin: string): boolean {
  const re = new RegExp(`^${pattern.split('*').map((p) => p.replace(/[.+?^${}()|[\]\\]/g, '\\$&')).join('.*')}$`, 'i');
  return re.test(origin);
}

/** What `rules` leave out of the rule `origins` need; empty when nothing. */
export function corsGaps(rules: readonly CORSRule[], origins: readonly string[]): CorsGap[] {
  const gaps: CorsGap[] = [];
  for (const origin of origins) {
    const naming = rules.filter((r) => (r.AllowedOrigins ?? []).some((p) => originMatches(p, origin)));
    const anyHeader = (r: CORSRule) => (r.AllowedHeaders ?? []).includes('*');
    const etag = (r: CORSRule) => (r.ExposeHeaders ?? []).some((h) => h.toLowerCase() === 'etag');
    // A browser's request takes the first rule that allows its origin and method: that one must do all.
    const methods = CORS_METHODS.filter((m) => {
      const first = naming.find((r) => (r.AllowedMethods ?? []).some((x) => x.toUpperCase() === m));
      return !first || !anyHeader(first) || !etag(first);
    });
    if (methods.length === 0) continue;
    const allowing = naming.filter((r) => (r.AllowedMethods ?? []).some((x) => methods.includes(x.toUpperCase())));
    gaps.push({ origin, methods, headers: allowing.some((r) => !anyHeader(r)), etag: allowing.some((r) => !etag(r)) });
  }
  return gaps;
}

const UNSUPPORTED = new Set(['NotImplemented', 'MethodNotAllowed']);

/** The bucket's CORS rules: [] for none (NoSuchCORSConfiguration); throws what else the store answers. */
async function currentRules(client: S3Client, Bucket: string): Promise<CORSRule[]> {
  try {
    return (await client.send(new GetBucketCorsCommand({ Bucket }), { abortSignal: AbortSignal.timeout(15_000) })).CORSRules ?? [];
  } catch (err) {
    if (storageFailure(err).code === 'NoSuchCORSConfiguration') return [];
    throw err;
  }
}

const unsupported = (err: unknown) => {
  const { code, status } = storageFailure(err);
  return UNSUPPORTED.has(code ?? '') || status === 405 || status === 501;
};

export async function checkBucketCors(client: S3Client, bucket: string, origins: readonly string[]): Promise<CorsCheck> {
  let rules: CORSRule[];
  try {
    rules = await currentRules(client, bucket);
  } catch (err) {
    const code = storageFailure(err).code ?? (err as Error).message;
    return unsupported(err) ? { state: 'unsupported', code } : { state: 'failed', code };
  }
  const gaps = corsGaps(rules, origins);
  return gaps.length === 0 ? { state: 'ok' } : { state: 'missing', none: rules.length === 0, gaps };
}

/** One line per gap: "http://x.example cannot PUT, POST (its rule allows not every request header)". */
export function describeGaps(gaps: readonly CorsGap[]): string {
  return gaps
    .map((g) => {
      const why = [g.headers ? 'not every request header is allowed' : '', g.etag ? 'ETag is not exposed' : ''].filter(Boolean).join(', ');
      return `${g.origin} cannot ${g.methods.join(', ')}${why ? ` (${why})` : ''}`;
    })
    .join('; ');
}

/** What `ferry serve` logs about a check (a warning unless all is well), in plain words. */
export function corsCheckMessage(check: CorsCheck, bucket: string, origins: readonly string[]): { warn: boolean; message: string } {
  const fix = 'run "ferry admin bucket-cors" with the same --s3-* settings to add the rule';
  const want = `${origins.join(', ')} ${origins.length > 1 ? 'need' : 'needs'} ${CORS_METHODS.join(', ')} with any header and ETag exposed`;
  switch (check.state) {
    case 'ok':
      return { warn: false, message: `bucket ${bucket}: its CORS lets the Portal page upload from ${origins.join(', ')}` };
    case 'missing':
      return {
        warn: true,
        message: `bucket ${bucket} ${check.none ? 'has no CORS rules' : 'lacks CORS'} the Portal page needs to upload from the browser: ${describeGaps(check.gaps)}; ${fix}`,
      };
    case 'unsupported':
      return { warn: true, message: `bucket ${bucket}: the store does not answer GetBucketCors (${check.code}), so its CORS is not checked; the Portal page uploads from the browser: ${want}` };
    case 'failed':
      return { warn: true, message: `bucket ${bucket}: could not read its CORS (${check.code}); the Portal page uploads from the browser: ${want}` };
  }
}

export type CorsApplied =
  | { state: 'unchanged' }
  | { state: 'applied'; rules: CORSRule[]; kept: number }
  | { state: 'unsupported' | 'denied' | 'failed'; code: string; step: 'GetBucketCors' | 'PutBucketCors' };

/**
 * Puts Ferry's rule first (a browser's request takes the first rule that fits) and
 * keeps the bucket's other rules; a rule of Ferry's from before is replaced.
 */
export async function applyBucketCors(client: S3Client, bucket: string, origins: readonly string[]): Promise<CorsApplied> {
  const failed = (err: unknown, step: 'GetBucketCors' | 'PutBucketCors'): CorsApplied => {
    const { code, status } = storageFailure(err);
    const c = code ?? (err as Error).message;
    if (unsupported(err)) return { state: 'unsupported', code: c, step };
    return { state: code === 'AccessDenied' || status === 403 ? 'denied' : 'failed', code: c, step };
  };
  let existing: CORSRule[];
  try {
    existing = await currentRules(client, bucket);
  } catch (err) {
    return failed(err, 'GetBucketCors');
  }
  if (corsGaps(existing, origins).length === 0) return { state: 'unchanged' };
  const kept = existing.filter((r) => r.ID !== FERRY_CORS_RULE_ID);
  const rules = [ferryCorsRule(origins), ...kept];
  try {
    await client.send(new PutBucketCorsCommand({ Bucket: bucket, CORSConfiguration: { CORSRules: rules } }), { abortSignal: AbortSignal.timeout(15_000) });
  } catch (err) {
    return failed(err, 'PutBucketCors');
  }
  return { state: 'applied', rules, kept: kept.length };
}
