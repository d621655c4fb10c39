// The core of the hosted API client: JSON over an undici pool, errors as
// HostedApiError carrying the service's `{code, message}` and status.
import { Pool } from 'undici';

export class HostedApiError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    /** The answer's Retry-After header, when it had one (429, 503). */
    readonly retryAfter?: string,
  ) {
    super(message);
  }

  /** The error for an answer with `status` and the service's `{code, message}` (either may be missing). */
  static of(status: number, body: { code?: unknown; message?: unknown } = {}, retryAfter?: string): HostedApiError {
    return new HostedApiError(status, String(body.code ?? 'http_error'), String(body.message ?? `HTTP ${status}`), retryAfter);
  }
}

export interface Credentials {
  apiKey?: string;
  userToken?: string;
  packageToken?: string;
  linkPassword?: string;
  accessCode?: string;
}

export interface RequestOptions {
  query?: Record<string, string | number | boolean | undefined>;
  body?: unknown;
  auth?: Credentials;
  signal?: AbortSignal;
}

function authHeaders(c: Credentials | undefined): Record<string, string> {
  const h: Record<string, string> = {};
  if (!c) return h;
  if (c.apiKey) h['x-api-key'] = c.apiKey;
  if (c.userToken) h['x-user-token'] = c.userToken;
  if (c.packageToken) h['x-package-token'] = c.packageToken;
  if (c.linkPassword !== undefined) h['x-link-password'] = c.linkPassword;
  if (c.accessCode !== undefined) h['x-access-code'] = encodeURIComponent(c.accessCode);
  return h;
}

export class HostedHttp {
  private pool: Pool;
  readonly baseUrl: string;
  /** The base URL's path, put before every request path. */
  private readonly prefix: string;

  constructor(baseUrl: string) {
    this.baseUrl = baseUrl.replace(/\/+$/, '');
    const u = new URL(this.baseUrl);
    this.prefix = u.pathname.replace(/\/+$/, '');
    this.pool = this.newPool();
  }

  private newPool(): Pool {
    return new Pool(new URL(this.baseUrl).origin, { connections: 32, keepAliveTimeout: 10_000 });
  }

  /** Drops every connection, those in use too (their requests fail and are retried): after a sleep of the machine they may be dead. */
  reconnect(): void {
    const old = this.pool;
    this.pool = this.newPool();
    void old.destroy().catch(() => {});
  }

  async request<T>(method: string, path: string, opts: RequestOptions = {}): Promise<T> {
    const prefix = this.prefix;
    const qs = new URLSearchParams();
    for (const [k, v] of Object.entries(opts.query ?? {})) if (v !== undefined) qs.set(k, String(v));
    const fullPath = `${prefix}${path}${qs.size ? `?${qs}` : ''}`;
    const hasBody = opts.body !== undefined;
    const res = await this.pool.request({
      method: method as 'GET',
      path: fullPath,
      headers: { accept: 'application/json', ...(hasBody ? { 'content-type': 'application/json' } : {}), ...authHeaders(opts.auth) },
      body: hasBody ? JSON.stringify(opts.body) : undefined,
      signal: opts.signal,
    });
    const text = await res.body.text();
    let parsed: unknown = undefined;
    if (text) {
      try {
        parsed = JSON.parse(text);
      } catch {
        parsed = undefined;
      }
    }
    if (res.statusCode >= 400) {
      const retryAfter = res.headers['retry-after'];
      throw HostedApiError.of(res.statusCode, (parsed ?? {}) as { code?: unknown; message?: unknown }, Array.isArray(retryAfter) ? retryAfter[0] : retryAfter);
    }
    return parsed as T;
  }

  /** Waits for the requests in flight to end (a command line's last step). */
  close(): Promise<void> {
    return this.pool.close();
  }

  /**
   * Ends at once, the requests in flight failing: a stopping agent cannot wait
   * for a service that accepted a connection and never answers (its requests
   * are made again at the next start).
   */
  destroy(): Promise<void> {
    return this.pool.destroy();
  }
}
