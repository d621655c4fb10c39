// Rate limits of every route: one fixed window per class and caller, counted in
// the database (store.ts). The caller is its credential when it has a valid one
// (API key, user, Package), else its address; the class decides the limit.
import rateLimit, { normalizeIP } from '@fastify/rate-limit';
import type { FastifyRequest } from 'fastify';
import type { HostedApp } from '../app.js';
import type { HostedContext } from '../context.js';
import type { RateLimits } from '../config.js';
import { hashSecret } from '../auth/passwords.js';
import { HttpError } from '../errors.js';
import { databaseStore } from './store.js';

export type RateClass = 'signin' | 'public' | 'api' | 'package';

/** The client's address as the limits and lockouts see it: an IPv6 client's /64, IPv4-mapped addresses as IPv4. */
export const clientAddress = (req: FastifyRequest) => normalizeIP(req.ip);

const header = (req: FastifyRequest, name: string): string | undefined => {
  const v = req.headers[name];
  return typeof v === 'string' && v.length > 0 ? v : undefined;
};

/** `CLASS:WHO`. A credential that does not verify counts against the address, like none. */
export async function rateKey(ctx: HostedContext, req: FastifyRequest): Promise<string> {
  const apiKey = header(req, 'x-api-key');
  if (apiKey) {
    const row = await ctx.db.selectFrom('api_keys').select('id').where('key_hash', '=', hashSecret(apiKey)).executeTakeFirst();
    if (row) return `api:${row.id}`;
  } else {
    const userToken = header(req, 'x-user-token');
    const claims = userToken && (await ctx.tokens.verifyUser(userToken));
    if (claims) return `api:${claims.userId}`;
  }
  const packageToken = header(req, 'x-package-token');
  const pkg = packageToken && (await ctx.tokens.verifyPackage(packageToken));
  // Each Link's recipients count apart from the uploader and from other Links.
  if (pkg) return `package:${pkg.packageId}${pkg.linkId ? `/${pkg.linkId}` : ''}`;
  const signIn = req.method === 'POST' && req.routeOptions.url === '/v1/auth';
  return `${signIn ? 'signin' : 'public'}:${clientAddress(req)}`;
}

/**
 * Files served as they are (the app's update feed, page scripts): no database, no secret, and
 * an update's ranged downloads or a page's assets would use up a person's allowance.
 */
const isStaticFile = (req: FastifyRequest) => /^\/(updates|assets)\//.test(req.routeOptions.url ?? '');

const LIMIT_OF: Record<RateClass, keyof RateLimits> = { signin: 'signIn', public: 'public', api: 'api', package: 'package' };

export const limitFor = (limits: RateLimits, key: string): number => limits[LIMIT_OF[key.slice(0, key.indexOf(':')) as RateClass]];

/** Registered before the routes: it hooks every route added after it (onRequest, before parsing). */
export async function registerRateLimits(app: HostedApp, ctx: HostedContext): Promise<void> {
  const limits = ctx.config.rateLimits;
  await app.register(rateLimit, {
    global: true,
    hook: 'onRequest',
    timeWindow: limits.windowMs,
    store: databaseStore(ctx.db),
    keyGenerator: (req) => rateKey(ctx, req),
    // A limit of 0 turns that class off.
    allowList: (req, key) => limitFor(limits, key) === 0 || isStaticFile(req),
    max: (_req, key) => limitFor(limits, key),
    errorResponseBuilder: (_req, c) => {
      const seconds = Math.max(1, Math.ceil(c.ttl / 1000));
      return new HttpError(429, 'rate_limited', `too many requests; try again in ${seconds} s`, { 'retry-after': String(seconds) });
    },
  });
}
