// A cloud connection's authorization object, checked against its provider's
// variants (src/api/hosted/cloudProviders.ts), merged on update, masked in
// answers; and what the service can do with each provider in this version.
import { createPrivateKey } from 'node:crypto';
import type { TSchema } from 'typebox';
import {
  AUTHORIZATION_VARIANTS,
  PROVIDERS,
  SECRET_FIELDS,
  SECRET_MASK,
  type AuthorizationVariant,
  type Provider,
  type ProviderInfo,
} from '../../api/hosted/cloudProviders.js';
import { bodyValidator } from '../../http/validation.js';
import { badRequest } from '../errors.js';

export type Authorization = Record<string, unknown>;

const validators = new Map<AuthorizationVariant, ReturnType<typeof bodyValidator>>();
function validatorOf(variant: AuthorizationVariant) {
  let v = validators.get(variant);
  if (!v) {
    v = bodyValidator(AUTHORIZATION_VARIANTS[variant] as TSchema);
    validators.set(variant, v);
  }
  return v;
}

export const providerInfo = (provider: string): ProviderInfo | undefined =>
  Object.hasOwn(PROVIDERS, provider) ? (PROVIDERS as Record<string, ProviderInfo>)[provider] : undefined;

const fieldsOf = (variant: AuthorizationVariant) => Object.keys((AUTHORIZATION_VARIANTS[variant] as { properties: object }).properties);
const requiredOf = (variant: AuthorizationVariant) => (AUTHORIZATION_VARIANTS[variant] as { required?: string[] }).required ?? [];

/** The variant `auth` is meant as: the one whose required fields it has most of (the first on a tie). */
function likelyVariant(variants: AuthorizationVariant[], auth: Authorization): AuthorizationVariant {
  let best = variants[0]!;
  let score = -1;
  for (const v of variants) {
    const req = requiredOf(v);
    const own = req.filter((f) => auth[f] !== undefined).length;
    // Fields only this variant has weigh more: role_arn says "role based" even with client_id beside it.
    const distinctive = req.filter((f) => auth[f] !== undefined && variants.every((o) => o === v || !requiredOf(o).includes(f))).length;
    const s = own + 10 * distinctive;
    if (s > score) [best, score] = [v, s];
  }
  return best;
}

