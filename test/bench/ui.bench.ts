// The app's window under load, in Debian's Chromium against `ferry serve` and
// `ferry agent --ui` as their own processes. For each history size (1,000 and
// 10,000 transfers written into the agent's database before it starts), the
// Transfers screen's windowed list: the time from the snapshot's answer to the
// first rows drawn, the rows actually in the page, the window's JS heap, and
// scrolling twice, 2 s idle and 5 s with progress events of running uploads flowing:
// late frames, and the time each event batch takes to apply (store and React
// render). Then, during an upload at full speed, the rate of messages reaching
// the window and the upload's throughput with the window open against closed;
// a transfer of 50,000 files followed by the window while its last files are
// sent (messages and bytes a second, the largest message, the heap); and the
// size of the window's JS. Prints PASS/FAIL per target, writes
// .bench-results/ui.json, exits 0 either way.
// Run: npm run bench:ui  (env BENCH_UI_TRANSFERS, BENCH_UI_ACTIVE, BENCH_UI_UPLOAD_MB, BENCH_UI_MANY_FILES, BENCH_UI_MANY_MOVING)
import { randomFillSync } from 'node:crypto';
import { mkdir, mkdtemp, open, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import { chromium, type Browser, type Page } from '@playwright/test';
import { call } from '../helpers/hosted.js';
import { signInAgent } from '../helpers/agent.js';
import { jsonLine, repoRoot, startFerry, type Running } from '../helpers/cli.js';
import { openAgentDb } from '../../src/agent/store/db.js';
import { insertUpload, markFileDone } from '../../src/agent/store/uploadStore.js';
import { startServedService, type ServedService } from './lib/processes.js';
import { packageOnService, seedManyFiles, type ManyFiles } from '../helpers/manyFiles.js';

const SIZES = (process.env.BENCH_UI_TRANSFERS ?? '1000,10000').split(',').map(Number).filter((n) => n > 0);
/** Uploads running while the list scrolls: their progress events are what the window applies. */
const ACTIVE = Number(process.env.BENCH_UI_ACTIVE ?? 8);
const UPLOAD = Number(process.env.BENCH_UI_UPLOAD_MB ?? 1024) * 1024 * 1024;
/** The transfer of many files the window follows (0: none), and how many of them are sent while it does (the others are done before). */
const MANY = Number(process.env.BENCH_UI_MANY_FILES ?? 50_000);
const MANY_MOVING = Number(process.env.BENCH_UI_MANY_MOVING ?? 2_000);
const CHROMIUM = { executablePath: process.env.FERRY_CHROMIUM ?? '/usr/bin/chromium', args: ['--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update', '--disable-sync'] };
/** A frame is late when it comes more than half a frame after its time (60 a second). */
const LATE_MS = 1.5 * (1000 / 60);

interface Row { what: string; value: number; unit: string; target: string; pass: boolean }
const rows: Row[] = [];
const record = (what: string, value: number, unit: string, target: string, pass: boolean) => rows.push({ what, value: Math.round(value * 100) / 100, unit, target, pass });

async function seedHistory(configDir: string, n: number): Promise<void> {
  await mkdir(configDir, { recursive: true });
  const db = openAgentDb(join(configDir, 'agent.db'));
  const base = Date.now() - n * 1000;
  for (let i = 0; i < n; i++) {
    const id = `upl_bench${String(i).padStart(6, '0')}`;
    insertUpload(db, { id, type: 'team', state: 'complete', package_id: `pkg_bench${i}`, package_token: 'x', name: `Dailies ${i}`, package_name: `Dailies ${i}`, priority: 0, chunk_size: 100 * 1024 * 1024, auto_finalize: 1, delete_after: null, size: 1024 * 1024 * (i % 90 + 1) },
      [{ kind: 'file', local_path: `/media/dailies-${i}.mov`, rel_dir: '', name: `dailies-${i}.mov`, size: 1024 * 1024 * (i % 90 + 1), mtime_ms: base + i }]);
    markFileDone(db, id, 0);
  }
  await db.shut();
}

/**
 * Runs in the window before its own scripts (injected over the DevTools protocol,
 * which the window's CSP does not govern): notes when the snapshot's answer
 * ended, when the first transfer rows were drawn (the frame after they entered
 * the page), the most rows in the page, and how long each event batch from the
 * WebSocket takes to apply: its handler (parse, store) and the React render that
 * the store's update flushes in a microtask before the next task.
 */
const INSTRUMENT = `(() => {
  const b = window.__bench = { firstRows: undefined, snapshotEnd: undefined, maxRows: 0, batches: [] };
  const rowCount = () => document.querySelectorAll('[data-transfer]').length;
  new PerformanceObserver((list) => {
    for (const e of list.getEntries()) if (e.name.endsWith('/ui/ipc/transfers.snapshot') && b.snapshotEnd === undefined) b.snapshotEnd = e.responseEnd;
  }).observe({ type: 'resource', buffered: true });
  const mo = new MutationObserver(() => {
    const n = rowCount();
    if (n > b.maxRows) b.maxRows = n;
    if (n > 0 && b.firstRows === undefined) {
      b.firstRows = null;
      requestAnimationFrame(() => setTimeout(() => { b.firstRows = performance.now(); }));
    }
  });
  document.addEventListener('DOMContentLoaded', () => mo.observe(document.body, { childList: true, subtree: true }));
  const d = Object.getOwnPropertyDescriptor(WebSocket.prototype, 'onmessage');
  Object.defineProperty(WebSocket.prototype, 'onmessage', {
    configurable: true,
    get() { return d.get.call(this); },
    set(fn) {
      d.set.call(this, fn && function (ev) {
        const t0 = performance.now();
        const r = fn.call(this, ev);
        if (String(ev.data).startsWith('{"event":"transfers.changed"')) queueMicrotask(() => b.batches.push(performance.now() - t0));
        return r;
      });
    },
  });
})();`;

/** From the top, scrolls the list's scrolling box down 120 px a frame for `ms`, and gives each frame's interval. */
const SCROLL = (ms: number) => `new Promise((resolve) => {
  let view = document.querySelector('ul.rows');
  while (view && !(view.scrollHeight > view.clientHeight && /auto|scroll/.test(getComputedStyle(view).overflowY))) view = view.parentElement;
  view.scrollTop = 0;
  const gaps = []; let last; let start;
  const step = (t) => {
    start ??= t;
    if (last !== undefined) gaps.push(t - last);
    last = t; view.scrollTop += 120;
    if (t - start < ${ms}) requestAnimationFrame(step); else resolve({ gaps, scrolled: view.scrollTop });
  };
  requestAnimationFrame(step);
})`;

interface Bench { firstRows?: number | null; snapshotEnd?: number; maxRows: number; batches: number[] }
const bench = (page: Page) => page.evaluate('window.__bench') as Promise<Bench>;
const rowsInPage = (page: Page) => page.evaluate(`document.querySelectorAll('[data-transfer]').length`) as Promise<number>;
const percentile = (xs: number[], p: number) => (xs.length ? [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor(p * xs.length))]! : 0);

