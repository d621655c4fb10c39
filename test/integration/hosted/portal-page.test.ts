// The Portal upload page as the service serves it (its behaviour in a browser is
// test/e2e/portal-page.spec.ts): the page of an open Portal with its data block
// and a CSP that lets it reach the store, readable pages for unknown, closed and
// expired Portals, the same page at {subdomain}.{--portal-domain}, the script
// with its ETag; and the embedded store's CORS for the service's origins.
import http from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, startTestService, type TestService } from '../../helpers/hosted.js';
import { ownerActor, type Actor } from '../../helpers/auth.js';
import { resolveHostedConfig } from '../../../src/hosted/config.js';
import { EMBEDDED_STORE_ONLY, rgwUnderTest } from '../../helpers/externalStore.js';
import { onlyIf } from '../../helpers/skip.js';
import { bytes } from '../../../src/format/sizes.js';
import { TOKENS_CSS } from '../../../src/format/tokens.js';

const MiB = 1024 * 1024;
/** A limit that shows a decimal: the page says it as the app does ("57.2 MiB"). */
const MAX_FILE = Math.round(57.2 * MiB);

let svc: TestService;
let owner: Actor;

beforeAll(async () => {
  svc = await startTestService({ 'portal-domain': 'portals.test', 'cors-origin': 'https://edit.example.com, https://*.studio.example' });
  owner = await ownerActor(svc);
  for (const body of [
    { name: 'Deliveries </script><b>x</b>', subdomain: 'deliveries', active: true, message: 'Rushes & sound', access_code: 'open sesame', file_type_restriction_enabled: true, file_types: ['.mov'],
      package_size_restriction_enabled: true, max_file_size: MAX_FILE, max_package_size: 19 },
    { name: 'Closed', subdomain: 'closed', active: false },
    { name: 'Over', subdomain: 'over', active: true, expiry_enabled: true, expiry: '2020-01-01T00:00:00Z' },
  ]) expect((await call(svc.url, 'POST', `/v1/teams/${owner.teamId}/portals`, { headers: owner.h, body })).status).toBe(201);
});
afterAll(async () => {
  await svc?.close();
});

const dataOf = (html: string) => JSON.parse(/<script type="application\/json" id="portal-data">(.*?)<\/script>/s.exec(html)![1]!);

describe('the Portal page', () => {
  it('shows an open Portal with its name, message and limits, its data for the script, and a CSP that reaches only the API and the store', async () => {
    const res = await fetch(`${svc.url}/p/Deliveries`);
    const html = await res.text();
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toContain('text/html');
    const csp = res.headers.get('content-security-policy')!;
    expect(csp).toContain("script-src 'self'");
    expect(csp).toContain(`connect-src 'self' ${svc.s3Url}`);
    expect(csp).toContain("default-src 'none'");
    expect(html).toContain('<h1>Send files to Deliveries &lt;/script&gt;&lt;b&gt;x&lt;/b&gt;</h1>');
    expect(html).toContain('Only .mov files');
    // Sizes in the one format of the app, the CLI and e-mails.
    expect(bytes(MAX_FILE)).toBe('57.2 MiB');
    expect(html).toContain('Up to 57.2 MiB per file');
    expect(html).toContain('Up to 19 B in all');
    // The app's visual tokens, inline (the CSP allows no stylesheet request).
    expect(html).toContain(TOKENS_CSS);
    expect(html).toContain('<script type="module" src="/assets/portal-upload.js"></script>');
    // The data block cannot be closed early by a name: "<" is escaped, and the JSON reads back whole.
    expect(html.match(/<\/script>/g)).toHaveLength(2);
    expect(dataOf(html)).toMatchObject({ name: 'Deliveries </script><b>x</b>', subdomain: 'deliveries', has_access_code: true, restrictions: { file_types: ['.mov'] } });
    expect(html).not.toContain('open sesame');
  });

  it('answers unknown and closed Portals 404 and expired ones 410, as pages without a form', async () => {
    for (const [sub, status, title] of [['nope', 404, 'Portal not found'], ['closed', 404, 'Portal not found'], ['over', 410, 'Portal closed']] as const) {
      const res = await fetch(`${svc.url}/p/${sub}`);
      const html = await res.text();
      expect(res.status, sub).toBe(status);
      expect(html).toContain(`<h1>${title}</h1>`);
      expect(html).not.toContain('portal-data');
    }
  });

  it('answers at {subdomain}.{portal domain}/ too, and nowhere else at /', async () => {
    // fetch() will not send another Host; node:http does, as a browser at that name would.
    const at = (host: string) =>
      new Promise<{ status: number; body: string }>((ok, fail) => {
        http.get(`${svc.url}/`, { headers: { host } }, (res) => {
          let body = '';
          res.setEncoding('utf8').on('data', (d: string) => (body += d)).on('end', () => ok({ status: res.statusCode!, body }));
        }).on('error', fail);
      });
    const page = await at('deliveries.portals.test:8443');
    expect(page.status).toBe(200);
    expect(dataOf(page.body).subdomain).toBe('deliveries');
    expect((await at('closed.portals.test')).status).toBe(404);
    for (const host of ['portals.test', 'a.b.portals.test', 'deliveries.example.com']) {
      const r = await at(host);
      expect(r.status, host).toBe(404);
      expect(JSON.parse(r.body)).toMatchObject({ code: 'not_found' });
    }
  });

  it('serves its script with an ETag, and 304 when it has not changed', async () => {
    const res = await fetch(`${svc.url}/assets/portal-upload.js`);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toContain('text/javascript');
    expect((await res.text()).length).toBeGreaterThan(1000);
    const etag = res.headers.get('etag')!;
    expect((await fetch(`${svc.url}/assets/portal-upload.js`, { headers: { 'if-none-match': etag } })).status).toBe(304);
  });
});

