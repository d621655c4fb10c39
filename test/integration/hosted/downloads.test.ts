// Download URLs (their lifetime caps) and the web download page behind a Link.
import SQLite from 'better-sqlite3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, startTestService, type TestService } from '../../helpers/hosted.js';
import { ownerActor } from '../../helpers/auth.js';
import { onPostgres } from '../../helpers/postgres.js';
import { onlyIf } from '../../helpers/skip.js';
import { bytes } from '../../../src/format/sizes.js';
import { createPackage, fetchBytes, finalizePackage, makeLink, presignedUntil, readZip, sha256, uploadFile, type Pkg } from '../../helpers/flow.js';

let svc: TestService;
let pkg: Pkg;
let fileId: string;
const data = Buffer.from('the content of the <b>report</b>\n');
const HOUR = 3600_000, DAY = 24 * HOUR;

beforeAll(async () => {
  svc = await startTestService();
  pkg = await createPackage(svc, await ownerActor(svc), { name: 'Report <script>alert(1)</script>' });
  fileId = await uploadFile(svc, pkg, 'report <draft> & "final".txt', 'docs', data);
  await finalizePackage(svc, pkg);
});
afterAll(async () => {
  await svc?.close();
});

async function linkToken(body: Record<string, unknown> = {}) {
  const l = await makeLink(svc, pkg, body);
  const info = await call(svc.url, 'GET', `/v1/links/${l.id}?secret=${l.secret}`);
  expect(info.status).toBe(200);
  return { 'x-package-token': info.body.package_token as string };
}

/** How many times the service ran a statement whose SQL matches `sql` while `run` ran (the service is in this process). */
async function countingStatements(sql: RegExp, run: () => Promise<void>): Promise<number> {
  const scratch = new SQLite(':memory:');
  const proto = Object.getPrototypeOf(scratch.prepare('select 1')) as Record<'get' | 'all' | 'run', (...a: unknown[]) => unknown>;
  scratch.close();
  const kept = { get: proto.get, all: proto.all, run: proto.run };
  let n = 0;
  for (const m of ['get', 'all', 'run'] as const) {
    proto[m] = function (this: { source: string }, ...a: unknown[]) {
      if (sql.test(this.source)) n++;
      return kept[m].apply(this, a);
    };
  }
  try {
    await run();
  } finally {
    Object.assign(proto, kept);
  }
  return n;
}

const downloadUrl = (headers: Record<string, string>, query = '') =>
  call(svc.url, 'GET', `/v1/packages/${pkg.id}/files/${fileId}/download${query}`, { headers });

