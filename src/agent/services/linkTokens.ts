// The service counts every resolution of a Link (GET /v1/links/{id}) against its
// access limit, so one receive resolves it once: the preview ("Show files") keeps
// what it resolved, and the download that follows takes it instead of resolving
// again. Kept in memory, keyed by the Link (service, id, secret, password), for as
// long as its read-only token lives (a minute of margin), at most a few hours.
import type { LinkInfo } from '../../api/hosted/links.js';

const MAX_KEPT = 64;
const MAX_AGE_MS = 6 * 3600_000;
const MARGIN_MS = 60_000;

/** A JWT's `exp` in ms, read without checking its signature (the service checks it); undefined for other tokens. */
function tokenExpiry(token: string): number | undefined {
  const payload = token.split('.')[1];
  if (!payload) return undefined;
  try {
    const exp = (JSON.parse(Buffer.from(payload, 'base64url').toString('utf8')) as { exp?: unknown }).exp;
    return typeof exp === 'number' ? exp * 1000 : undefined;
  } catch {
    return undefined;
  }
}

export class LinkTokens {
  private readonly kept = new Map<string, { info: LinkInfo; until: number }>();

  static key(apiBase: string, linkId: string, secret: string, password: string | undefined): string {
    return JSON.stringify([apiBase, linkId, secret, password ?? '']);
  }

  keep(key: string, info: LinkInfo): void {
    const now = Date.now();
    const until = Math.min(now + MAX_AGE_MS, (tokenExpiry(info.package_token) ?? Infinity) - MARGIN_MS);
    if (until <= now) return;
    this.kept.delete(key);
    for (const [k, v] of this.kept) if (v.until <= now || this.kept.size >= MAX_KEPT) this.kept.delete(k);
    this.kept.set(key, { info, until });
  }

  /** What a preview resolved, while its token lives. */
  peek(key: string): LinkInfo | undefined {
    const k = this.kept.get(key);
    if (k && k.until > Date.now()) return k.info;
    this.kept.delete(key);
    return undefined;
  }

  /** The receive it was kept for has begun, or its token stopped working. */
  forget(key: string): void {
    this.kept.delete(key);
  }
}
