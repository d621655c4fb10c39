// An upload's entries never all in memory: the walk stages them in SQLite as it
// goes (walkStage.ts, uploadPlan.ts), the upload takes the stage in one
// statement, a run reads the files left a window at a time (pendingFiles.ts),
// and the summary reads kept totals instead of counting (uploadTotals.ts).
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { openAgentDb, type AgentDb } from '../../../src/agent/store/db.js';
import { PendingFiles } from '../../../src/agent/engine/pendingFiles.js';
import { planUpload, planOf } from '../../../src/agent/engine/uploadPlan.js';
import { walkPaths } from '../../../src/agent/engine/walk.js';
import { deleteUpload, insertStagedUpload, insertUpload, markFileDone, recordPart, resetFile, type NewUpload } from '../../../src/agent/store/uploadStore.js';
import { uploadTotals } from '../../../src/agent/store/uploadTotals.js';
import { AgentError } from '../../../src/agent/errors.js';

let dir: string;
let db: AgentDb;

beforeEach(() => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'ferry-staging-'));
  db = openAgentDb(path.join(dir, 'agent.db'));
});

afterEach(async () => {
  await db.shut().catch(() => undefined);
  fs.rmSync(dir, { recursive: true, force: true });
});

const upload = (id: string, size = 0): NewUpload => ({
  id, type: 'team', state: 'transferring', package_id: 'pkg_1', package_token: 't', name: id, package_name: id,
  priority: 0, chunk_size: 1024, auto_finalize: 1, delete_after: null, size,
});
const staged = () => (db.prepare('SELECT COUNT(*) AS n FROM walk_entries').get() as { n: number }).n;
const put = (rel: string, data = 'x') => {
  fs.mkdirSync(path.dirname(path.join(dir, rel)), { recursive: true });
  fs.writeFileSync(path.join(dir, rel), data);
};

describe('the walk staged in SQLite', () => {
  it('stages every entry in walk order, counts them, and the upload takes them all in one statement, leaving no stage', async () => {
    for (let i = 0; i < 1200; i++) put(`tree/d${String(i % 7)}/f${String(i).padStart(4, '0')}.bin`, 'ab');
    fs.mkdirSync(path.join(dir, 'tree/void'));
    const plan = await planUpload(db, [path.join(dir, 'tree')]);
    expect(plan).toMatchObject({ count: 1201, files: 1200, size: 2400, name: 'tree' });
    expect(staged()).toBe(1201);
    insertStagedUpload(db, upload('upl_a', plan.size), plan.stage);
    expect(staged()).toBe(0);
    const rows = db.prepare("SELECT idx, kind, rel_dir, name FROM upload_files WHERE upload_id = 'upl_a' ORDER BY idx").all() as { idx: number; kind: string; rel_dir: string; name: string }[];
    // The same entries, in the same order, as the walk held in memory gives.
    const walked = await walkPaths([path.join(dir, 'tree')]);
    expect(rows.map((r) => `${r.idx} ${r.kind} ${r.rel_dir}/${r.name}`)).toEqual(walked.map((e, i) => `${i} ${e.kind} ${e.relDir}/${e.name}`));
  });

  it('two given paths that put two entries at one place answer 400 and leave nothing staged; other folders of one name merge', async () => {
    put('a/shoot/one.mov');
    put('b/shoot/two.mov');
    put('c/shoot/one.mov');
    const merged = await planUpload(db, [path.join(dir, 'a/shoot'), path.join(dir, 'b/shoot')]);
    expect(merged.files).toBe(2);
    const err = await planUpload(db, [path.join(dir, 'a/shoot'), path.join(dir, 'c/shoot')]).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(AgentError);
    expect((err as AgentError).message).toBe(`two entries would be "shoot/one.mov" in the package; ${path.join(dir, 'c/shoot/one.mov')} clashes`);
    expect(staged()).toBe(2); // only the first plan's, still to be taken or dropped
  });

  it('a plan of entries walked before (a watch folder) stages them as given', async () => {
    put('unit/x.txt', 'xyz');
    const plan = await planOf(db, 'unit', await walkPaths([path.join(dir, 'unit')]));
    expect(plan).toMatchObject({ count: 1, files: 1, size: 3, name: 'unit' });
  });
});

