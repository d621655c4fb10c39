// The outbound guard's connections, with real sockets on the loopback
// addresses and a resolver of the test's own: the socket goes to an address of
// the one answer that was checked (DNS rebinding gets no second lookup), a
// name with any refused address is refused, literals are refused before any
// connect, TLS verifies the certificate against the name, and what a tenant
// reads of a failure names no address or port.
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import http from 'node:http';
import https from 'node:https';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import type dns from 'node:dns';
import { Agent, request } from 'undici';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { OutboundGuard, PrivateTargetError, REFUSED_TEXT, type Resolver } from '../../../src/hosted/net/outbound.js';
import { describeNetworkError } from '../../../src/hosted/net/outboundErrors.js';
import { parsePrivateTargets } from '../../../src/hosted/net/addresses.js';
import { onlyIf } from '../../helpers/skip.js';

/** A server that answers who it is, and counts what it got. */
interface Named {
  server: http.Server | https.Server;
  hits: number;
  port: number;
}

function named(server: http.Server | https.Server, name: string): Named {
  const n = { server, hits: 0, port: 0 };
  server.on('request', (_req, res) => {
    n.hits++;
    res.writeHead(200, { 'content-type': 'text/plain' }).end(name);
  });
  return n;
}

const listen = (s: http.Server, port: number, host: string) =>
  new Promise<number>((resolve, reject) => {
    s.once('error', reject);
    s.listen(port, host, () => resolve((s.address() as AddressInfo).port));
  });

const close = async (n: Named | undefined) => {
  if (!n) return;
  n.server.closeAllConnections();
  await new Promise<void>((r) => n.server.close(() => r()));
};

/** A resolver answering each call with the next of `answers` (the last one from then on), counting calls. */
function scripted(...answers: dns.LookupAddress[][]): Resolver & { calls: number } {
  const r = Object.assign(
    async (_host: string) => {
      const a = answers[Math.min(r.calls, answers.length - 1)]!;
      r.calls++;
      return a;
    },
    { calls: 0 },
  );
  return r;
}

const V4 = (address: string) => ({ address, family: 4 });
const V6 = (address: string) => ({ address, family: 6 });
const ONLY_127_0_0_1 = parsePrivateTargets('127.0.0.1/32');

// "public" stands in for an allowed address (127.0.0.1, which the policy lists), "private" for a
// refused one (::1, which it does not): both on this machine, on the same port.
let pub: Named;
let priv: Named;

beforeAll(async () => {
  for (let tries = 0; ; tries++) {
    pub = named(http.createServer(), 'public');
    priv = named(http.createServer(), 'private');
    pub.port = await listen(pub.server as http.Server, 0, '127.0.0.1');
    try {
      priv.port = await listen(priv.server as http.Server, pub.port, '::1');
      break;
    } catch (err) {
      await close(pub);
      if (tries > 20) throw err;
    }
  }
});
afterAll(async () => {
  await close(pub);
  await close(priv);
});

describe('DNS rebinding', () => {
  test('the connection goes to the address that was checked: one lookup, and a later private answer is refused', async () => {
    // A resolver that answers an allowed address first and a private one after: the rebinding attack.
    const resolver = scripted([V4('127.0.0.1')], [V6('::1')]);
    const guard = new OutboundGuard(ONLY_127_0_0_1, resolver);
    const first = new Agent({ connect: guard.connector({ timeout: 2000 }) });
    const second = new Agent({ connect: guard.connector({ timeout: 2000 }) });
    try {
      // "rebind.test" has no address but the resolver's: reaching a server at all proves the socket used that answer.
      const r1 = await request(`http://rebind.test:${pub.port}/`, { dispatcher: first });
      expect(await r1.body.text()).toBe('public');
      expect(resolver.calls).toBe(1);
      // A new connection looks the name up again, and the private answer is refused.
      const err = await request(`http://rebind.test:${pub.port}/`, { dispatcher: second }).catch((e: unknown) => e);
      expect(err).toBeInstanceOf(PrivateTargetError);
      expect(err).toMatchObject({ host: 'rebind.test', address: '::1', kind: 'loopback' });
      expect(describeNetworkError(err, 2000)).toBe(REFUSED_TEXT);
      expect(priv.hits).toBe(0);
    } finally {
      await first.close();
      await second.close();
    }
  });

  test('the lookup answers from the one resolution it checked, for one address or all, of the family asked', async () => {
    const resolver = scripted([V4('93.184.215.14'), V6('2606:2800:21f:cb07:6820:80da:af6b:8b2c')]);
    const guard = new OutboundGuard(parsePrivateTargets(undefined), resolver);
    const lookup = (options: dns.LookupOptions) =>
      new Promise<unknown>((resolve, reject) => guard.lookup('public.test', options, (err, address, family) => (err ? reject(err) : resolve(options.all ? address : [address, family]))));
    expect(await lookup({})).toEqual(['93.184.215.14', 4]);
    expect(await lookup({ family: 6 })).toEqual(['2606:2800:21f:cb07:6820:80da:af6b:8b2c', 6]);
    expect(await lookup({ all: true })).toEqual([V4('93.184.215.14'), V6('2606:2800:21f:cb07:6820:80da:af6b:8b2c')]);
    expect(resolver.calls).toBe(3);
  });

  test('a name with any refused address is refused, whichever address the socket would pick', async () => {
    const guard = new OutboundGuard(parsePrivateTargets(undefined), scripted([V4('93.184.215.14'), V4('169.254.169.254')]));
    await expect(guard.resolveChecked('mixed.test')).rejects.toMatchObject({ kind: 'metadata', address: '169.254.169.254', message: REFUSED_TEXT });
    const v4only = new Promise((resolve) => guard.lookup('mixed.test', { family: 4 }, (err) => resolve(err)));
    expect(await v4only).toBeInstanceOf(PrivateTargetError);
  });
});

