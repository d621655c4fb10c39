// A storage gateway's last_error in words: each kind of socket failure, with the
// address it named, and never the code itself (the log keeps that).
import { describe, expect, it } from 'vitest';
import { networkWords } from '../../../src/agent/gateway/networkWords.js';

const err = (code: string, extra: Record<string, unknown> = {}) => Object.assign(new Error(`connect ${code} somewhere`), { code, ...extra });

describe('networkWords', () => {
  const cases: [string, unknown, string, string][] = [
    ['refused', err('ECONNREFUSED'), 'http://127.0.0.1:9', 'connection refused by 127.0.0.1:9'],
    ['no such host', err('ENOTFOUND'), 'https://ferry.example', 'no such host ferry.example'],
    ['DNS silent', err('EAI_AGAIN'), 'https://ferry.example', 'the name ferry.example could not be looked up (no answer from DNS)'],
    ['timed out', Object.assign(new Error('Connect Timeout Error'), { name: 'ConnectTimeoutError', code: 'UND_ERR_CONNECT_TIMEOUT' }), 'https://ferry.example:8443', 'timed out: no answer from ferry.example:8443'],
    ['untrusted certificate', err('SELF_SIGNED_CERT_IN_CHAIN'), 'https://ferry.example', 'TLS certificate not trusted: the one of ferry.example is not signed by an authority this computer trusts'],
    ['expired certificate', err('CERT_HAS_EXPIRED'), 'https://ferry.example', 'the TLS certificate of ferry.example has expired'],
    ['another name', err('ERR_TLS_CERT_ALTNAME_INVALID'), 'https://ferry.example', 'the TLS certificate is for another name than ferry.example'],
    ['no route', err('EHOSTUNREACH'), 'http://10.0.0.9:8080', '10.0.0.9:8080 cannot be reached from this network'],
    ['cut', err('ECONNRESET'), 'http://10.0.0.9:8080', 'the connection to 10.0.0.9:8080 was cut'],
    ['a cause inside fetch failed', Object.assign(new TypeError('fetch failed'), { cause: err('ECONNREFUSED') }), 'http://127.0.0.1:9', 'connection refused by 127.0.0.1:9'],
    ['one address of several', new AggregateError([err('ECONNREFUSED')], 'all failed'), 'http://localhost:9', 'connection refused by localhost:9'],
    ['unknown', new Error('something odd'), 'http://127.0.0.1:9', '127.0.0.1:9 cannot be reached'],
  ];
  for (const [what, e, url, words] of cases) {
    it(what, () => {
      const w = networkWords(e, url);
      expect(w.words).toBe(words);
      expect(w.words).not.toMatch(/E[A-Z]{4,}|UND_ERR|CERT_/);
      expect(w.code).toBeTruthy();
    });
  }
});
