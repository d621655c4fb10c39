// What a tenant reads when a request the service made on their behalf got no
// answer: the guard's refusal, "unreachable", or the time it waited. Never the
// socket's own error: it names addresses and ports (which made webhooks a port
// scanner) and tells a name that does not exist from one that does not answer.
// The operator's log keeps the real error.
import { PrivateTargetError, REFUSED_TEXT } from './outbound.js';

interface ErrorLike {
  name?: unknown;
  code?: unknown;
  syscall?: unknown;
  cause?: unknown;
  errors?: unknown;
}

/** The error, its causes and, for an AggregateError (one per address tried), its parts. */
function chainOf(err: unknown): ErrorLike[] {
  const out: ErrorLike[] = [];
  const visit = (e: unknown, depth: number) => {
    if (!e || typeof e !== 'object' || depth > 5 || out.includes(e as ErrorLike)) return;
    const x = e as ErrorLike;
    out.push(x);
    visit(x.cause, depth + 1);
    if (Array.isArray(x.errors)) for (const part of x.errors) visit(part, depth + 1);
  };
  visit(err, 0);
  return out;
}

const TIMEOUT_NAMES = new Set(['TimeoutError', 'ConnectTimeoutError', 'HeadersTimeoutError', 'BodyTimeoutError']);
const TIMEOUT_CODES = new Set(['ETIMEDOUT', 'UND_ERR_CONNECT_TIMEOUT', 'UND_ERR_HEADERS_TIMEOUT', 'UND_ERR_BODY_TIMEOUT']);
const TLS_CODE = /^(ERR_TLS_|ERR_SSL_|ERR_OSSL_|CERT_|UNABLE_TO_|DEPTH_ZERO_|SELF_SIGNED_|HOSTNAME_MISMATCH)/;
/** A system error (ECONNREFUSED, ENOTFOUND, EHOSTUNREACH, ...) or one of undici's socket errors. */
const NETWORK_CODE = /^(E[A-Z0-9_]+|UND_ERR_[A-Z_]+)$/;

/**
 * The tenant's words for a request that failed without an answer; undefined
 * when `err` is not a network failure (the caller describes it). `timeoutMs`:
 * the limit the caller set, named when it ran out.
 */
export function describeNetworkError(err: unknown, timeoutMs?: number): string | undefined {
  const chain = chainOf(err);
  const code = (e: ErrorLike) => (typeof e.code === 'string' ? e.code : '');
  if (chain.some((e) => e instanceof PrivateTargetError || code(e) === 'ERR_PRIVATE_TARGET')) return REFUSED_TEXT;
  if (chain.some((e) => TIMEOUT_NAMES.has(String(e.name)) || TIMEOUT_CODES.has(code(e)))) {
    return timeoutMs !== undefined ? `no answer within ${timeoutMs} ms` : 'unreachable: no answer in time';
  }
  const tls = chain.map(code).find((c) => TLS_CODE.test(c));
  if (tls) return `unreachable: the TLS handshake failed (${tls})`;
  if (chain.some((e) => NETWORK_CODE.test(code(e)) || typeof e.syscall === 'string')) return 'unreachable';
  return undefined;
}
