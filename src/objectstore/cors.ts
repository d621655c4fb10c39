// Cross-origin access for browsers that upload straight to the store (the Portal
// upload page): the origins allowed are given at start, not set per bucket
// (PutBucketCors stays unimplemented), since the service that embeds the store
// knows its own pages' origins. An allowed origin may read ETag (the page needs
// each part's to finalize). Preflights from other origins are refused as S3 does.
import type { IncomingMessage, ServerResponse } from 'node:http';

const METHODS = 'GET, PUT, POST, DELETE, HEAD';
const EXPOSED = 'ETag, x-amz-request-id, x-amz-version-id';

/**
 * `origins` are exact (`https://ferry.example.com`), any subdomain of a domain
 * (`https://*.portals.example.com`), or any port of a host (`http://127.0.0.1:*`,
 * for a service started on port 0, whose port is chosen after its store starts).
 */
export function corsMatcher(origins: readonly string[]): (origin: string) => boolean {
  const exact = new Set<string>();
  const suffixes: { scheme: string; suffix: string }[] = [];
  const anyPort: string[] = [];
  for (const o of origins.map((x) => x.toLowerCase().replace(/\/+$/, ''))) {
    const m = /^(https?:\/\/)\*(\..+)$/.exec(o);
    if (m) suffixes.push({ scheme: m[1]!, suffix: m[2]! });
    else if (o.endsWith(':*')) anyPort.push(o.slice(0, -1));
    else exact.add(o);
  }
  return (origin) => {
    const o = origin.toLowerCase();
    if (exact.has(o)) return true;
    if (anyPort.some((p) => o.startsWith(p) && /^\d{1,5}$/.test(o.slice(p.length)))) return true;
    return suffixes.some(({ scheme, suffix }) => o.startsWith(scheme) && o.endsWith(suffix) && /^[a-z0-9-]+$/.test(o.slice(scheme.length, -suffix.length)));
  };
}

/**
 * Adds the CORS headers an allowed origin gets; answers a preflight (OPTIONS) in
 * full and returns true then, so the request goes no further.
 */
export function handleCors(allowed: (origin: string) => boolean, req: IncomingMessage, res: ServerResponse): boolean {
  const origin = req.headers.origin;
  const ok = typeof origin === 'string' && allowed(origin);
  if (ok) {
    res.setHeader('Access-Control-Allow-Origin', origin);
    res.setHeader('Vary', 'Origin');
    res.setHeader('Access-Control-Expose-Headers', EXPOSED);
  }
  if (req.method !== 'OPTIONS') return false;
  if (!ok || !req.headers['access-control-request-method']) {
    res.writeHead(403, { 'content-type': 'application/xml' });
    res.end('<?xml version="1.0" encoding="UTF-8"?>\n<Error><Code>AccessForbidden</Code><Message>CORSResponse: This CORS request is not allowed.</Message></Error>');
    return true;
  }
  res.writeHead(200, {
    'Access-Control-Allow-Methods': METHODS,
    // Headers are checked by the signature, not here: echo what the browser will send.
    'Access-Control-Allow-Headers': String(req.headers['access-control-request-headers'] ?? ''),
    'Access-Control-Max-Age': '3600',
    'content-length': '0',
  });
  res.end();
  return true;
}
