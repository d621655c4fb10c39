// The user session: signed in with e-mail and password (a user token) or with the
// agent's API key. It is kept in SQLite so transfers go on after a restart. A
// user token is renewed at half its lifetime (POST /v1/auth/refresh), so an
// agent left running stays signed in without keeping the password.
import type { AgentContext } from '../context.js';
import { HostedHttp, HostedApiError, type Credentials } from '../../client/http.js';
import { clearSession, loadSession, saveSession, type StoredSession } from '../store/sessionStore.js';
import { AgentError, sessionNil, upstream } from '../errors.js';
import { AgentErrorCode } from '../../api/agent/errors.js';
import type { Team } from '../../api/hosted/teams.js';


export interface SessionInfo { user: StoredSession['user']; teams: Team[] }

/** When the service cannot be reached, the renewal is tried again after this long (while the token lasts). */
const RENEW_RETRY_MS = 60_000;
/** The longest a Node timer waits; a later renewal is scheduled in steps. */
const MAX_TIMER_MS = 2 ** 31 - 1;

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
  const hosted = new HostedHttp(ctx.config.hostedUrl);

  const credentialsOf = (s: StoredSession): Credentials => (s.kind === 'api_key' ? { apiKey: s.secret } : { userToken: s.secret });

  async function establish(kind: StoredSession['kind'], secret: string): Promise<SessionInfo> {
    const auth = kind === 'api_key' ? { apiKey: secret } : { userToken: secret };
    const [user, teams] = await Promise.all([
      hosted.request<StoredSession['user']>('GET', '/v1/me', { auth }),
      hosted.request<Team[]>('GET', '/v1/teams', { auth }),
    ]).catch(fromHosted);
    saveSession(ctx.db, { kind, secret, user });
    ctx.events.publish('session', { user });
    scheduleRenewal();
    return { user, teams };
  }

  let renewTimer: NodeJS.Timeout | undefined;
  let closed = false;
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

  async function renew(token: string): Promise<void> {
    try {
      const r = await hosted.request<{ token: string }>('POST', '/v1/auth/refresh', { auth: { userToken: token } });
      // A login or logout meanwhile decided otherwise.
      const now = loadSession(ctx.db);
      if (closed || now?.kind !== 'credentials' || now.secret !== token) return;
      saveSession(ctx.db, { ...now, secret: r.token });
      scheduleRenewal();
    } catch (err) {
      if (closed) return;
      if (err instanceof HostedApiError && err.status === 401) {
        // Expired or revoked: the session has ended, and calls answer "session is nil"-style 401s.
        ctx.log.warn({ err: err.message }, 'the service refused to renew the session; sign in again');
        return;
      }
      if (Date.now() + RENEW_RETRY_MS >= (tokenTimes(token)?.expiresAt ?? 0)) {
        ctx.log.warn({ err: (err as Error).message }, 'could not renew the session before it expired; sign in again');
        return;
      }
      ctx.log.warn({ err: (err as Error).message }, 'could not renew the session; trying again');
      later(RENEW_RETRY_MS, () => void renew(token));
    }
  }

  scheduleRenewal();

  return {
    hosted,
    /** POST /login: e-mail and password, exchanged for a user token. */
    async login(email: string, password: string): Promise<SessionInfo> {
      const r = await hosted.request<{ token: string }>('POST', '/v1/auth', { body: { email, password } }).catch(fromHosted);
      return establish('credentials', r.token);
    },
    /** The `--api-key` start flag: a persistent session by API key. */
    loginWithApiKey: (apiKey: string) => establish('api_key', apiKey),
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
    close() {
      closed = true;
      clearTimeout(renewTimer);
      return hosted.close();
    },
  };
}

export type SessionService = ReturnType<typeof createSessionService>;