describe('PendingFiles: the files left, a window at a time', () => {
  const N = 1000;
  beforeEach(() => {
    insertUpload(db, upload('upl_p'), Array.from({ length: N }, (_, i) => ({ kind: 'file' as const, local_path: `/x/${i}`, rel_dir: '', name: `${i}`, size: 3000, mtime_ms: 1 })));
    // Every third file done; files 1 and 500 have parts recorded (a resume).
    db.prepare("UPDATE upload_files SET done = 1 WHERE upload_id = 'upl_p' AND idx % 3 = 0").run();
    for (const idx of [1, 500, 501]) {
      db.prepare("INSERT INTO upload_parts (upload_id, file_idx, part_number, etag, size) VALUES ('upl_p', ?, 1, ?, 1024)").run(idx, `"e${idx}"`);
    }
  });

  it('hands out every file not done once, in order, with its recorded parts, holding at most one window', () => {
    const q = new PendingFiles(db, 'upl_p', 50);
    const got: number[] = [];
    let most = 0;
    for (let f = q.next(); f; f = q.next()) {
      got.push(f.row.idx);
      most = Math.max(most, q.held);
      if (f.row.idx === 1 || f.row.idx === 500) expect([...f.done.keys()], `file ${f.row.idx}`).toEqual([1]);
      else expect(f.done.size, `file ${f.row.idx}`).toBe(0);
    }
    expect(got).toEqual(Array.from({ length: N }, (_, i) => i).filter((i) => i % 3 !== 0));
    expect(most).toBeLessThanOrEqual(50);
    expect(q.empty).toBe(true);
  });

  it('a file put back comes out first; files finished in the run are not read again', () => {
    const q = new PendingFiles(db, 'upl_p', 10);
    const first = q.next()!;
    const second = q.next()!;
    expect([first.row.idx, second.row.idx]).toEqual([1, 2]);
    // Finished, its done flag written: the cursor is past it anyway.
    db.prepare("UPDATE upload_files SET done = 1 WHERE upload_id = 'upl_p' AND idx = 2").run();
    q.putBack(first);
    expect(q.next()).toBe(first);
    expect(q.next()!.row.idx).toBe(4);
  });
});

describe('kept totals (uploadTotals.ts): the summary without counting', () => {
  /** The totals as counted from the rows, the way the summary was read before they were kept. */
  const counted = (id: string) => {
    const [files, filesDone, doneBytes] = db
      .prepare('SELECT COUNT(*), COALESCE(SUM(done), 0), COALESCE(SUM(CASE WHEN done THEN size ELSE 0 END), 0) FROM upload_files WHERE upload_id = ?')
      .raw(true)
      .get(id) as number[];
    const [partBytes] = db
      .prepare('SELECT COALESCE(SUM(p.size), 0) FROM upload_parts p JOIN upload_files f ON f.upload_id = p.upload_id AND f.idx = p.file_idx WHERE p.upload_id = ? AND f.done = 0')
      .raw(true)
      .get(id) as number[];
    return { files, files_done: filesDone, progress: doneBytes! + partBytes! };
  };

  it('equal the counted ones through parts recorded and recorded again, files done, files started over (one of them done), and a deleted upload', async () => {
    const files = Array.from({ length: 40 }, (_, i) => ({ kind: 'file' as const, local_path: `/x/${i}`, rel_dir: '', name: `${i}`, size: 5000 + i, mtime_ms: 1 }));
    insertUpload(db, upload('upl_t'), files);
    insertUpload(db, upload('upl_other'), files.slice(0, 3));
    expect(uploadTotals(db, 'upl_t')).toEqual({ files: 40, files_done: 0, progress: 0 });
    for (let i = 0; i < 40; i++) recordPart(db, 'upl_t', i, { part_number: 1, etag: '"a"', size: 1024 });
    recordPart(db, 'upl_t', 3, { part_number: 1, etag: '"b"', size: 2048 }); // the same part again, another size
    recordPart(db, 'upl_other', 0, { part_number: 1, etag: '"a"', size: 7 });
    for (let i = 0; i < 25; i++) markFileDone(db, 'upl_t', i);
    resetFile(db, 'upl_t', 30);
    resetFile(db, 'upl_t', 2); // done already: its parts no longer count, its size does
    await db.synced();
    const kept = uploadTotals(db, 'upl_t');
    expect(kept).toEqual(counted('upl_t'));
    expect(kept.files_done).toBe(25);
    expect(uploadTotals(db, 'upl_other')).toEqual({ files: 3, files_done: 0, progress: 7 });
    deleteUpload(db, 'upl_t');
    expect(db.prepare("SELECT COUNT(*) AS n FROM upload_totals WHERE upload_id = 'upl_t'").get()).toEqual({ n: 0 });
  });

  it('are counted by the migration for the uploads of a database made before them', async () => {
    insertUpload(db, upload('upl_m'), Array.from({ length: 5 }, (_, i) => ({ kind: 'file' as const, local_path: `/x/${i}`, rel_dir: '', name: `${i}`, size: 100, mtime_ms: 1 })));
    recordPart(db, 'upl_m', 4, { part_number: 1, etag: '"a"', size: 30 });
    markFileDone(db, 'upl_m', 0);
    await db.synced();
    // As an older agent left it: no totals table, no triggers, no migration 10.
    db.exec(`DROP TABLE upload_totals; DROP TRIGGER upload_file_done; DROP TRIGGER upload_part_added; DROP TRIGGER upload_part_resized;
      DROP TRIGGER upload_part_removed; DELETE FROM schema_migrations WHERE version = 10`);
    await db.shut();
    db = openAgentDb(path.join(dir, 'agent.db'));
    expect(uploadTotals(db, 'upl_m')).toEqual({ files: 5, files_done: 1, progress: 130 });
  });
});
