// Signed JWTs (HS256) for user sessions and Package access. The signing key is
// generated once per data dir, so tokens survive restarts of the service.
import { SignJWT, jwtVerify, type JWTPayload } from 'jose';

const VERIFIED_CACHE = 4096;
/**
 * How long after its expiry a user token can still be renewed: a client that could
 * not reach the service while its token ran out (an outage, a laptop closed for the
 * weekend) stays signed in once it is back, without the password it does not keep.
 * The renewal still checks the token's generation and its sign-in's age
 * (services/sessions.ts), so a token kept past its expiry is no way around a revocation.
 */
export const REFRESH_GRACE_SECONDS = 7 * 24 * 3600;

/** full: the creator's; upload: an anonymous Portal uploader's (its upload only, reads nothing); read: a Link's (downloads). */
export type PackageAccess = 'full' | 'upload' | 'read';

/**
 * `generation`: the user's token generation when it was signed (claim `gen`; tokens
 * from before generations count as 0); `authTime`: when the session began, the
 * password sign-in that a chain of renewals carries on (claim `auth_time`, seconds;
 * the token's iat when absent).
 */
export interface UserClaims { userId: string; generation: number; authTime: number }
export interface PackageClaims { packageId: string; access: PackageAccess; linkId?: string }
/** A grant to fetch one streamed ZIP of a Package until `expiresAt`, carried in its URL. */
export interface ZipClaims { packageId: string; variant: string; linkId?: string; expiresAt: Date }

export interface Tokens {
  /** `authTime` (seconds) carries a renewed session's beginning on; now when absent (a sign-in). */
  signUser(userId: string, generation: number, authTime?: number): Promise<string>;
  verifyUser(token: string): Promise<UserClaims | null>;
  /** A user token for POST /v1/auth/refresh: valid, or expired less than REFRESH_GRACE_SECONDS ago. */
  verifyUserForRefresh(token: string): Promise<UserClaims | null>;
  signPackage(claims: PackageClaims): Promise<string>;
  verifyPackage(token: string): Promise<PackageClaims | null>;
  signZip(claims: ZipClaims): Promise<string>;
  verifyZip(token: string): Promise<ZipClaims | null>;
}

function userClaims(p: JWTPayload | null): UserClaims | null {
  if (p?.typ !== 'user' || !p.sub) return null;
  const generation = typeof p.gen === 'number' ? p.gen : 0;
  const authTime = typeof p.auth_time === 'number' ? p.auth_time : (p.iat ?? 0);
  return { userId: p.sub, generation, authTime };
}

/** How long an anonymous Portal uploader's token lives by default: as long as an upload may reasonably take. */
export const UPLOAD_TOKEN_TTL_SECONDS = 7 * 24 * 3600;

export function createTokens(secret: Uint8Array, userTtlSeconds = 12 * 3600, readTtlSeconds = 24 * 3600, uploadTtlSeconds = UPLOAD_TOKEN_TTL_SECONDS): Tokens {
  // Imported once: given the raw bytes, jose imports the key anew for every token, about
  // half of a signature's cost (a Package list signs one token per Package).
  const key = crypto.subtle.importKey('raw', secret, { name: 'HMAC', hash: 'SHA-256' }, false, ['sign', 'verify']);
  const sign = async (payload: Record<string, unknown>, subject: string, ttl?: number, expiresAt?: Date) => {
    const jwt = new SignJWT(payload).setProtectedHeader({ alg: 'HS256' }).setSubject(subject).setIssuedAt();
    if (ttl) jwt.setExpirationTime(Math.floor(Date.now() / 1000) + ttl);
    if (expiresAt) jwt.setExpirationTime(Math.floor(expiresAt.getTime() / 1000));
    return jwt.sign(await key);
  };
  // A client sends the same token with every request (an upload: three per file), and a
  // token once verified stays valid until its exp: verified payloads are kept, so only
  // the first use pays for WebCrypto. Bounded; refused tokens are never kept.
  const verified = new Map<string, JWTPayload>();
  const verify = async (token: string): Promise<JWTPayload | null> => {
    const known = verified.get(token);
    if (known) {
      if (known.exp === undefined || known.exp * 1000 > Date.now()) return known;
      verified.delete(token);
      return null;
    }
    try {
      const { payload } = await jwtVerify(token, await key, { algorithms: ['HS256'] });
      if (verified.size >= VERIFIED_CACHE) verified.clear();
      verified.set(token, payload);
      return payload;
    } catch {
      return null;
    }
  };
  return {
    signUser: (userId, generation, authTime) =>
      sign({ typ: 'user', gen: generation, auth_time: authTime ?? Math.floor(Date.now() / 1000) }, userId, userTtlSeconds),
    verifyUser: async (token) => userClaims(await verify(token)),
    async verifyUserForRefresh(token) {
      try {
        const { payload } = await jwtVerify(token, await key, { algorithms: ['HS256'], clockTolerance: REFRESH_GRACE_SECONDS });
        return userClaims(payload);
      } catch {
        return null;
      }
    },
    // A full-access token lives as long as its Package (checked on every use);
    // a read-only token from a Link also dies with the Link, and after a day; an
    // anonymous uploader's dies with its Portal (auth/credentials.ts), and after uploadTtlSeconds.
    signPackage: ({ packageId, access, linkId }) =>
      sign({ typ: 'pkg', acc: access, ...(linkId ? { lnk: linkId } : {}) }, packageId, access === 'read' ? readTtlSeconds : access === 'upload' ? uploadTtlSeconds : undefined),
    async verifyPackage(token) {
      const p = await verify(token);
      if (p?.typ !== 'pkg' || !p.sub || (p.acc !== 'full' && p.acc !== 'upload' && p.acc !== 'read')) return null;
      return { packageId: p.sub, access: p.acc, ...(typeof p.lnk === 'string' ? { linkId: p.lnk } : {}) };
    },
    signZip: ({ packageId, variant, linkId, expiresAt }) =>
      sign({ typ: 'zip', var: variant, ...(linkId ? { lnk: linkId } : {}) }, packageId, undefined, expiresAt),
    async verifyZip(token) {
      const p = await verify(token);
      if (p?.typ !== 'zip' || !p.sub || typeof p.var !== 'string' || !p.exp) return null;
      return { packageId: p.sub, variant: p.var, expiresAt: new Date(p.exp * 1000), ...(typeof p.lnk === 'string' ? { linkId: p.lnk } : {}) };
    },
  };
}
