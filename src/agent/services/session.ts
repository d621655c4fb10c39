// The user session: signed in with e-mail and password (a user token) or with the
// agent's API key. It is kept in SQLite so transfers go on after a restart.
import type { AgentContext } from '../context.js';
import { HostedHttp, HostedApiError, type Credentials } from '../../client/http.js';
import { clearSession, loadSession, saveSession, type StoredSession } from '../store/sessionStore.js';
import { AgentError, sessionNil, upstream } from '../errors.js';
import { AgentErrorCode } from '../../api/agent/errors.js';
import type { Team } from '../../api/hosted/teams.js';


export interface SessionInfo { user: StoredSession['user']; teams: Team[] }

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
    return { user, teams };
  }

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
      clearSession(ctx.db);
      ctx.events.publish('session', { user: null });
    },
    /** The credentials of the session; 401 "session is nil" without one. */
    credentials(): Credentials {
      const s = loadSession(ctx.db);
      if (!s) throw sessionNil();
      return credentialsOf(s);
    },
    close: () => hosted.close(),
  };
}

export type SessionService = ReturnType<typeof createSessionService>;