async function startAgent(configDir: string, svc: ServedService): Promise<{ proc: Running; agentUrl: string; appUrl: string; teamId: string }> {
  const proc = startFerry(['agent', '--ui', '--listen', '127.0.0.1:0', '--config-dir', configDir, '--hosted-url', svc.url, '--log-level', 'info'], {}, { built: true });
  const agentUrl = String(jsonLine(await proc.waitFor((l) => jsonLine(l)?.msg === 'ferry agent ready', 'ready'))!.url);
  await signInAgent(agentUrl, svc);
  const teamId = (await call(agentUrl, 'GET', '/teams')).body[0].id as string;
  return { proc, agentUrl, appUrl: agentUrl.replace(/\/api\/v1$/, '/'), teamId };
}

/** Opens the window on Transfers and waits for the first rows drawn. */
async function openTransfers(browser: Browser, appUrl: string): Promise<Page> {
  const page = await browser.newPage({ viewport: { width: 1100, height: 720 } });
  await page.addInitScript({ content: INSTRUMENT });
  await page.goto(appUrl);
  // A function, not a string: the window's CSP forbids evaluating strings.
  const drawn = () => typeof (globalThis as unknown as { __bench?: Bench }).__bench?.firstRows === 'number';
  await page.waitForFunction(drawn, undefined, { timeout: 120_000, polling: 50 });
  return page;
}