describe('the AWS SDK agents', () => {
  test('a name goes through the guarded lookup; a literal private address is refused before any connect', async () => {
    const resolver = scripted([V4('127.0.0.1')]);
    const { httpAgent } = new OutboundGuard(ONLY_127_0_0_1, resolver).agents();
    const get = (host: string) =>
      new Promise<string>((resolve, reject) => {
        http.get({ host, port: pub.port, path: '/', agent: httpAgent }, (res) => {
          let text = '';
          res.on('data', (c) => (text += c)).on('end', () => resolve(text));
        }).on('error', reject);
      });
    try {
      expect(await get('bucket.store.test')).toBe('public');
      expect(resolver.calls).toBe(1);
      await expect(get('::1')).rejects.toBeInstanceOf(PrivateTargetError);
      await expect(get('127.0.0.2')).rejects.toMatchObject({ message: REFUSED_TEXT, kind: 'loopback' });
      expect(priv.hits).toBe(0);
    } finally {
      httpAgent.destroy();
    }
  });
});

describe('what a tenant reads of a failure', () => {
  test('socket errors read "unreachable", timeouts the time waited, the refusal as such: no address, no port', () => {
    const refused = Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:39999'), { code: 'ECONNREFUSED', syscall: 'connect', address: '127.0.0.1', port: 39999 });
    expect(describeNetworkError(refused, 1000)).toBe('unreachable');
    expect(describeNetworkError(new AggregateError([refused, { ...refused, address: '::1' }], 'all failed'))).toBe('unreachable');
    expect(describeNetworkError(Object.assign(new Error('getaddrinfo ENOTFOUND nope.internal'), { code: 'ENOTFOUND' }))).toBe('unreachable');
    expect(describeNetworkError(Object.assign(new Error('other side closed'), { code: 'UND_ERR_SOCKET' }))).toBe('unreachable');
    expect(describeNetworkError(Object.assign(new Error('Connect Timeout Error (attempted address: 10.0.0.5:443, timeout: 10000ms)'), { code: 'UND_ERR_CONNECT_TIMEOUT' }), 10000)).toBe('no answer within 10000 ms');
    expect(describeNetworkError(new DOMException('The operation was aborted due to timeout', 'TimeoutError'))).toBe('unreachable: no answer in time');
    expect(describeNetworkError(new Error('fetch failed', { cause: new PrivateTargetError('x.test', '10.0.0.1', 'private') }))).toBe(REFUSED_TEXT);
    expect(describeNetworkError(new Error('the bucket said no'))).toBeUndefined();
  });
});

/** A key and a certificate for ferry.test only (no IP address in it), made by openssl; undefined without openssl. */
function certificate(): { key: string; cert: string } | undefined {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'ferry-tls-'));
  try {
    execFileSync('openssl', ['req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes', '-days', '1', '-subj', '/CN=ferry.test', '-addext', 'subjectAltName=DNS:ferry.test', '-keyout', path.join(dir, 'k.pem'), '-out', path.join(dir, 'c.pem')], { stdio: 'ignore' });
    return { key: fs.readFileSync(path.join(dir, 'k.pem'), 'utf8'), cert: fs.readFileSync(path.join(dir, 'c.pem'), 'utf8') };
  } catch {
    return undefined;
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

const tls = certificate();

describe('TLS through the guard', onlyIf(tls, 'openssl could not make a test certificate'), () => {
  let secure: Named;
  beforeAll(async () => {
    secure = named(https.createServer({ key: tls!.key, cert: tls!.cert }), 'secure');
    secure.port = await listen(secure.server as http.Server, 0, '127.0.0.1');
  });
  afterAll(() => close(secure));

  test('the certificate is checked against the name, though the socket connects to the checked address', async () => {
    const guard = new OutboundGuard(ONLY_127_0_0_1, scripted([V4('127.0.0.1')]));
    const agent = new Agent({ connect: guard.connector({ timeout: 2000, ca: tls!.cert }) });
    const { httpsAgent } = guard.agents({ ca: tls!.cert });
    try {
      const r = await request(`https://ferry.test:${secure.port}/`, { dispatcher: agent });
      expect(await r.body.text()).toBe('secure');
      const viaSdkAgent = await new Promise<string>((resolve, reject) => {
        https.get({ host: 'ferry.test', port: secure.port, path: '/', agent: httpsAgent }, (res) => {
          let text = '';
          res.on('data', (c) => (text += c)).on('end', () => resolve(text));
        }).on('error', reject);
      });
      expect(viaSdkAgent).toBe('secure');
      // The same server by its address: the certificate does not name it, so TLS refuses.
      const err = await request(`https://127.0.0.1:${secure.port}/`, { dispatcher: agent }).catch((e: unknown) => e);
      expect(describeNetworkError(err)).toBe('unreachable: the TLS handshake failed (ERR_TLS_CERT_ALTNAME_INVALID)');
    } finally {
      await agent.close();
      httpsAgent.destroy();
    }
  });
});