// In the RADOS Gateway pass the service has no embedded store: the bucket's own CORS is test/integration/cli/bucket-cors.test.ts.
describe("the embedded store's CORS", onlyIf(!rgwUnderTest(), EMBEDDED_STORE_ONLY), () => {
  const preflight = (origin: string) =>
    fetch(`${svc.s3Url}/ferry/some/key?partNumber=1&uploadId=x`, { method: 'OPTIONS', headers: { origin, 'access-control-request-method': 'PUT', 'access-control-request-headers': 'content-type' } });

  it('lets the service\'s own origin, every Portal subdomain and the --cors-origin list PUT and read ETag', async () => {
    for (const origin of [svc.url, 'http://deliveries.portals.test', 'https://edit.example.com', 'https://cut.studio.example']) {
      const res = await preflight(origin);
      expect(res.status, origin).toBe(200);
      expect(res.headers.get('access-control-allow-origin')).toBe(origin);
      expect(res.headers.get('access-control-allow-methods')).toContain('PUT');
      expect(res.headers.get('access-control-allow-headers')).toBe('content-type');
    }
    // A real request (here refused: unsigned) still carries the headers, so the page can read the error.
    const plain = await fetch(`${svc.s3Url}/ferry/x`, { headers: { origin: 'https://edit.example.com' } });
    expect(plain.status).toBe(403);
    expect(plain.headers.get('access-control-allow-origin')).toBe('https://edit.example.com');
    expect(plain.headers.get('access-control-expose-headers')).toContain('ETag');
  });

  it('refuses preflights from other origins, and names no origin for them', async () => {
    for (const origin of ['https://evil.example', 'http://a.b.portals.test', 'http://evilportals.test', 'http://edit.example.com', 'https://studio.example']) {
      const res = await preflight(origin);
      expect(res.status, origin).toBe(403);
      expect(res.headers.get('access-control-allow-origin')).toBeNull();
    }
    const plain = await fetch(`${svc.s3Url}/ferry/x`, { headers: { origin: 'https://evil.example' } });
    expect(plain.headers.get('access-control-allow-origin')).toBeNull();
  });

  it('refuses settings that are not origins', () => {
    expect(() => resolveHostedConfig({ 'cors-origin': 'edit.example.com' }, {})).toThrow(/--cors-origin takes origins/);
    expect(() => resolveHostedConfig({ 'cors-origin': 'https://x.example/path' }, {})).toThrow(/--cors-origin/);
    expect(() => resolveHostedConfig({ 'portal-domain': 'localhost' }, {})).toThrow(/--portal-domain must be a domain name/);
    expect(resolveHostedConfig({ 'public-url': 'https://ferry.example.com/', 'portal-domain': 'Portals.Example.com' }, {}).corsOrigins)
      .toEqual(['https://ferry.example.com', 'https://*.portals.example.com']);
  });
});
