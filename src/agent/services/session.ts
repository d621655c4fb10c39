// The user session: signed in with e-mail and password (a user token) or with the
// agent's API key. It is kept in SQLite so transfers go on after a restart. A
// user token is renewed at half its lifetime (POST /v1/auth/refresh), so an
// agent left running stays signed in without keeping the password. When the
// service refuses the session's token or key (expired, revoked, user removed),
// the session ends: it is removed and the routes answer "session is nil". While
// the service cannot be reached the session stays, even past its token's expiry:
// the renewal is tried again every minute and as soon as the service answers
// again (the service renews a token that expired less than a week ago).
import type { AgentContext } from '../context.js';
import { HostedHttp, HostedApiError, type Credentials, type RequestOptions } from '../../client/http.js';
import { clearSession, loadSession, saveSession, type StoredSession } from '../store/sessionStore.js';
import { AgentError, sessionNil, upstream } from '../errors.js';
import { AgentErrorCode } from '../../api/agent/errors.js';
import type { Team } from '../../api/hosted/teams.js';
import { describe, failureKind, retryAfterMs } from '../engine/retry.js';


export interface SessionInfo { user: StoredSession['user']; teams: Team[] }

/** When the service cannot be reached, the renewal is tried again after this long, or when the service answers again. */
const RENEW_RETRY_MS = 60_000;
/** The longest a Node timer waits; a later renewal is scheduled in steps. */
const MAX_TIMER_MS = 2 ** 31 - 1;
/** The `--api-key` sign-in at start, when the service cannot be reached: first retry after this long, doubling up to the maximum. */
export const API_KEY_RETRY_FIRST_MS = 1_000;
export const API_KEY_RETRY_MAX_MS = 60_000;

const REFRESH = '/v1/auth/refresh';
const expired = (token: string) => Date.now() >= (tokenTimes(token)?.expiresAt ?? 0);

/** Refusals of the service that ended the session: the route that met one answers "session is nil" like those after it. */
const endedTheSession = new WeakSet<object>();

/** A refusal of the credentials themselves (401/403), as opposed to a service that cannot be reached or failed. */
const isRefusal = (err: unknown): boolean =>
  (err instanceof HostedApiError || err instanceof AgentError) && (err.status === 401 || err.status === 403);

/** When a user token should be renewed (half-way through its life) and when it expires, in ms, from its own iat and exp claims. */
export function tokenTimes(token: string): { renewAt: number; expiresAt: number } | undefined {
  try {
    const claims = JSON.parse(Buffer.from(token.split('.')[1] ?? '', 'base64url').toString('utf8')) as { iat?: unknown; exp?: unknown };
    if (typeof claims.iat !== 'number' || typeof claims.exp !== 'number') return undefined;
    return { renewAt: ((claims.iat + claims.exp) / 2) * 1000, expiresAt: claims.exp * 1000 };
  } catch {
    return undefined;
  }
}

/** Maps a failure of the hosted service to what the agent answers. */
export function fromHosted(err: unknown): never {
  if (err instanceof HostedApiError) {
    if (endedTheSession.has(err)) throw sessionNil();
    if (err.status === 401) throw new AgentError(401, AgentErrorCode.sessionNil, `the service refused the credentials: ${err.message}`);
    if (err.status === 400 || err.status === 404 || err.status === 409 || err.status === 403 || err.status === 410 || err.status === 413) {
      throw new AgentError(err.status, err.status === 409 ? AgentErrorCode.conflict : err.status === 404 ? AgentErrorCode.notFound : AgentErrorCode.badRequest, err.message);
    }
    throw upstream(`the service answered ${err.status}: ${err.message}`);
  }
  if (err instanceof AgentError) throw err;
  throw upstream(`the service could not be reached: ${(err as Error).message}`);
}

