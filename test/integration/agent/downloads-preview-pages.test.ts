// Receive's preview of a Package of 1,000 files: the Package's totals with the
// first page of its files, then the rest a page at a time (downloads.previewFiles),
// every file once; previews, pages and the download that follows count one access.
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { startTestAgent, type TestAgent } from '../../helpers/agent.js';
import { startTestService, type TestService } from '../../helpers/hosted.js';
import { ownerActor } from '../../helpers/auth.js';
import { createPackage, finalizePackage, makeLink, uploadFile, type Pkg } from '../../helpers/flow.js';
import { insertFileRows, type RowSpec } from '../../helpers/fileRows.js';
import { startDownload, waitForState } from '../../helpers/downloads.js';

const FILES = 1000;
const SEED = Buffer.from('one of a thousand\n');
let svc: TestService;
let a: TestAgent;
let pkg: Pkg;
let tmp: string;

beforeAll(async () => {
  svc = await startTestService();
  a = await startTestAgent(svc);
  tmp = await fs.mkdtemp(path.join(os.tmpdir(), 'ferry-preview-'));
  pkg = await createPackage(svc, await ownerActor(svc), { name: 'Thousand' });
  // One real object, which the other 999 entries share (the preview reads records, not bytes).
  const seedId = await uploadFile(svc, pkg, 'f0000.txt', 'd0', SEED);
  const seed = await svc.ctx.db.selectFrom('files').select('object_key').where('id', '=', seedId).executeTakeFirstOrThrow();
  const rows: RowSpec[] = [];
  for (let i = 1; i < FILES; i++) rows.push({ id: `file_pv${i}`, path: `d${i % 4}`, name: `f${String(i).padStart(4, '0')}.txt`, size: SEED.length, object_key: seed.object_key });
  rows.push({ id: 'file_pvdir', kind: 'directory', path: '', name: 'd0' });
  await insertFileRows(svc, pkg.id, rows);
  await finalizePackage(svc, pkg);
}, 120_000);

afterAll(async () => {
  await a?.close();
  await svc?.close();
  if (tmp) await fs.rm(tmp, { recursive: true, force: true });
});

describe('the preview of a Package of 1,000 files', () => {
  test('answers the totals and a page of files, then every other file once, page by page, and one access in all', async () => {
    const link = await makeLink(svc, pkg, { access_limit: 1 });
    const downloads = a.agent.services.downloads;
    const preview = await downloads.preview(link.url);
    expect(preview).toMatchObject({ name: 'Thousand', file_count: FILES, size: FILES * SEED.length });
    // A page of the list is 200 entries; its one folder is no row of the preview.
    expect(preview.files).toHaveLength(199);
    expect(preview.next).not.toBeNull();
    const seen = preview.files.map((f) => f.file_id);
    let next = preview.next;
    for (let pages = 0; next && pages < 10; pages++) {
      const page = await downloads.previewFiles(link.url, undefined, next);
      expect(page.files.length).toBeLessThanOrEqual(200);
      seen.push(...page.files.map((f) => f.file_id));
      next = page.next;
    }
    expect(next).toBeNull();
    expect(seen).toHaveLength(FILES);
    expect(new Set(seen).size).toBe(FILES);

    // Two files chosen from a later page: the download fetches those, on the same access.
    const chosen = seen.slice(500, 502);
    const id = await startDownload(a.url, { url: link.url, dst_folder: tmp, file_ids: chosen, create_package_folder: false });
    const record = await waitForState(a.url, id);
    expect(record.state).toBe('complete');
    expect(record.items.map((i: { file_id: string }) => i.file_id).sort()).toEqual([...chosen].sort());
    const row = await svc.ctx.db.selectFrom('links').select('access_count').where('id', '=', link.id).executeTakeFirstOrThrow();
    expect(row.access_count).toBe(1);
  });

  test('refuses a cursor the service did not give', async () => {
    const link = await makeLink(svc, pkg);
    await downloads().preview(link.url);
    await expect(downloads().previewFiles(link.url, undefined, 'AAAA')).rejects.toMatchObject({ status: 400 });
  });
});

const downloads = () => a.agent.services.downloads;