/** The list with `n` transfers in the history: first rows, rows in the page, heap, scrolling idle and with events. */
async function measureList(browser: Browser, svc: ServedService, work: string, n: number, file: string): Promise<void> {
  const configDir = join(work, `agent-${n}`);
  await seedHistory(configDir, n);
  const agent = await startAgent(configDir, svc);
  const size = n.toLocaleString('en');
  try {
    const page = await openTransfers(browser, agent.appUrl);
    const b = await bench(page);
    const afterSnapshot = (b.firstRows as number) - (b.snapshotEnd ?? 0);
    record(`${size}: first rows drawn, after the snapshot's answer`, afterSnapshot, 'ms', '< 100', afterSnapshot < 100);
    record(`${size}: first rows drawn, from navigation`, b.firstRows as number, 'ms', '< 500', (b.firstRows as number) < 500);
    const cdp = await page.context().newCDPSession(page);
    await cdp.send('HeapProfiler.collectGarbage');
    const heap = ((await cdp.send('Runtime.getHeapUsage')) as { usedSize: number }).usedSize / 1024 / 1024;
    record(`${size}: renderer JS heap`, heap, 'MiB', '< 100', heap < 100);

    const idle = (await page.evaluate(SCROLL(2000))) as { gaps: number[] };
    const lateIdle = idle.gaps.filter((g) => g > LATE_MS).length;
    record(`${size}: late frames scrolling 2 s, idle (of ${idle.gaps.length})`, lateIdle, 'frames', '≤ 6', lateIdle <= 6);

    // Uploads running: their progress events reach the window while it scrolls back up.
    const ids: string[] = [];
    for (let i = 0; i < ACTIVE; i++) {
      const r = await call(agent.agentUrl, 'POST', '/uploads', { body: { team_id: agent.teamId, paths: [file] } });
      if (r.status !== 201) throw new Error(`upload: ${r.status} ${JSON.stringify(r.body)}`);
      ids.push(r.body.upload_id as string);
    }
    const flowing = () => ((globalThis as unknown as { __bench: Bench }).__bench.batches.length >= 3);
    await page.waitForFunction(flowing, undefined, { timeout: 60_000, polling: 50 });
    await page.evaluate('window.__bench.batches.length = 0');
    // Longer than idle: progress comes a few times a second, so 5 s give enough batches to measure.
    const busy = (await page.evaluate(SCROLL(5000))) as { gaps: number[] };
    const batches = (await bench(page)).batches;
    const lateBusy = busy.gaps.filter((g) => g > LATE_MS).length;
    record(`${size}: late frames scrolling 5 s, ${ACTIVE} uploads running (of ${busy.gaps.length})`, lateBusy, 'frames', '≤ 15', lateBusy <= 15);
    record(`${size}: event batches applied while scrolling`, batches.length, 'batches', '', true);
    record(`${size}: time to apply a batch, median`, percentile(batches, 0.5), 'ms', '', true);
    record(`${size}: time to apply a batch, 95th percentile`, percentile(batches, 0.95), 'ms', '< 8', percentile(batches, 0.95) < 8);
    const most = Math.max((await bench(page)).maxRows, await rowsInPage(page));
    record(`${size}: most transfer rows in the page`, most, 'rows', '≤ 40', most <= 40);
    for (const id of ids) await call(agent.agentUrl, 'DELETE', `/uploads/${id}`);
    await page.close();
  } finally {
    await agent.proc.stop();
  }
}

