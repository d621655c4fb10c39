// The window following a transfer of 50,000 files: what it receives is counted
// (WebSocket frames and their bytes, its JS heap), never timed. The transfer is
// real but mostly behind it: before the agent starts, its agent.db holds one
// upload of a Package made on the service, whose first 49,700 files are done
// (as a run that sent them would have left them) and whose last 300 are small
// files on disk, not done. Resumed from the window, the agent registers, sends
// and finalizes those 300, then finalizes the Package. This file runs its own
// service and agent.
import type { ChildProcess } from 'node:child_process';
import path from 'node:path';
import { expect, test, type Page } from '@playwright/test';
import { stop } from './global-setup.js';
import { newWindow, OWNER, restOf, showTransfers, startAgent, startService } from './stack.js';
import { fileName, packageOnService, seedManyFiles, servicePackage, type ManyFiles, type ServicePackage } from '../helpers/manyFiles.js';

test.describe.configure({ mode: 'serial' });

const FILES = 50_000;
/** The files that really move; the others were sent before. */
const MOVING = 300;
const DONE = FILES - MOVING;
const UPLOAD_ID = 'upl_manyfiles0001';
const KB = 1024;

let page: Page;
let service: ChildProcess;
let agent: ChildProcess;
let serviceUrl: string;
let appUrl: string;
let pkg: ServicePackage;
let many: ManyFiles;

/** What the window received over /ui/events. */
const frames = { count: 0, bytes: 0, largest: 0, ofTransfer: 0, bytesOfTransfer: 0, withItems: 0, withFiles: 0 };
/** The transfer's states as its records came (each once in a row), and its files done as each change told them. */
const states: string[] = [];
const filesDone: number[] = [];
/** What its requests over /ui/ipc answered, by channel: the snapshot, the pages of files. */
const answers = new Map<string, { count: number; bytes: number; largest: number }>();
const answered = (channel: string) => answers.get(channel) ?? { count: 0, bytes: 0, largest: 0 };

let rest: ReturnType<typeof restOf>;

test.beforeAll(async ({ browser }) => {
  test.setTimeout(180_000);
  const dir = path.join(process.env.FERRY_E2E_TMP!, 'many-files');
  ({ service, url: serviceUrl } = await startService(path.join(dir, 'hosted')));
  pkg = await packageOnService(serviceUrl, OWNER, 'Reels');
  many = { id: UPLOAD_ID, name: 'Reels', files: FILES, moving: MOVING, movingDir: path.join(dir, 'Reels', 'new'), size: 64 };
  const configDir = path.join(dir, 'agent');
  await seedManyFiles(configDir, pkg, many);

  ({ agent, appUrl } = await startAgent(serviceUrl, configDir));
  rest = restOf(appUrl);
  await rest('POST', '/login', OWNER);
  page = await newWindow(browser, { locale: 'en-US' });
  page.on('websocket', (ws) => {
    if (!ws.url().includes('/ui/events')) return;
    ws.on('framereceived', ({ payload }) => {
      const text = typeof payload === 'string' ? payload : payload.toString('utf8');
      const bytes = Buffer.byteLength(text);
      frames.count++;
      frames.bytes += bytes;
      frames.largest = Math.max(frames.largest, bytes);
      if (text.includes(UPLOAD_ID)) {
        frames.ofTransfer++;
        frames.bytesOfTransfer += bytes;
      }
      if (text.includes('"items"')) frames.withItems++;
      if (text.includes('"change":"files"')) frames.withFiles++;
      const m = JSON.parse(text) as { event: string; payload: { type: string; data: { change: string; upload?: { upload_id: string; state: string; files_done: number }; upload_id?: string; files_done?: number } }[] };
      if (m.event !== 'transfers.changed') return;
      for (const { data } of m.payload) {
        if (data.change === 'record' && data.upload?.upload_id === UPLOAD_ID) {
          if (states.at(-1) !== data.upload.state) states.push(data.upload.state);
          filesDone.push(data.upload.files_done);
        } else if (data.change === 'progress' && data.upload_id === UPLOAD_ID) filesDone.push(data.files_done!);
      }
    });
  });
  page.on('response', (res) => {
    const channel = /\/ui\/ipc\/([\w.]+)$/.exec(new URL(res.url()).pathname)?.[1];
    if (!channel) return;
    void res.body().then((b) => {
      const a = answered(channel);
      answers.set(channel, { count: a.count + 1, bytes: a.bytes + b.length, largest: Math.max(a.largest, b.length) });
    }, () => {});
  });
  await showTransfers(page, appUrl);
});

test.afterAll(async () => {
  await page?.context().close();
  await stop(agent);
  await stop(service);
});

/** The window's JS heap after a garbage collection, MiB. */
async function heapMiB(): Promise<number> {
  const cdp = await page.context().newCDPSession(page);
  try {
    await cdp.send('HeapProfiler.collectGarbage');
    return (await cdp.send('Runtime.getHeapUsage')).usedSize / 1024 / 1024;
  } finally {
    await cdp.detach();
  }
}