describe('download URLs', () => {
  it('live one hour by default', async () => {
    const before = Date.now();
    const r = await downloadUrl(pkg.h);
    expect(r.status).toBe(200);
    expect(new URL(r.body.url).searchParams.get('X-Amz-Expires')).toBe('3600');
    expect(presignedUntil(r.body.url).getTime()).toBeGreaterThanOrEqual(Math.floor(before / 1000) * 1000 + HOUR - 2000);
  });

  it('honour a shorter requested expiry and refuse one in the past (400)', async () => {
    const want = new Date(Date.now() + 10 * 60_000);
    const r = await downloadUrl(pkg.h, `?expiry=${encodeURIComponent(want.toISOString())}`);
    expect(Math.abs(presignedUntil(r.body.url).getTime() - want.getTime())).toBeLessThanOrEqual(2000);
    const past = await downloadUrl(pkg.h, `?expiry=${encodeURIComponent(new Date(Date.now() - 60_000).toISOString())}`);
    expect(past.status).toBe(400);
    expect((await downloadUrl(pkg.h, '?expiry=tomorrow')).status).toBe(400);
  });

  it('never outlive the Link they came through: a later expiry is 400, the default hour is cut to the Link', async () => {
    const linkExpiry = new Date(Date.now() + 30 * 60_000);
    const h = await linkToken({ expiry: linkExpiry.toISOString() });
    const late = await downloadUrl(h, `?expiry=${encodeURIComponent(new Date(Date.now() + 3 * DAY).toISOString())}`);
    expect(late.status).toBe(400);
    expect(late.body).toEqual({ code: 'expiry_too_late', message: expect.stringContaining(linkExpiry.toISOString()) });
    const r = await downloadUrl(h);
    expect(r.status).toBe(200);
    const until = presignedUntil(r.body.url).getTime();
    expect(until).toBeLessThanOrEqual(linkExpiry.getTime() + 1000);
    expect(until).toBeGreaterThan(linkExpiry.getTime() - 5000);
  });

  // Counted on SQLite, whose statements run in this process; the queries are the same on PostgreSQL.
  it('read the Link once per URL: the token check reads its expiry too (a query less per file downloaded)', onlyIf(!onPostgres(), 'counts SQLite statements: runs in the SQLite pass'), async () => {
    const h = await linkToken({ expiry: new Date(Date.now() + 30 * 60_000).toISOString() });
    const reads = await countingStatements(/from "links"/, async () => expect((await downloadUrl(h)).status).toBe(200));
    expect(reads).toBe(1);
  });

  it('come many at once from download_urls, each as its own request would answer it; what refuses all refuses the request', async () => {
    const linkExpiry = new Date(Date.now() + 30 * 60_000);
    const h = await linkToken({ expiry: linkExpiry.toISOString() });
    const urls = (body: unknown) => call(svc.url, 'POST', `/v1/packages/${pkg.id}/download_urls`, { headers: h, body });
    const r = await urls({ files: [{ file_id: fileId }, { file_id: 'file_nope' }, { file_id: fileId }] });
    expect(r.status).toBe(200);
    expect(r.body.results.map((o: { file_id: string; status: number }) => [o.file_id, o.status])).toEqual([[fileId, 200], ['file_nope', 404], [fileId, 200]]);
    expect(r.body.results[1]).toMatchObject({ code: 'not_found', message: expect.any(String) });
    expect((await fetchBytes(r.body.results[0].url)).data.equals(data)).toBe(true);
    expect(presignedUntil(r.body.results[0].url).getTime()).toBeLessThanOrEqual(linkExpiry.getTime() + 1000);
    const late = await urls({ files: [{ file_id: fileId }], expiry: new Date(Date.now() + 3 * DAY).toISOString() });
    expect([late.status, late.body.code]).toEqual([400, 'expiry_too_late']);
    expect((await urls({ files: [] })).status).toBe(400);
    expect((await urls({ files: Array.from({ length: 101 }, () => ({ file_id: fileId })) })).status).toBe(400);
    expect((await call(svc.url, 'POST', `/v1/packages/${pkg.id}/download_urls`, { body: { files: [{ file_id: fileId }] } })).status).toBe(401);
  });

  it('never outlive seven days: more is 400, seven days is served', async () => {
    await svc.ctx.db.updateTable('packages').set({ expiry: null }).where('id', '=', pkg.id).execute();
    const late = await downloadUrl(pkg.h, `?expiry=${encodeURIComponent(new Date(Date.now() + 7 * DAY + 60_000).toISOString())}`);
    expect(late.status).toBe(400);
    expect(late.body.code).toBe('expiry_too_late');
    const r = await downloadUrl(pkg.h, `?expiry=${encodeURIComponent(new Date(Date.now() + 7 * DAY - 1000).toISOString())}`);
    expect(r.status).toBe(200);
    expect(Number(new URL(r.body.url).searchParams.get('X-Amz-Expires'))).toBeLessThanOrEqual(7 * 24 * 3600);
    expect(Number(new URL(r.body.url).searchParams.get('X-Amz-Expires'))).toBeGreaterThan(7 * 24 * 3600 - 10);
    expect((await fetchBytes(r.body.url)).data.equals(data)).toBe(true);
  });

  it('are refused for unknown files (404) and once the Package has expired (410)', async () => {
    expect((await call(svc.url, 'GET', `/v1/packages/${pkg.id}/files/file_nope/download`, { headers: pkg.h })).status).toBe(404);
    await svc.ctx.db.updateTable('packages').set({ state: 'expired' }).where('id', '=', pkg.id).execute();
    try {
      expect((await downloadUrl(pkg.h)).status).toBe(410);
      expect((await call(svc.url, 'GET', `/v1/packages/${pkg.id}/files`, { headers: pkg.h })).status).toBe(410);
    } finally {
      await svc.ctx.db.updateTable('packages').set({ state: 'finalized' }).where('id', '=', pkg.id).execute();
    }
  });
});