/**
 * A transfer of MANY files, all but MANY_MOVING done before (test/helpers/manyFiles.ts), resumed
 * from the window, which follows it to complete: the messages it receives and their bytes a
 * second, the largest, against one record of the transfer (every file listed); then its heap.
 */
async function measureManyFiles(browser: Browser, svc: ServedService, work: string): Promise<void> {
  const size = MANY.toLocaleString('en');
  const configDir = join(work, 'agent-many');
  const pkg = await packageOnService(svc.url, svc.owner, 'Reels');
  const many: ManyFiles = { id: 'upl_benchmany', name: 'Reels', files: MANY, moving: Math.min(MANY, MANY_MOVING), movingDir: join(work, 'many'), size: 64 * 1024 };
  await seedManyFiles(configDir, pkg, many);
  const agent = await startAgent(configDir, svc);
  try {
    const got = { messages: 0, bytes: 0, largest: 0 };
    const page = await browser.newPage({ viewport: { width: 1100, height: 720 } });
    page.on('websocket', (ws) => ws.on('framereceived', ({ payload }) => {
      const n = typeof payload === 'string' ? Buffer.byteLength(payload) : payload.length;
      got.messages++;
      got.bytes += n;
      got.largest = Math.max(got.largest, n);
    }));
    await page.goto(agent.appUrl);
    const resume = page.getByRole('row', { name: `Upload ${many.name}` }).getByRole('button', { name: 'Resume' });
    await resume.waitFor({ timeout: 60_000 });
    Object.assign(got, { messages: 0, bytes: 0, largest: 0 });
    const t0 = performance.now();
    await resume.click();
    await untilComplete(agent.agentUrl, many.id);
    // The window has it complete: its bar full.
    await page.getByRole('row', { name: `Upload ${many.name}` }).locator('[role=progressbar][aria-valuenow="100"]').waitFor({ timeout: 60_000 });
    const s = (performance.now() - t0) / 1000;
    const whole = Buffer.byteLength(JSON.stringify((await call(agent.agentUrl, 'GET', `/uploads/${many.id}`)).body));
    const cdp = await page.context().newCDPSession(page);
    await cdp.send('HeapProfiler.collectGarbage');
    const heap = ((await cdp.send('Runtime.getHeapUsage')) as { usedSize: number }).usedSize / 1024 / 1024;
    const what = `${size} files followed`;
    record(`${what}: ${many.moving.toLocaleString('en')} of them sent, in`, s, 's', '', true);
    record(`${what}: messages to the window`, got.messages / s, 'per s', '≤ 10', got.messages / s <= 10);
    record(`${what}: bytes to the window`, got.bytes / 1024 / s, 'KiB/s', '', true);
    record(`${what}: all those bytes, of one record (${Math.round(whole / 1024).toLocaleString('en')} KiB)`, (got.bytes / whole) * 100, '%', '< 10', got.bytes / whole < 0.1);
    record(`${what}: largest message`, got.largest / 1024, 'KiB', '< 10', got.largest < 10 * 1024);
    record(`${what}: renderer JS heap, after`, heap, 'MiB', '< 100', heap < 100);
    await page.close();
  } finally {
    await agent.proc.stop();
  }
}

async function untilComplete(agentUrl: string, id: string): Promise<void> {
  for (let i = 0; i < 36_000; i++) {
    const u = await call(agentUrl, 'GET', `/uploads/${id}?files=false`);
    if (u.body.state === 'complete') return;
    if (u.body.state === 'error') throw new Error(`upload failed: ${u.body.error}`);
    await new Promise((res) => setTimeout(res, 50));
  }
  throw new Error('upload did not complete');
}

