// A download's plan never holds its Package's list: the listing is staged a page
// at a time in SQLite (downloadStage.ts, downloadPlan.ts), narrowed there once
// whole, and the download takes the stage in one statement.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { openAgentDb, type AgentDb } from '../../../src/agent/store/db.js';
import { DownloadPlan } from '../../../src/agent/engine/downloadPlan.js';
import { insertDownload, itemsAfter, type DownloadRow } from '../../../src/agent/store/downloadStore.js';
import { AgentError } from '../../../src/agent/errors.js';
import type { FileObject } from '../../../src/api/hosted/files.js';

let dir: string;
let db: AgentDb;

beforeEach(() => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'ferry-dlstage-'));
  db = openAgentDb(path.join(dir, 'agent.db'));
});

afterEach(async () => {
  await db.shut().catch(() => undefined);
  fs.rmSync(dir, { recursive: true, force: true });
});

const staged = () => (db.prepare('SELECT COUNT(*) AS n FROM download_listing').get() as { n: number }).n;
const file = (id: string, p: string, name: string, extra: Partial<FileObject> = {}) =>
  ({ id, kind: 'file', path: p, name, size: 3, last_modified: '2026-01-01T00:00:00Z', virus_detected: false, ...extra }) as FileObject;
const folder = (id: string, p: string, name: string) => ({ id, kind: 'directory', path: p, name, size: 0, virus_detected: false }) as FileObject;

const row = (id: string): DownloadRow => ({
  id, api_base: 'http://127.0.0.1:1', link_id: 'l', link_secret: 's', link_password: null, package_id: 'pkg_1', package_name: 'P',
  package_token: 't', dst_folder: dir, root_segments: '[]', chunk_size: 1024, priority: 0, user_id: null, group_id: null,
  state: 'transferring', error: null, created_at: '2026-01-01T00:00:00Z', updated_at: '2026-01-01T00:00:00Z',
});

describe('the listing staged in SQLite', () => {
  it('keeps every file in listing order across pages, numbered from 0; folders are not entries; a refused path is skipped with why', () => {
    const plan = new DownloadPlan(db, 'linux');
    plan.add([folder('d1', '', 'a'), file('f1', 'a', 'one'), file('f2', 'a', 'two')]);
    plan.add([file('f3', 'b', 'three'), file('bad', '..', 'escape'), { id: 'z', kind: 'zip', path: '', name: 'all.zip' } as unknown as FileObject]);
    plan.narrow({ bypassQuarantine: true });
    insertDownload(db, row('dl1'), plan.stage);
    const items = itemsAfter(db, 'dl1', -1, 100);
    expect(items.map((i) => [i.seq, i.file_id, i.state])).toEqual([
      [0, 'f1', 'pending'], [1, 'f2', 'pending'], [2, 'f3', 'pending'], [3, 'bad', 'skipped'],
    ]);
    expect(items[3]!.error).toMatch(/^refused: /);
    expect(JSON.parse(items[2]!.segments!)).toEqual(['b', 'three']);
    plan.drop();
    expect(staged()).toBe(0);
  });

  it('a folder named in file_ids selects the files beneath it even when it is listed after them', () => {
    const plan = new DownloadPlan(db, 'linux');
    plan.add([file('f1', 'docs/deep', 'x'), file('f2', 'docs', 'y'), file('f3', 'docs/deeper', 'z')]);
    plan.add([folder('dd', 'docs', 'deep'), file('f4', '', 'top')]);
    plan.narrow({ fileIds: ['dd', 'f4'], bypassQuarantine: true });
    insertDownload(db, row('dl2'), plan.stage);
    expect(itemsAfter(db, 'dl2', -1, 100).map((i) => i.file_id)).toEqual(['f1', 'f4']);
    expect([...plan.dirBatches()].flat()).toEqual([['docs', 'deep']]);
  });

  it('an id that is not in the Package is a 400, a flagged file refuses the Package unless it may be skipped', () => {
    const plan = new DownloadPlan(db, 'linux');
    plan.add([file('f1', '', 'a'), file('bad', '', 'b', { virus_detected: true })]);
    expect(() => plan.narrow({ fileIds: ['nope'], bypassQuarantine: true })).toThrow(/"nope" is not a file of this Package/);
    try {
      plan.narrow({ bypassQuarantine: false });
      expect.unreachable();
    } catch (err) {
      expect((err as AgentError).status).toBe(409);
    }
    plan.narrow({ bypassQuarantine: true });
    insertDownload(db, row('dl3'), plan.stage);
    expect(itemsAfter(db, 'dl3', -1, 10).map((i) => [i.file_id, i.state, i.error])).toEqual([
      ['f1', 'pending', null], ['bad', 'skipped', 'skipped: flagged with malware'],
    ]);
  });

  it('reset starts the listing over (a token that stopped working half-way), and the root folder is judged from the whole Package', () => {
    const plan = new DownloadPlan(db, 'linux');
    plan.add([file('f1', '', 'loose')]);
    plan.reset();
    plan.add([file('f1', 'Reel', 'a')]);
    plan.add([file('f2', 'Reel/sub', 'b')]);
    expect(staged()).toBe(2);
    expect(plan.rootSegments('Reel', 'pkg_1')).toEqual([]);
    plan.add([file('f3', 'Other', 'c')]);
    expect(plan.rootSegments('Reel', 'pkg_1')).toEqual(['Reel']);
  });

  it('two plans at once keep their own stages', () => {
    const a = new DownloadPlan(db, 'linux');
    const b = new DownloadPlan(db, 'linux');
    a.add([file('f1', '', 'a')]);
    b.add([file('g1', '', 'b'), file('g2', '', 'c')]);
    a.drop();
    expect(staged()).toBe(2);
    insertDownload(db, row('dl4'), b.stage);
    expect(itemsAfter(db, 'dl4', -1, 10).map((i) => i.file_id)).toEqual(['g1', 'g2']);
  });
});
