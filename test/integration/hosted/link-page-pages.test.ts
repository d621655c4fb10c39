// The Link page of a Package of thousands of files shows them a page at a time:
// never more than 200 rows (and signed URLs) in its HTML, every file once across
// its pages, one visit counted for all of them.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestService, type TestService } from '../../helpers/hosted.js';
import { ownerActor } from '../../helpers/auth.js';
import { createPackage, finalizePackage, makeLink, type Pkg } from '../../helpers/flow.js';
import { insertFileRows, type RowSpec } from '../../helpers/fileRows.js';

const FILES = 1050;
let svc: TestService;
let pkg: Pkg;
beforeAll(async () => {
  svc = await startTestService();
  pkg = await createPackage(svc, await ownerActor(svc), { name: 'Many files' });
  const rows: RowSpec[] = [];
  for (let i = 0; i < FILES; i++) rows.push({ id: `file_lp${i}`, path: `folder ${i % 3}`, name: `clip ${String(i).padStart(4, '0')}.mov`, size: 10, object_key: `packages/${pkg.id}/file_lp${i}` });
  // Folders among the files: passed over, not shown as rows.
  for (let i = 0; i < 3; i++) rows.push({ id: `file_dir${i}`, kind: 'directory', path: '', name: `folder ${i}` });
  await insertFileRows(svc, pkg.id, rows);
  await finalizePackage(svc, pkg);
});
afterAll(async () => {
  await svc?.close();
});

const rowsOf = (html: string) => [...html.matchAll(/<input type="checkbox" name="file" value="([^"]+)"/g)].map((m) => m[1]!);
const nextOf = (html: string) => /<a class="btn ghost" href="([^"]+)">Next files<\/a>/.exec(html)?.[1]?.replace(/&amp;/g, '&');

describe('the Link page of a Package of 1050 files', () => {
  it('shows 200 files a page, every file once across the pages, and counts one visit', async () => {
    const link = await makeLink(svc, pkg);
    const first = await fetch(link.url);
    expect(first.status).toBe(200);
    const cookie = first.headers.get('set-cookie')!.split(';')[0]!;
    let html = await first.text();
    expect(html).toContain('1,050 files');
    expect(html).not.toContain('First files');
    const seen: string[] = [];
    for (let pages = 1; ; pages++) {
      const rows = rowsOf(html);
      expect(rows.length).toBeLessThanOrEqual(200);
      expect((html.match(/X-Amz-Signature/g) ?? []).length).toBeLessThanOrEqual(200);
      seen.push(...rows);
      const next = nextOf(html);
      if (!next) break;
      expect(pages).toBeLessThan(6);
      const res = await fetch(new URL(next, link.url), { headers: { cookie } });
      expect(res.status).toBe(200);
      html = await res.text();
      expect(html).toContain('First files');
    }
    expect(seen).toHaveLength(FILES);
    expect(new Set(seen).size).toBe(FILES);
    const row = await svc.ctx.db.selectFrom('links').select('access_count').where('id', '=', link.id).executeTakeFirstOrThrow();
    expect(row.access_count).toBe(1);
  });

  it('answers a cursor it did not give with an error page', async () => {
    const link = await makeLink(svc, pkg);
    const res = await fetch(`${link.url}&after=AAAA`);
    expect(res.status).toBe(400);
    expect(res.headers.get('content-type')).toContain('text/html');
    expect(await res.text()).toContain('Download unavailable');
  });
});