function describeError(err: { instancePath?: string; message?: string; params?: Record<string, unknown> } | undefined): string {
  if (!err) return 'is invalid';
  const missing = err.params?.missingProperty;
  if (typeof missing === 'string') return `needs ${missing}`;
  const field = err.instancePath?.replace(/^\//, '') ?? '';
  return `${field ? `${field} ` : ''}${err.message ?? 'is invalid'}`;
}

/** Checks that Ajv cannot express: an endpoint that is a real URL, a key that parses, region rules. */
function deepChecks(provider: string, info: ProviderInfo, variant: AuthorizationVariant, auth: Authorization): void {
  const fail = (msg: string) => badRequest(`authorization for ${provider}: ${msg}`, 'invalid_authorization');
  if (typeof auth.endpoint === 'string') {
    let url: URL;
    try {
      url = new URL(auth.endpoint);
    } catch {
      throw fail('endpoint is not a valid URL');
    }
    if (url.protocol !== 'http:' && url.protocol !== 'https:') throw fail('endpoint must be an http or https URL');
    if (url.username || url.password) throw fail('endpoint must not carry a user or password');
    if (url.search || url.hash) throw fail('endpoint must not have a query or fragment');
  }
  if (info.fixedRegion && auth.region !== info.fixedRegion) throw fail(`region must be "${info.fixedRegion}"`);
  if (typeof auth.private_key === 'string') {
    try {
      createPrivateKey({ key: auth.private_key, format: 'pem', ...(typeof auth.passphrase === 'string' ? { passphrase: auth.passphrase } : {}) });
    } catch (err) {
      const why = err instanceof Error ? err.message : String(err);
      throw fail(`private_key is not a PEM private key${variant === 'enterprise_key_pair' ? ' that opens with passphrase' : ''} (${why})`);
    }
  }
  if (typeof auth.blob_service_sas_url === 'string') {
    try {
      const u = new URL(auth.blob_service_sas_url);
      if (!u.searchParams.get('sig') || !u.searchParams.get('sv')) throw new Error();
    } catch {
      throw fail('blob_service_sas_url must be an https SAS URL with sv= and sig=');
    }
  }
}

/**
 * The authorization checked against the provider's variants: answers the
 * variant and the object with only that variant's fields. 400
 * invalid_authorization naming what is wrong.
 */
export function checkAuthorization(provider: Provider, auth: Authorization): { variant: AuthorizationVariant; auth: Authorization } {
  const info = PROVIDERS[provider] as ProviderInfo;
  for (const f of SECRET_FIELDS) {
    if (auth[f] === SECRET_MASK) throw badRequest(`authorization for ${provider}: ${f} is the mask; give the secret itself`, 'invalid_authorization');
  }
  const variant = likelyVariant(info.variants, auth);
  for (const other of info.variants) {
    if (other === variant) continue;
    const foreign = requiredOf(other).filter((f) => auth[f] !== undefined && !fieldsOf(variant).includes(f));
    if (foreign.length > 0) {
      throw badRequest(`authorization for ${provider} mixes two kinds: give ${requiredOf(variant).join(', ')}, or ${requiredOf(other).join(', ')}, not ${foreign.join(', ')} as well`, 'invalid_authorization');
    }
  }
  const kept: Authorization = {};
  for (const f of fieldsOf(variant)) if (auth[f] !== undefined) kept[f] = auth[f];
  const validate = validatorOf(variant);
  if (!validate(kept)) {
    const shapes = info.variants.map((v) => requiredOf(v).join(', ') || '(no fields)').join(' | ');
    throw badRequest(`authorization for ${provider} ${describeError(validate.errors?.[0])}; it takes: ${shapes}`, 'invalid_authorization');
  }
  deepChecks(provider, info, variant, kept);
  return { variant, auth: kept };
}

/**
 * An update's authorization: a complete variant given on its own replaces the
 * stored one (switching from keys to a role, say); otherwise each given field
 * replaces that field and the rest are kept. A secret sent back as the mask
 * keeps the stored secret.
 */
export function mergeAuthorization(provider: Provider, stored: Authorization, given: Authorization): { variant: AuthorizationVariant; auth: Authorization } {
  const unmasked: Authorization = {};
  for (const [k, v] of Object.entries(given)) {
    if (v === SECRET_MASK && (SECRET_FIELDS as readonly string[]).includes(k)) {
      if (stored[k] !== undefined) unmasked[k] = stored[k];
    } else unmasked[k] = v;
  }
  const info = PROVIDERS[provider] as ProviderInfo;
  const complete = info.variants.length > 1 && info.variants.some((v) => requiredOf(v).every((f) => unmasked[f] !== undefined));
  return checkAuthorization(provider, complete ? unmasked : { ...stored, ...unmasked });
}

/** The authorization as answers show it: every secret field masked. */
export function maskAuthorization(auth: Authorization): Authorization {
  const out: Authorization = {};
  for (const [k, v] of Object.entries(auth)) out[k] = (SECRET_FIELDS as readonly string[]).includes(k) ? SECRET_MASK : v;
  return out;
}

export type Delivery =
  | { kind: 's3' }
  | { kind: 'gateway' }
  | { kind: 'unavailable'; reason: string };

/** What this version can do with a connection of `provider` authorized as `variant`. */
export function deliveryOf(provider: string, variant: AuthorizationVariant): Delivery {
  const label = providerInfo(provider)?.label ?? provider;
  switch (variant) {
    case 's3_compatible_key':
    case 'aws_s3_key':
      return { kind: 's3' };
    case 'storage_gateway':
      return { kind: 'gateway' };
    case 'aws_s3_role':
      return {
        kind: 'unavailable',
        reason: `transfers with a role (role_arn) are not available in this version of Ferry: the service has no AWS identity to assume it from; use an access key (client_id, client_secret)`,
      };
    default:
      return { kind: 'unavailable', reason: `transfers to ${label} (${provider}) are not available in this version of Ferry; the connection is kept, and S3 or S3-compatible connections work` };
  }
}

/** The variant a stored authorization is (it was checked on write). */
export function storedVariant(provider: string, auth: Authorization): AuthorizationVariant {
  const info = providerInfo(provider);
  return info ? likelyVariant(info.variants as AuthorizationVariant[], auth) : 'storage_gateway';
}