async function uploadTime(agentUrl: string, teamId: string, file: string): Promise<number> {
  const t0 = performance.now();
  const r = await call(agentUrl, 'POST', '/uploads', { body: { team_id: teamId, paths: [file] } });
  if (r.status !== 201) throw new Error(`upload: ${r.status} ${JSON.stringify(r.body)}`);
  for (let i = 0; i < 36_000; i++) {
    const u = await call(agentUrl, 'GET', `/uploads/${r.body.upload_id}`);
    if (u.body.state === 'complete') return (performance.now() - t0) / 1000;
    if (u.body.state === 'error') throw new Error(`upload failed: ${u.body.error}`);
    await new Promise((res) => setTimeout(res, 50));
  }
  throw new Error('upload did not complete');
}

// Frames and times depend on what else the cores run: the load average goes with the figures.
const loadBefore = loadavg()[0]!;
const work = await mkdtemp(join(process.env.BENCH_DIR ?? tmpdir(), 'ferry-bench-ui-'));
const svc = await startServedService(work);
const browser = await chromium.launch(CHROMIUM);
try {
  const file = join(work, 'big.bin');
  const fh = await open(file, 'w');
  const buf = Buffer.alloc(16 * 1024 * 1024);
  for (let done = 0; done < UPLOAD; done += buf.length) await fh.write(randomFillSync(buf));
  await fh.close();

  for (const n of SIZES) await measureList(browser, svc, work, n, file);
  if (MANY > 0) await measureManyFiles(browser, svc, work);

  // An upload at full speed with the window closed, then open (counting its messages), on an agent of its own.
  const agent = await startAgent(join(work, 'agent-upload'), svc);
  try {
    const closed = await uploadTime(agent.agentUrl, agent.teamId, file);
    let messages = 0;
    const page = await browser.newPage({ viewport: { width: 1100, height: 720 } });
    page.on('websocket', (ws) => ws.on('framereceived', () => void messages++));
    await page.addInitScript({ content: INSTRUMENT });
    await page.goto(agent.appUrl);
    const drawn = () => typeof (globalThis as unknown as { __bench?: Bench }).__bench?.firstRows === 'number';
    await page.waitForFunction(drawn, undefined, { timeout: 60_000, polling: 50 });
    messages = 0;
    const opened = await uploadTime(agent.agentUrl, agent.teamId, file);
    const rate = messages / opened;
    record('messages to the window during the upload', rate, 'per s', '≤ 10', rate <= 10);
    const mibps = (s: number) => UPLOAD / 1024 / 1024 / s;
    record(`upload throughput, window closed (${UPLOAD / 1024 / 1024} MiB)`, mibps(closed), 'MiB/s', '', true);
    record('upload throughput, window open', mibps(opened), 'MiB/s', '', true);
    record('open / closed', closed / opened, 'x', '≥ 0.95', closed / opened >= 0.95);
    await page.close();
  } finally {
    await agent.proc.stop();
  }

  const assets = join(repoRoot, 'dist', 'renderer', 'assets');
  let gz = 0;
  for (const f of await readdir(assets)) if (f.endsWith('.js')) gz += gzipSync(await readFile(join(assets, f))).length;
  record('renderer JS, gzipped', gz / 1024, 'KiB', '< 300', gz / 1024 < 300);

  const load = { before: Math.round(loadBefore * 100) / 100, after: Math.round(loadavg()[0]! * 100) / 100 };
  console.log(`\nferry app window (browser mode, Chromium); load average ${load.before} before, ${load.after} after`);
  for (const r of rows) console.log(`  ${r.what.padEnd(72)} ${String(r.value).padStart(10)} ${r.unit.padEnd(7)} ${r.target.padEnd(8)} ${r.target ? (r.pass ? 'PASS' : 'FAIL') : ''}`);
  await mkdir(join(repoRoot, '.bench-results'), { recursive: true });
  await writeFile(join(repoRoot, '.bench-results', 'ui.json'), JSON.stringify({ when: new Date().toISOString(), load, sizes: SIZES, active: ACTIVE, uploadBytes: UPLOAD, manyFiles: MANY, manyMoving: MANY_MOVING, rows }, null, 2));
} finally {
  await browser.close();
  await svc.stop();
  await rm(work, { recursive: true, force: true });
}
