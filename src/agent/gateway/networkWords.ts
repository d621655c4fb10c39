// Why the agent could not reach its service, in words a person reads: the
// storage gateway's last_error is shown as is by REST, the CLI and the window, so
// it says "connection refused by 127.0.0.1:9", not "connect ECONNREFUSED
// 127.0.0.1:9". The socket's own code (ECONNREFUSED, ENOTFOUND, CERT_HAS_EXPIRED)
// is answered beside the words, for the log.

interface ErrorLike { name?: unknown; code?: unknown; cause?: unknown; errors?: unknown }

/** The error, its causes and, for an AggregateError (one per address tried), its parts. */
function chainOf(err: unknown): ErrorLike[] {
  const out: ErrorLike[] = [];
  const visit = (e: unknown, depth: number) => {
    if (!e || typeof e !== 'object' || depth > 5 || out.includes(e as ErrorLike)) return;
    out.push(e as ErrorLike);
    visit((e as ErrorLike).cause, depth + 1);
    const parts = (e as ErrorLike).errors;
    if (Array.isArray(parts)) for (const p of parts) visit(p, depth + 1);
  };
  visit(err, 0);
  return out;
}

const TIMEOUT_NAMES = new Set(['TimeoutError', 'ConnectTimeoutError', 'HeadersTimeoutError', 'BodyTimeoutError']);
const TIMEOUT_CODES = new Set(['ETIMEDOUT', 'UND_ERR_CONNECT_TIMEOUT', 'UND_ERR_HEADERS_TIMEOUT', 'UND_ERR_BODY_TIMEOUT']);
const UNREACHABLE = new Set(['EHOSTUNREACH', 'ENETUNREACH', 'ENETDOWN', 'EHOSTDOWN', 'EADDRNOTAVAIL']);
const CUT = new Set(['ECONNRESET', 'EPIPE', 'ECONNABORTED', 'UND_ERR_SOCKET', 'UND_ERR_CLOSED']);
const EXPIRED = new Set(['CERT_HAS_EXPIRED', 'CERT_NOT_YET_VALID']);
const OTHER_NAME = new Set(['ERR_TLS_CERT_ALTNAME_INVALID', 'HOSTNAME_MISMATCH']);
const TLS_CODE = /^(ERR_TLS_|ERR_SSL_|ERR_OSSL_|CERT_|UNABLE_TO_|DEPTH_ZERO_|SELF_SIGNED_)/;

/**
 * `err` (a failed request or socket to `url`) in words, and the code it carried.
 * An error of no known kind is "<host> cannot be reached" with its own message as
 * the code.
 */
export function networkWords(err: unknown, url: string): { words: string; code: string } {
  const { host, hostname } = (() => {
    try {
      const u = new URL(url);
      return { host: u.host, hostname: u.hostname };
    } catch {
      return { host: url, hostname: url };
    }
  })();
  const chain = chainOf(err);
  const codes = chain.map((e) => (typeof e.code === 'string' ? e.code : '')).filter(Boolean);
  const has = (set: Set<string>) => codes.find((c) => set.has(c));
  let c: string | undefined;
  if ((c = codes.find((x) => x === 'ECONNREFUSED'))) return { words: `connection refused by ${host}`, code: c };
  if ((c = codes.find((x) => x === 'ENOTFOUND'))) return { words: `no such host ${hostname}`, code: c };
  if ((c = codes.find((x) => x === 'EAI_AGAIN'))) return { words: `the name ${hostname} could not be looked up (no answer from DNS)`, code: c };
  if ((c = has(TIMEOUT_CODES)) || chain.some((e) => TIMEOUT_NAMES.has(String(e.name)))) return { words: `timed out: no answer from ${host}`, code: c ?? 'timeout' };
  if ((c = has(EXPIRED))) return { words: `the TLS certificate of ${hostname} has expired`, code: c };
  if ((c = has(OTHER_NAME))) return { words: `the TLS certificate is for another name than ${hostname}`, code: c };
  if ((c = codes.find((x) => x === 'ERR_SSL_WRONG_VERSION_NUMBER'))) return { words: `${host} does not speak TLS (is its address http:// rather than https://?)`, code: c };
  if ((c = codes.find((x) => TLS_CODE.test(x)))) return { words: `TLS certificate not trusted: the one of ${hostname} is not signed by an authority this computer trusts`, code: c };
  if ((c = has(UNREACHABLE))) return { words: `${host} cannot be reached from this network`, code: c };
  if ((c = has(CUT))) return { words: `the connection to ${host} was cut`, code: c };
  return { words: `${host} cannot be reached`, code: codes[0] ?? ((err as Error)?.message || String(err)) };
}
