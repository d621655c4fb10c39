// Local security (docs/agent-api.md): only loopback names or the configured listen
// host in `Host` (DNS rebinding), no foreign browser `Origin` (CSRF), and the
// API key when the agent was started with one. A browser showing the app proves
// the key once (POST /ui/unlock) and then carries an HttpOnly, SameSite=Strict
// cookie derived from it; the app's static files and the API's description
// (GET /openapi.json, GET /docs/api) need no key.
import { createHmac, timingSafeEqual } from 'node:crypto';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { AgentErrorCode } from '../../api/agent/errors.js';

const LOOPBACK = new Set(['localhost', '127.0.0.1', '[::1]', '::1']);

function hostName(hostHeader: string): string {
  const m = /^(\[[^\]]+\]|[^:]+)(?::\d+)?$/.exec(hostHeader.trim().toLowerCase());
  return m ? m[1]! : '';
}

export function allowedHost(hostHeader: string | undefined, listenHost: string): boolean {
  if (!hostHeader) return false;
  const name = hostName(hostHeader);
  const listen = listenHost.toLowerCase();
  return LOOPBACK.has(name) || name === listen || name === `[${listen}]`;
}

/** A browser page may drive the agent only when it was served by the agent itself. */
export function allowedOrigin(origin: string | undefined, hostHeader: string | undefined): boolean {
  if (origin === undefined) return true; // not a browser, or a same-origin GET
  try {
    const o = new URL(origin);
    return (o.protocol === 'http:' || o.protocol === 'https:') && o.host === (hostHeader ?? '').toLowerCase();
  } catch {
    return false;
  }
}

export const sameSecret = (a: string, b: string) => {
  const x = Buffer.from(a), y = Buffer.from(b);
  return x.length === y.length && timingSafeEqual(x, y);
};

export const UI_COOKIE = 'ferry_ui';

/** The cookie's value: a MAC of the API key, so it holds no secret and dies when the key changes. */
export const uiCookieValue = (apiKey: string) => createHmac('sha256', apiKey).update('ferry-ui-session').digest('base64url');

function cookie(header: string | undefined, name: string): string | undefined {
  for (const part of (header ?? '').split(';')) {
    const [k, ...v] = part.trim().split('=');
    if (k === name) return v.join('=');
  }
  return undefined;
}

/** The app's own files, the API's description (docs/openapi.md), and the route that turns the key into the cookie: open without it. */
const OPEN_WITHOUT_KEY = (method: string, url: string) =>
  (method === 'GET' && (url === '/' || url.startsWith('/assets/') || url === '/openapi.json' || url === '/docs/api')) || (method === 'POST' && url === '/ui/unlock');

export function securityHook(listenHost: string, apiKey: string | undefined) {
  const expected = apiKey ? uiCookieValue(apiKey) : undefined;
  return async (req: FastifyRequest, reply: FastifyReply) => {
    const host = req.headers.host;
    if (!allowedHost(host, listenHost)) {
      return reply.code(403).send({ code: AgentErrorCode.forbidden, message: 'this Host is not allowed' });
    }
    const origin = req.headers.origin;
    if (!allowedOrigin(typeof origin === 'string' ? origin : undefined, host)) {
      return reply.code(403).send({ code: AgentErrorCode.forbidden, message: 'cross-origin requests are not allowed' });
    }
    if (apiKey && !OPEN_WITHOUT_KEY(req.method, req.url.split('?')[0]!)) {
      const given = req.headers['x-api-key'];
      const fromCookie = cookie(req.headers.cookie, UI_COOKIE);
      const byCookie = fromCookie !== undefined && sameSecret(fromCookie, expected!);
      if (!byCookie && (typeof given !== 'string' || !sameSecret(given, apiKey))) {
        return reply.code(401).send({ code: AgentErrorCode.apiKey, message: 'X-API-Key is missing or wrong' });
      }
    }
  };
}