const unescape = (s: string) => s.replace(/&amp;/g, '&').replace(/&quot;/g, '"').replace(/&#39;/g, "'").replace(/&lt;/g, '<').replace(/&gt;/g, '>');
const hrefs = (html: string) => [...html.matchAll(/href="([^"]+)"/g)].map((m) => unescape(m[1]!));

describe('web download page', () => {
  it('lists the files with escaped names, working download links and a working ZIP link', async () => {
    const l = await makeLink(svc, pkg);
    const res = await fetch(l.url);
    const html = await res.text();
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toContain('text/html');
    expect(res.headers.get('content-security-policy')).toContain("default-src 'none'");
    expect(res.headers.get('referrer-policy')).toBe('no-referrer');
    expect(html).not.toContain('<script>');
    expect(html).toContain('Report &lt;script&gt;alert(1)&lt;/script&gt;');
    expect(html).toContain('docs/report &lt;draft&gt; &amp; &quot;final&quot;.txt');
    expect(html).toContain('Download all (ZIP)');
    // Sizes in the one format of the app, the CLI and e-mails ("34 B", not "34 bytes").
    expect(html).toContain(`<td class="size">${bytes(data.length)}</td>`);
    expect(html).toContain(`1 file, ${bytes(data.length)}`);
    expect(bytes(data.length)).toBe(`${data.length} B`);

    const links = hrefs(html);
    const file = links.find((h) => h.includes(`/packages/${pkg.id}/`) && !h.includes('/zip/'))!;
    expect(sha256((await fetchBytes(file)).data)).toBe(sha256(data));
    const zip = links.find((h) => h.includes('/zip/zip_mac'))!;
    const entries = await readZip((await fetchBytes(zip)).data);
    expect(sha256(entries.get('docs/report <draft> & "final".txt')!)).toBe(sha256(data));
  });

  it('gives the chosen files as one ZIP through the page form, refuses a stale choice, and offers "Open in Ferry"', async () => {
    const owner = await ownerActor(svc);
    const three = await createPackage(svc, owner, { name: 'Three takes' });
    const bodies = [Buffer.from('take one\n'), Buffer.from('take two\n'), Buffer.from('take three\n')];
    const ids = [
      await uploadFile(svc, three, 'one.mov', 'day1', bodies[0]!),
      await uploadFile(svc, three, 'two.mov', 'day1', bodies[1]!),
      await uploadFile(svc, three, 'three.mov', '', bodies[2]!),
    ];
    await finalizePackage(svc, three);
    const l = await makeLink(svc, three);
    const html = await (await fetch(l.url)).text();

    // One checkbox per file, named for screen readers, all in the one GET form.
    const boxes = [...html.matchAll(/<input type="checkbox" name="file" value="([^"]+)" form="pick" aria-label="Choose ([^"]+)">/g)];
    expect(boxes.map((m) => m[2]).sort()).toEqual(['day1/one.mov', 'day1/two.mov', 'three.mov']);
    const action = /<form id="pick" method="get" action="([^"]+)">/.exec(html)![1]!;
    const token = /<input type="hidden" name="token" value="([^"]+)">/.exec(html)![1]!;
    expect(action).toBe(`${svc.url}/v1/packages/${three.id}/zip/zip_mac`);

    // What the browser sends for two ticked boxes: ?token=...&file=A&file=B.
    const chosen = new URLSearchParams([['token', token.replace(/&amp;/g, '&')], ['file', ids[0]!], ['file', ids[2]!]]);
    const zip = await fetchBytes(`${action}?${chosen}`);
    const entries = await readZip(zip.data);
    expect([...entries.keys()].filter((k) => !k.endsWith('/')).sort()).toEqual(['day1/one.mov', 'three.mov']);
    expect(entries.get('three.mov')!.equals(bodies[2]!)).toBe(true);

    const stale = await fetch(`${action}?${new URLSearchParams([['token', token], ['file', ids[1]!], ['file', 'fil_gone']])}`);
    expect(stale.status).toBe(400);
    expect(await stale.json()).toMatchObject({ code: 'unknown_file' });

    expect(html).toContain(`href="ferry://receive?url=${encodeURIComponent(l.url).replace(/&/g, '&amp;')}"`);
  });

  it('asks for the password of a locked Link and opens with the right one', async () => {
    const l = await makeLink(svc, pkg, { password: 'päss wörd' });
    const first = await fetch(l.url);
    const form = await first.text();
    expect(first.status).toBe(200);
    expect(form).toContain('<form method="post"');
    expect(form).not.toContain('Download all');

    const post = (password: string) =>
      fetch(l.url, { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: new URLSearchParams({ password }) });
    const wrong = await post('nope');
    expect(wrong.status).toBe(401);
    expect(await wrong.text()).toContain('Wrong password');
    const right = await post('päss wörd');
    expect(right.status).toBe(200);
    expect(await right.text()).toContain('Download all (ZIP)');
    const row = await svc.ctx.db.selectFrom('links').select('access_count').where('id', '=', l.id).executeTakeFirstOrThrow();
    expect(row.access_count).toBe(1);
  });

  it('counts one visit once: with its cookie, a reload, a file and the ZIP after it take no second access', async () => {
    const l = await makeLink(svc, pkg, { access_limit: 1, password: 'pw' });
    const open = await fetch(l.url, { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: new URLSearchParams({ password: 'pw' }) });
    expect(open.status).toBe(200);
    const setCookie = open.headers.get('set-cookie')!;
    expect(setCookie).toMatch(/HttpOnly/);
    expect(setCookie).toContain(`Path=/l/${l.id};`);
    const maxAge = Number(/Max-Age=(\d+)/.exec(setCookie)![1]);
    expect(maxAge).toBeGreaterThan(HOUR / 1000);
    const cookie = setCookie.split(';')[0]!;
    const file = hrefs(await open.text()).find((h) => h.includes(`/packages/${pkg.id}/`) && !h.includes('/zip/'))!;
    expect(sha256((await fetchBytes(file)).data)).toBe(sha256(data));

    // The reload: no password asked again, no access counted, and the ZIP works from the page it gives.
    const reload = await fetch(l.url, { headers: { cookie } });
    expect(reload.status).toBe(200);
    const zip = hrefs(await reload.text()).find((h) => h.includes('/zip/zip_mac'))!;
    expect((await readZip((await fetchBytes(zip)).data)).size).toBeGreaterThan(0);
    const row = await svc.ctx.db.selectFrom('links').select('access_count').where('id', '=', l.id).executeTakeFirstOrThrow();
    expect(row.access_count).toBe(1);

    // Another visitor (no cookie), a forged cookie, or another Link's cookie is a new access: refused at the limit.
    const again = (cookie?: string) =>
      fetch(l.url, { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded', ...(cookie ? { cookie } : {}) }, body: new URLSearchParams({ password: 'pw' }) });
    expect((await again()).status).toBe(403);
    expect((await again(`ferry_link=${l.id}.forged`)).status).toBe(403);
    expect(await (await fetch(l.url, { headers: { cookie: `ferry_link=${l.id}.forged` } })).text()).toContain('Password required');
    const other = await makeLink(svc, pkg, { access_limit: 1 });
    expect((await fetch(other.url, { headers: { cookie } })).status).toBe(200);
    expect((await fetch(other.url, { headers: { cookie } })).status).toBe(403);

    // A revoked Link ends the visit too.
    await svc.ctx.db.updateTable('links').set({ active: 0 }).where('id', '=', l.id).execute();
    expect((await fetch(l.url, { headers: { cookie } })).status).toBe(404);
  });

  it('answers unknown and exhausted Links with an HTML page and the matching status', async () => {
    const unknown = await fetch(`${svc.url}/l/lnk_nope?secret=x`);
    expect(unknown.status).toBe(404);
    expect(await unknown.text()).toContain('Download unavailable');
    const l = await makeLink(svc, pkg, { access_limit: 1 });
    expect((await fetch(l.url)).status).toBe(200);
    const again = await fetch(l.url);
    expect(again.status).toBe(403);
    expect(again.headers.get('content-type')).toContain('text/html');
  });
});
