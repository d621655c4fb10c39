// Transfers of many files (docs/agent-api-notes/transfers.md), against a real
// service, store and agent: the change events of an upload and of a download
// rebuild exactly their summaries and their files; the file pages list every
// file once, in order, while files change state; the whole records (more files
// than one of their pages) are sent as they are read and list the same files,
// and a removal answers the records it removed; summaries and pages validate
// their input; a transfer nobody follows the files of sends no file changes.
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, test, vi } from 'vitest';
import { call, startTestService, type TestService } from '../../helpers/hosted.js';
import { ownerActor, type Actor } from '../../helpers/auth.js';
import { changeOf, openEventStream, signInAgent, startTestAgent, summariesOf, type EventStream, type SseMessage, type TestAgent } from '../../helpers/agent.js';
import { AgentErrorCode } from '../../../src/api/agent/errors.js';

// More files than a page of the whole record (1,000), so it is read in several.
const FOLDERS = 11;
const PER_FOLDER = 100;
const FILES = FOLDERS * PER_FOLDER;

let svc: TestService;
let owner: Actor;
let agent: TestAgent;
let tmp: string;
let src: string;

beforeAll(async () => {
  svc = await startTestService();
  owner = await ownerActor(svc);
  agent = await startTestAgent(svc, { concurrency: '4' });
  await signInAgent(agent.url, svc);
  tmp = await fs.mkdtemp(path.join(os.tmpdir(), 'ferry-changes-'));
  src = path.join(tmp, 'dataset');
  for (let d = 0; d < FOLDERS; d++) {
    await fs.mkdir(path.join(src, `d${d}`), { recursive: true });
    for (let f = 0; f < PER_FOLDER; f++) await fs.writeFile(path.join(src, `d${d}`, `f${f}.bin`), Buffer.alloc(10 + f, d));
  }
}, 60_000);

afterAll(async () => {
  await agent?.close();
  await svc?.close();
  if (tmp) await fs.rm(tmp, { recursive: true, force: true });
});

/** The files a stream's `files` changes rebuild, by index: each entry replaces the file of its index. */
function filesOf(received: SseMessage[], direction: 'upload' | 'download', id: string): unknown[] {
  const byIndex = new Map<number, unknown>();
  for (const m of received) if (changeOf(m, direction, id) && m.json.change === 'files') for (const f of m.json.files) byIndex.set(f.index, f);
  return [...byIndex.keys()].sort((a, b) => a - b).map((i) => byIndex.get(i));
}

/** Every file, read a page of `limit` at a time. */
async function allPages(kind: 'uploads' | 'downloads', id: string, limit: number): Promise<{ index: number; path: string; state: string }[]> {
  const out: { index: number; path: string; state: string }[] = [];
  let after: number | null = -1;
  for (let pages = 0; after !== null && pages < 10_000; pages++) {
    const r: { status: number; body: any } = await call(agent.url, 'GET', `/${kind}/${id}/files?after=${after}&limit=${limit}`);
    expect(r.status, JSON.stringify(r.body)).toBe(200);
    out.push(...r.body.files);
    after = r.body.next;
  }
  return out;
}

async function settled(kind: 'uploads' | 'downloads', id: string): Promise<any> {
  let last: any;
  await vi.waitFor(async () => {
    last = (await call(agent.url, 'GET', `/${kind}/${id}?files=false`)).body;
    expect(['complete', 'error']).toContain(last.state);
  }, { timeout: 120_000, interval: 100 });
  return last;
}

