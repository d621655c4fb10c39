// GET /v1/packages/{id}/files?after=&limit=: a Package's entries a page at a time
// (Ferry's addition), every entry once and in the whole list's order, also while
// files are added and finalized between pages; the spec's whole array streamed; on SQLite and on PostgreSQL
// (FERRY_TEST_DATABASE=postgres runs this file there).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, startTestService, type TestService } from '../../helpers/hosted.js';
import { ownerActor } from '../../helpers/auth.js';
import { createPackage, type Pkg } from '../../helpers/flow.js';
import { finalizeRows, insertFileRows, type RowSpec } from '../../helpers/fileRows.js';

let svc: TestService;
beforeAll(async () => {
  svc = await startTestService();
});
afterAll(async () => {
  await svc?.close();
});

/** Folders of 100 entries, names that sort differently by case and by kind, a folder and a file of one name. */
function specs(prefix: string, n: number, state: 'pending' | 'finalized' = 'finalized'): RowSpec[] {
  const out: RowSpec[] = [];
  for (let i = 0; i < n; i++) {
    const folder = `${prefix}${String(Math.floor(i / 100)).padStart(3, '0')}`;
    const name = i % 7 === 0 ? `Clip ${i}.mov` : i % 7 === 1 ? `clip ${i}.mov` : `été ${i}.txt`;
    out.push({ id: `file_${prefix}${i}`, path: i % 50 === 0 ? '' : folder, name, size: i, state, ...(i % 97 === 0 ? { kind: 'directory' as const } : {}) });
  }
  return out;
}

async function page(pkg: Pkg, query: string) {
  const r = await call(svc.url, 'GET', `/v1/packages/${pkg.id}/files?${query}`, { headers: pkg.h });
  expect(r.status, JSON.stringify(r.body)).toBe(200);
  return r.body as { files: { id: string; kind: string; path: string; name: string }[]; next: string | null };
}

/** Every page, with a hook between pages; bounded by the number of pages the entries can fill. */
async function allPages(pkg: Pkg, limit: number, maxPages: number, between?: (n: number) => Promise<void>) {
  const pages: { id: string }[][] = [];
  let after: string | null = null;
  do {
    const p = await page(pkg, `limit=${limit}${after ? `&after=${after}` : ''}`);
    pages.push(p.files);
    after = p.next;
    if (after) await between?.(pages.length);
  } while (after && pages.length <= maxPages);
  expect(after, 'the pages ended').toBeNull();
  return pages;
}