export function createSessionService(ctx: AgentContext) {
  let closed = false;
  let renewTimer: NodeJS.Timeout | undefined;
  let apiKeyTimer: NodeJS.Timeout | undefined;
  /** The `--api-key` sign-in under way, awaited by close(). */
  let apiKeyAttempt: Promise<unknown> | undefined;
  /** The secret of the session that last ended by a refusal: calls that were under way with it answer "session is nil" too. */
  let endedSecret: string | undefined;

  /**
   * Ends the session after the service refused `secret`, if that is still the stored
   * session's (a sign-in meanwhile stays): removed from the store, its renewal
   * stopped, a `session` event with `{user: null}`. True when it ended it.
   */
  function endRefused(secret: string, why: string): boolean {
    if (closed) return false;
    const s = loadSession(ctx.db);
    if (!s || s.secret !== secret) return false;
    clearTimeout(renewTimer);
    clearSession(ctx.db);
    endedSecret = secret;
    ctx.events.publish('session', { user: null });
    ctx.log.warn({ err: why, kind: s.kind, user: s.user.email }, 'the service refused the session, which has ended; sign in again');
    return true;
  }

  /**
   * The service client every session call goes through: a 401 to the session's own
   * token or key ends the session, except for a user token that has only expired
   * (the service was out when it was due): that one is renewed and the call made again.
   */
  class SessionHttp extends HostedHttp {
    override async request<T>(method: string, path: string, opts: RequestOptions = {}): Promise<T> {
      try {
        return await super.request<T>(method, path, opts);
      } catch (err) {
        const token = opts.auth?.userToken;
        if (err instanceof HostedApiError && err.status === 401 && token && !opts.auth?.packageToken && path !== REFRESH && expired(token)) {
          const fresh = await renew(token);
          if (fresh) return super.request<T>(method, path, { ...opts, auth: { ...opts.auth, userToken: fresh } });
        }
        // With a package token it is that token the service judged, not the session.
        const secret = opts.auth && !opts.auth.packageToken ? (opts.auth.userToken ?? opts.auth.apiKey) : undefined;
        if (err instanceof HostedApiError && err.status === 401 && secret && (endRefused(secret, err.message) || secret === endedSecret)) {
          endedTheSession.add(err);
        }
        throw err;
      }
    }
  }
  const hosted: HostedHttp = new SessionHttp(ctx.config.hostedUrl);
  const service = ctx.outages.target('service', ctx.config.hostedUrl);
  /** A renewal that failed for want of the service, to be tried again as soon as it is back. */
  let renewalDue: string | undefined;

  const credentialsOf = (s: StoredSession): Credentials => (s.kind === 'api_key' ? { apiKey: s.secret } : { userToken: s.secret });

  async function establish(kind: StoredSession['kind'], secret: string): Promise<SessionInfo> {
    const auth = kind === 'api_key' ? { apiKey: secret } : { userToken: secret };
    const [user, teams] = await Promise.all([
      hosted.request<StoredSession['user']>('GET', '/v1/me', { auth }),
      hosted.request<Team[]>('GET', '/v1/teams', { auth }),
    ]).catch(fromHosted);
    if (closed) throw upstream('the agent is stopping');
    saveSession(ctx.db, { kind, secret, user });
    ctx.events.publish('session', { user });
    scheduleRenewal();
    return { user, teams };
  }

  const later = (ms: number, fn: () => void) => {
    clearTimeout(renewTimer);
    renewTimer = setTimeout(fn, Math.min(Math.max(0, ms), MAX_TIMER_MS));
    renewTimer.unref();
  };

  function scheduleRenewal(): void {
    clearTimeout(renewTimer);
    const s = loadSession(ctx.db);
    const times = s?.kind === 'credentials' ? tokenTimes(s.secret) : undefined;
    if (closed || !s || !times) return;
    const wait = times.renewAt - Date.now();
    later(wait, () => (wait > MAX_TIMER_MS ? scheduleRenewal() : void renew(s.secret)));
  }

  /** The renewal under way, shared by the timer and the calls that met an expired token. */
  let renewing: { token: string; fresh: Promise<string | undefined> } | undefined;

  /** Renews the session's user token; resolves the new one, or undefined when it could not (then the session is ended or the renewal is due again). */
  function renew(token: string): Promise<string | undefined> {
    if (renewing?.token !== token) {
      const fresh = renewOnce(token).finally(() => {
        if (renewing?.fresh === fresh) renewing = undefined;
      });
      renewing = { token, fresh };
    }
    return renewing.fresh;
  }

  async function renewOnce(token: string): Promise<string | undefined> {
    renewalDue = undefined;
    try {
      const r = await hosted.request<{ token: string }>('POST', REFRESH, { auth: { userToken: token } });
      // A login, a logout or another renewal meanwhile decided otherwise: the session's own token is the one to use.
      const now = loadSession(ctx.db);
      if (closed || now?.kind !== 'credentials') return undefined;
      if (now.secret !== token) return expired(now.secret) ? undefined : now.secret;
      saveSession(ctx.db, { ...now, secret: r.token });
      scheduleRenewal();
      return r.token;
    } catch (err) {
      if (closed) return undefined;
      if (isRefusal(err)) {
        // Revoked, or expired past the service's grace: the session ends (a 401 has already ended it on its way here).
        endRefused(token, (err as Error).message);
        return undefined;
      }
      // The service cannot be reached (or failed): the session stays, expired or not, and the
      // renewal goes again in a minute, or as soon as the service answers (serviceBack).
      if (failureKind(err) === 'outage') service.report(describe(err), retryAfterMs((err as HostedApiError).retryAfter));
      ctx.log.warn({ err: (err as Error).message, expired: expired(token) }, 'could not renew the session; trying again when the service answers');
      renewalDue = token;
      later(RENEW_RETRY_MS, () => void renew(token));
      return undefined;
    }
  }

  scheduleRenewal();

  return {
    hosted,
    /** The service answers again (or the machine woke): a renewal that could not be made meanwhile is made now. */
    serviceBack(): void {
      const s = loadSession(ctx.db);
      if (closed || s?.kind !== 'credentials' || renewalDue !== s.secret) return;
      void renew(s.secret);
    },
    /** POST /login: e-mail and password, exchanged for a user token. */
    async login(email: string, password: string): Promise<SessionInfo> {
      const r = await hosted.request<{ token: string }>('POST', '/v1/auth', { body: { email, password } }).catch(fromHosted);
      return establish('credentials', r.token);
    },
    /** A persistent session by API key. */
    loginWithApiKey: (apiKey: string) => establish('api_key', apiKey),
    /**
     * The `--api-key` start flag: a stored session that is not this key's is dropped,
     * then the key signs the agent in. While the service cannot be reached the sign-in
     * is tried again in the background (1 s, doubling up to 60 s) until it succeeds or
     * the agent closes; a refusal of the key is logged and leaves no session. Resolves
     * after the first try.
     */
    async startWithApiKey(apiKey: string): Promise<void> {
      const stored = loadSession(ctx.db);
      if (stored && (stored.kind !== 'api_key' || stored.secret !== apiKey)) {
        clearTimeout(renewTimer);
        clearSession(ctx.db);
        ctx.log.info({ kind: stored.kind, user: stored.user.email }, 'dropped the stored session: the agent signs in with its API key');
      }
      let delay = API_KEY_RETRY_FIRST_MS;
      const attempt = async (): Promise<void> => {
        apiKeyTimer = undefined;
        if (closed) return;
        // A POST /login meanwhile (the service was back for it) is a later choice than the flag.
        const now = loadSession(ctx.db);
        if (now && now.secret !== apiKey) return;
        try {
          await establish('api_key', apiKey);
        } catch (err) {
          if (closed) return;
          if (isRefusal(err)) {
            // A refused key stays refused: no retry, and a stored session of this key ends.
            endRefused(apiKey, (err as Error).message);
            ctx.log.error({ err: (err as Error).message }, 'the service refused the API key; the agent has no session');
            return;
          }
          ctx.log.warn({ err: (err as Error).message, retry_in_ms: delay }, 'signing in with the API key failed; trying again');
          apiKeyTimer = setTimeout(() => void (apiKeyAttempt = attempt()), delay);
          delay = Math.min(delay * 2, API_KEY_RETRY_MAX_MS);
        }
      };
      await (apiKeyAttempt = attempt());
    },
    /** GET /login: the current session, refreshed from the service. */
    async current(): Promise<SessionInfo> {
      const s = loadSession(ctx.db);
      if (!s) throw sessionNil();
      const auth = credentialsOf(s);
      const teams = await hosted.request<Team[]>('GET', '/v1/teams', { auth }).catch(fromHosted);
      return { user: s.user, teams };
    },
    async teams(): Promise<Team[]> {
      return (await this.current()).teams;
    },
    /**
     * A request made outside `hosted` (an event stream) met a 401 to these credentials: as
     * `hosted` would, a user token that has only expired is renewed, else the session ends.
     */
    refused(auth: Credentials, why: string): void {
      if (auth.packageToken) return;
      if (auth.userToken && expired(auth.userToken)) return void renew(auth.userToken);
      const secret = auth.userToken ?? auth.apiKey;
      if (secret) endRefused(secret, why);
    },
    /** Whether there is a session (without asking the service). */
    signedIn(): boolean {
      return loadSession(ctx.db) !== undefined;
    },
    logout(): void {
      clearTimeout(renewTimer);
      clearSession(ctx.db);
      ctx.events.publish('session', { user: null });
    },
    /** The credentials of the session; 401 "session is nil" without one. */
    credentials(): Credentials {
      const s = loadSession(ctx.db);
      if (!s) throw sessionNil();
      return credentialsOf(s);
    },
    async close() {
      closed = true;
      clearTimeout(renewTimer);
      clearTimeout(apiKeyTimer);
      apiKeyTimer = undefined;
      // Not close(): a request the service never answers would hold the agent's stop.
      await hosted.destroy().catch(() => undefined);
      // A sign-in under way ends with the pool; it sets no timer once closed.
      await apiKeyAttempt?.catch(() => undefined);
    },
  };
}

export type SessionService = ReturnType<typeof createSessionService>;