describe('an upload and a download of many files', () => {
  let events: EventStream;
  let quiet: EventStream;
  let uploadId: string;
  let pagesDuring: { index: number; path: string; state: string }[][] = [];

  beforeAll(async () => {
    events = await openEventStream(agent.url, { query: 'types=upload,download&files=*' });
    quiet = await openEventStream(agent.url, { query: 'types=upload,download' });
    const r = await call(agent.url, 'POST', '/uploads', { body: { team_id: owner.teamId, paths: [src] } });
    expect(r.status, JSON.stringify(r.body)).toBe(201);
    uploadId = r.body.upload_id;
    // Pages read while files register, go and complete.
    for (let i = 0; i < 3; i++) pagesDuring.push(await allPages('uploads', uploadId, 7));
    await settled('uploads', uploadId);
  }, 180_000);

  afterAll(() => {
    events?.close();
    quiet?.close();
  });

  test('the upload\'s changes rebuild exactly its summary and its files', async () => {
    const summary = (await call(agent.url, 'GET', `/uploads/${uploadId}?files=false`)).body;
    expect(summary).toMatchObject({ state: 'complete', file_count: FILES, files_done: FILES });
    expect(summary.items).toBeUndefined();
    await vi.waitFor(() => expect(summariesOf(events.received, 'upload', uploadId).at(-1)?.state).toBe('complete'));
    expect(summariesOf(events.received, 'upload', uploadId).at(-1)).toEqual({ direction: 'upload', ...summary });
    const record = (await call(agent.url, 'GET', `/uploads/${uploadId}`)).body;
    expect(record.items).toHaveLength(FILES);
    expect(filesOf(events.received, 'upload', uploadId)).toEqual(record.items.map((item: object, index: number) => ({ index, ...item })));
    // Progress only went up, and the totals came as totals, not as whole summaries.
    const kinds = events.received.filter((m) => changeOf(m, 'upload', uploadId)).map((m) => m.json.change);
    expect(kinds).toContain('progress');
    const progress = summariesOf(events.received, 'upload', uploadId).map((s) => s.progress);
    expect(progress).toEqual([...progress].sort((a, b) => a - b));
  });

  test('pages read while the upload moved list every file once, in order', async () => {
    const paths = (await call(agent.url, 'GET', `/uploads/${uploadId}`)).body.items.map((i: { path: string }) => i.path);
    for (const pages of pagesDuring) {
      expect(pages.map((f) => f.index)).toEqual([...Array(FILES).keys()]);
      expect(pages.map((f) => f.path)).toEqual(paths);
    }
    expect(pagesDuring.some((pages) => pages.some((f) => f.state !== 'complete')), 'a page saw files not yet complete').toBe(true);
  });

  test('the whole record is sent as it is read: chunked, with every file once as the pages list them, in the list of all uploads too', async () => {
    const res = await fetch(`${agent.url}/uploads/${uploadId}`);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^application\/json/);
    expect(res.headers.get('content-length')).toBeNull();
    expect(res.headers.get('transfer-encoding')).toBe('chunked');
    const record = (await res.json()) as { items: object[] };
    const pages = await allPages('uploads', uploadId, 500);
    expect(record.items.map((item: object, index: number) => ({ index, ...item }))).toEqual(pages);
    const { items: _, ...rest } = record;
    expect(rest).toEqual((await call(agent.url, 'GET', `/uploads/${uploadId}?files=false`)).body);
    const all = (await call(agent.url, 'GET', '/uploads')).body;
    expect(all.find((u: { upload_id: string }) => u.upload_id === uploadId)).toEqual(record);
  });

  test('a stream that follows no files gets none, only summaries and totals', () => {
    const kinds = new Set(quiet.received.filter((m) => changeOf(m, 'upload', uploadId)).map((m) => m.json.change));
    expect(kinds.has('record')).toBe(true);
    expect(kinds.has('files')).toBe(false);
  });

  test('the download\'s changes rebuild exactly its summary and its entries', async () => {
    const link = await call(agent.url, 'POST', `/uploads/${uploadId}/link`, { body: {} });
    expect(link.status, JSON.stringify(link.body)).toBe(201);
    const r = await call(agent.url, 'POST', '/downloads', { body: { url: link.body.url, dst_folder: path.join(tmp, 'received') } });
    expect(r.status, JSON.stringify(r.body)).toBe(201);
    const id = r.body.download_id;
    const summary = await settled('downloads', id);
    expect(summary).toMatchObject({ state: 'complete', file_count: FILES, files_done: FILES });
    await vi.waitFor(() => expect(summariesOf(events.received, 'download', id).at(-1)?.state).toBe('complete'));
    expect(summariesOf(events.received, 'download', id).at(-1)).toEqual({ direction: 'download', ...summary });
    const record = (await call(agent.url, 'GET', `/downloads/${id}`)).body;
    expect(filesOf(events.received, 'download', id)).toEqual(record.items.map((item: object, index: number) => ({ index, ...item })));
    expect(await allPages('downloads', id, 50)).toEqual(record.items.map((item: object, index: number) => ({ index, ...item })));
    // Removed: the answer is the whole record as it was, one `removed` change, and the download is gone.
    const gone = await call(agent.url, 'DELETE', `/downloads/${id}`);
    expect(gone.status).toBe(200);
    expect(gone.body).toEqual(record);
    await events.next((m) => changeOf(m, 'download', id) && m.json.change === 'removed');
    expect((await call(agent.url, 'GET', `/downloads/${id}`)).status).toBe(404);
  });

  test('DELETE /uploads answers the whole records it removed, written aside before their rows went', async () => {
    const before = (await call(agent.url, 'GET', `/uploads/${uploadId}`)).body;
    const gone = await call(agent.url, 'DELETE', '/uploads?states=complete');
    expect(gone.status).toBe(200);
    expect(gone.body).toEqual([before]);
    expect((await call(agent.url, 'GET', `/uploads/${uploadId}`)).status).toBe(404);
    expect((await fs.readdir(os.tmpdir())).filter((f) => f.startsWith('ferry-record-'))).toEqual([]);
  });
});

describe('bad input', () => {
  test.each([
    ['after below -1', '/uploads/x/files?after=-2'],
    ['a limit of 0', '/uploads/x/files?limit=0'],
    ['a limit above 5,000', '/downloads/x/files?limit=5001'],
    ['files that is not a boolean', '/uploads?files=maybe'],
    ['files= on /events that is not a list of ids', '/events?files=a%20b'],
  ])('%s: 400 {code, message}', async (_what, url) => {
    const r = await call(agent.url, 'GET', url);
    expect(r.status).toBe(400);
    expect(r.body).toMatchObject({ code: AgentErrorCode.badRequest, message: expect.any(String) });
  });

  test('pages, summaries, records and removals of a transfer that does not exist: 404', async () => {
    const calls = [
      ...['/uploads/nope/files', '/downloads/nope/files'].map((url) => ['GET', url] as const),
      ...['/uploads/nope?files=false', '/downloads/nope?files=false', '/uploads/nope', '/downloads/nope'].flatMap((url) => [['GET', url] as const, ['DELETE', url] as const]),
    ];
    for (const [method, url] of calls) {
      const r = await call(agent.url, method, url);
      expect(r.status, `${method} ${url}`).toBe(404);
      expect(r.body.code, `${method} ${url}`).toBe(AgentErrorCode.notFound);
    }
  });
});