describe('the paged file list', () => {
  it('answers every entry of a Package of thousands once, in the order of the whole list, without the ZIP entries', async () => {
    const pkg = await createPackage(svc, await ownerActor(svc));
    await insertFileRows(svc, pkg.id, specs('a', 3000));
    const whole = await call(svc.url, 'GET', `/v1/packages/${pkg.id}/files`, { headers: pkg.h });
    expect(whole.status).toBe(200);
    expect(Array.isArray(whole.body)).toBe(true);
    const expected = (whole.body as { id: string; kind: string }[]).filter((f) => f.kind === 'file' || f.kind === 'directory');
    expect(expected).toHaveLength(3000);

    const pages = await allPages(pkg, 250, 12);
    expect(pages).toHaveLength(12);
    expect(pages.every((p) => p.length === 250)).toBe(true);
    expect(pages.flat()).toEqual(expected);
  });

  it("writes the spec's whole array as it reads it (no Content-Length): the pages' entries, then the two ZIP entries, each a FileObject", async () => {
    const pkg = await createPackage(svc, await ownerActor(svc));
    await insertFileRows(svc, pkg.id, specs('w', 2500));
    const res = await fetch(`${svc.url}/v1/packages/${pkg.id}/files`, { headers: pkg.h });
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('application/json; charset=utf-8');
    // Streamed in pieces of the database's pages, so its length is not known up front.
    expect(res.headers.get('content-length')).toBeNull();
    expect(res.headers.get('transfer-encoding')).toBe('chunked');
    const whole = (await res.json()) as Record<string, unknown>[];
    const pages = await allPages(pkg, 1000, 3);
    expect(whole.slice(0, 2500)).toEqual(pages.flat());
    expect(whole.slice(2500).map((f) => f.kind)).toEqual(['zip_windows', 'zip_mac']);
    const fields = ['id', 'kind', 'last_modified', 'name', 'path', 'size', 'virus_detected'];
    expect(whole.filter((f) => f.kind === 'file').every((f) => JSON.stringify(Object.keys(f).sort()) === JSON.stringify(fields))).toBe(true);

    const deleted = await call(svc.url, 'DELETE', `/v1/packages/${pkg.id}`, { headers: (await ownerActor(svc)).h });
    expect(deleted.status).toBe(204);
    const gone = await call(svc.url, 'GET', `/v1/packages/${pkg.id}/files`, { headers: pkg.h });
    expect(gone.status).toBe(410);
    expect(typeof gone.body.message).toBe('string');
  });

  it('answers the last page with next null, also when it is full, and the first page with limit alone', async () => {
    const pkg = await createPackage(svc, await ownerActor(svc));
    await insertFileRows(svc, pkg.id, specs('b', 10));
    const first = await page(pkg, 'limit=10');
    expect(first.files).toHaveLength(10);
    expect(first.next).toBeNull();
    const small = await page(pkg, 'limit=4');
    expect(small.next).not.toBeNull();
    const rest = await page(pkg, `after=${small.next}`);
    expect(rest.files).toHaveLength(6);
    expect(rest.next).toBeNull();
  });

  it('keeps every entry once and in order while files are registered and finalized between pages', async () => {
    const pkg = await createPackage(svc, await ownerActor(svc));
    const before = specs('c', 2000);
    await insertFileRows(svc, pkg.id, before);
    const pending = specs('d', 1000, 'pending');
    await insertFileRows(svc, pkg.id, pending);
    let added = 0;
    const pages = await allPages(pkg, 200, 40, async (n) => {
      // Each pause: 100 new finalized entries all over the order, and 100 pending ones finalized.
      await insertFileRows(svc, pkg.id, specs(`e${n}-`, 100));
      await finalizeRows(svc, pending.slice((n - 1) * 100, n * 100).map((p) => p.id));
      added += 100;
    });
    const seen = pages.flat().map((f) => f.id);
    expect(new Set(seen).size, 'no entry twice').toBe(seen.length);
    for (const f of before) expect(seen).toContain(f.id);
    const listed = pages.flat() as unknown as { path: string; kind: string; name: string; id: string }[];
    const key = (f: { path: string; kind: string; name: string; id: string }) => [f.path, f.kind, f.name, f.id];
    for (let i = 1; i < listed.length; i++) expect(compareKeys(key(listed[i - 1]!), key(listed[i]!)), `entry ${i} in order`).toBeLessThan(0);
    expect(added).toBeGreaterThan(0);
  });

  it('refuses a cursor it did not give and a limit out of range with {code, message}', async () => {
    const pkg = await createPackage(svc, await ownerActor(svc));
    await insertFileRows(svc, pkg.id, specs('f', 3));
    const forged = Buffer.from(JSON.stringify(['', 'folder', 'x'])).toString('base64url');
    for (const [query, code] of [
      ['after=not%20base64', 'validation_failed'],
      ['after=AAAA', 'invalid_cursor'],
      [`after=${forged}`, 'invalid_cursor'],
      ['limit=0', 'validation_failed'],
      ['limit=5001', 'validation_failed'],
      ['limit=ten', 'validation_failed'],
    ] as const) {
      const r = await call(svc.url, 'GET', `/v1/packages/${pkg.id}/files?${query}`, { headers: pkg.h });
      expect(r.status, query).toBe(400);
      expect(r.body.code, query).toBe(code);
      expect(typeof r.body.message).toBe('string');
    }
  });

  it('asks for the same credential as the whole list', async () => {
    const pkg = await createPackage(svc, await ownerActor(svc));
    expect((await call(svc.url, 'GET', `/v1/packages/${pkg.id}/files?limit=5`)).status).toBe(401);
    // Another Package's token: as the whole list answers it.
    const other = await createPackage(svc, await ownerActor(svc));
    const whole = await call(svc.url, 'GET', `/v1/packages/${pkg.id}/files`, { headers: other.h });
    const paged = await call(svc.url, 'GET', `/v1/packages/${pkg.id}/files?limit=5`, { headers: other.h });
    expect(whole.status).toBeGreaterThanOrEqual(400);
    expect(paged.status).toBe(whole.status);
    expect(paged.body.code).toBe(whole.body.code);
  });
});

/** The database's order of the tests' keys: byte order of UTF-8 text, field by field (a C collation). */
function compareKeys(a: string[], b: string[]): number {
  for (let i = 0; i < a.length; i++) {
    const c = Buffer.compare(Buffer.from(a[i]!), Buffer.from(b[i]!));
    if (c !== 0) return c;
  }
  return 0;
}
