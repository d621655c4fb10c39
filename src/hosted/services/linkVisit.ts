// One visit of the Link page counts one access. The page has no script (its CSP
// allows none), so the visit is carried by an HttpOnly cookie scoped to the Link's
// own path: it holds the read-only package token the Link handed out, lives as long
// as that token, and is sent back on a reload or a second opening of the page. The
// token itself proves the secret and the password were given (routes/pages.ts).
import { decodeJwt } from 'jose';

const NAME = 'ferry_link';

/** The token of this Link's visit, from a Cookie header; undefined without one. */
export function visitToken(header: string | undefined, linkId: string): string | undefined {
  if (!header) return undefined;
  for (const part of header.split(';')) {
    const eq = part.indexOf('=');
    if (eq < 0 || part.slice(0, eq).trim() !== NAME) continue;
    // `{link id}.{token}`: a cookie of another Link (the path may be shared behind a proxy) is not this one's.
    const value = part.slice(eq + 1).trim();
    const dot = value.indexOf('.');
    if (dot > 0 && value.slice(0, dot) === linkId) return value.slice(dot + 1);
  }
  return undefined;
}

/** Set-Cookie for a visit: the Link's path under `linkUrl` (the service's Link address), the token's lifetime. */
export function visitCookie(linkUrl: string, linkId: string, token: string): string {
  const url = new URL(linkUrl);
  const exp = decodeJwt(token).exp;
  const maxAge = exp ? Math.max(0, exp - Math.floor(Date.now() / 1000)) : 3600;
  const secure = url.protocol === 'https:' ? '; Secure' : '';
  // Lax: the Link opened again from the e-mail (a top-level navigation) continues the visit.
  return `${NAME}=${linkId}.${token}; Path=${url.pathname.replace(/\/+$/, '')}/${encodeURIComponent(linkId)}; Max-Age=${maxAge}; HttpOnly; SameSite=Lax${secure}`;
}