test(`the window follows a transfer of ${FILES.toLocaleString('en')} files to complete on summaries and totals, not files`, async () => {
  test.setTimeout(300_000);
  const row = page.getByRole('row', { name: 'Upload Reels' });
  const bar = row.getByRole('progressbar', { name: 'Progress of Reels' });
  // Under way, its files count as they go.
  await expect(row).toContainText(`${DONE.toLocaleString('en')} of 50,000 files`);
  await expect(row).toContainText('Paused');
  await expect(bar).toHaveAttribute('aria-valuenow', String(Math.floor((DONE / FILES) * 100)));
  const before = { ...frames };

  await row.getByRole('button', { name: 'Resume' }).click();
  await expect(row).toContainText('Complete', { timeout: 240_000 });
  await expect(bar).toHaveAttribute('aria-valuenow', '100');
  await expect(row).toContainText('50,000 files');

  // The service only ever heard of the 300 that moved, and took the Package's finalize.
  expect(await servicePackage(serviceUrl, pkg)).toMatchObject({ state: 'finalized', total_files: MOVING });
  const summary = await rest<{ state: string; file_count: number; files_done: number }>('GET', `/uploads/${UPLOAD_ID}?files=false`);
  expect(summary).toMatchObject({ state: 'complete', file_count: FILES, files_done: FILES });

  // What one record of the transfer weighs: the whole list of its files.
  const record = Buffer.byteLength(await (await fetch(`${appUrl}/api/v1/uploads/${UPLOAD_ID}`)).text());
  const heap = await heapMiB();
  const run = { frames: frames.count - before.count, bytes: frames.bytes - before.bytes, ofTransfer: frames.ofTransfer - before.ofTransfer, bytesOfTransfer: frames.bytesOfTransfer - before.bytesOfTransfer };
  const snapshot = answered('transfers.snapshot');
  const figures = `frames ${run.frames} (${run.ofTransfer} of the transfer, ${run.bytesOfTransfer} bytes), largest ${frames.largest} bytes; snapshots ${snapshot.count}, largest ${snapshot.largest} bytes; one record ${record} bytes; heap ${heap.toFixed(1)} MiB`;
  console.log(`many-files: ${figures}`);
  test.info().annotations.push({ type: 'figures', description: figures });

  // It went through its states, and its files done only grew, to all of them.
  expect(states).toEqual(['transferring', 'idle', 'complete']);
  expect(filesDone[0]).toBeGreaterThanOrEqual(DONE);
  expect(filesDone.at(-1)).toBe(FILES);
  expect(filesDone.every((n, i) => i === 0 || n >= filesDone[i - 1]!), filesDone.join(' ')).toBe(true);
  expect(run.ofTransfer, figures).toBeGreaterThan(0);
  expect(record, 'a record lists every file').toBeGreaterThan(FILES * 50);
  expect(run.bytesOfTransfer, figures).toBeLessThan(record / 10);
  expect(frames.largest, figures).toBeLessThan(10 * KB);
  expect(snapshot.count, figures).toBeGreaterThan(0);
  expect(snapshot.largest, 'the snapshot holds summaries').toBeLessThan(10 * KB);
  expect(frames.withItems, 'no frame carries a file list').toBe(0);
  expect(frames.withFiles, 'the window follows no files').toBe(0);
  expect(heap, figures).toBeLessThan(100);
  await page.screenshot({ path: path.resolve('.test-results', 'many-files', 'complete.png') });
});

test(`its details page through ${FILES.toLocaleString('en')} files 200 at a time, to the last page`, async () => {
  test.setTimeout(240_000);
  const row = page.getByRole('row', { name: 'Upload Reels' });
  await row.getByRole('button', { name: 'Details of Reels' }).click();
  const table = page.getByRole('table', { name: /^Files / });
  const body = table.locator('tbody tr');
  const pager = page.getByRole('navigation', { name: 'Pages of files' });
  await expect(table.locator('caption')).toHaveText('Files 1–200 of 50,000');
  await expect(body).toHaveCount(200);
  await expect(body.first()).toContainText(fileName(many, 0));
  await expect(pager).toContainText('Page 1 of 250');

  // By keyboard: Next keeps the focus while the page changes under it.
  const next = pager.getByRole('button', { name: 'Next 200' });
  await next.focus();
  for (let i = 1; i < FILES / 200; i++) await page.keyboard.press('Enter');
  await expect(table.locator('caption')).toHaveText('Files 49,801–50,000 of 50,000');
  await expect(pager).toContainText('Page 250 of 250');
  await expect(next).toBeDisabled();
  await expect(body).toHaveCount(200);
  await expect(body.first()).toContainText(fileName(many, FILES - 200));
  await expect(body.last()).toContainText(fileName(many, FILES - 1));
  await expect(body.last()).toContainText('complete');

  const heap = await heapMiB();
  const pages = answered('uploads.files');
  console.log(`many-files: heap after paging ${heap.toFixed(1)} MiB; frames ${frames.count}, ${frames.bytes} bytes in all; pages of files read ${pages.count}, largest ${pages.largest} bytes`);
  expect(heap).toBeLessThan(100);
  // A page holds 200 of the 50,000 files: a small part of one record.
  expect(pages.count).toBeGreaterThan(1);
  expect(pages.largest).toBeLessThan(50 * KB);
  expect(frames.largest).toBeLessThan(10 * KB);
  for (const scheme of ['light', 'dark'] as const) {
    await page.emulateMedia({ colorScheme: scheme, reducedMotion: 'reduce' });
    await page.screenshot({ path: path.resolve('.test-results', 'many-files', `last-page-${scheme}.png`) });
  }
  await page.emulateMedia({ colorScheme: 'light' });
});
