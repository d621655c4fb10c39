// The app's window under load, in Debian's Chromium against `ferry serve` and
// `ferry agent --ui` as their own processes: with 1,000 transfers in the agent's
// history, the Transfers screen's first render, the frames dropped while it
// scrolls, the window's JS heap; during an upload at full speed, the rate of
// messages reaching the window and the upload's throughput with the window open
// against closed; and the size of the window's JS. Prints PASS/FAIL per target,
// writes .bench-results/ui.json, exits 0 either way.
// Run: npm run bench:ui  (env BENCH_UI_TRANSFERS, BENCH_UI_UPLOAD_MB)
import { randomFillSync } from 'node:crypto';
import { mkdir, mkdtemp, open, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import { chromium } from '@playwright/test';
import { call } from '../helpers/hosted.js';
import { signInAgent } from '../helpers/agent.js';
import { jsonLine, repoRoot, startFerry } from '../helpers/cli.js';
import { openAgentDb } from '../../src/agent/store/db.js';
import { insertUpload, markFileDone } from '../../src/agent/store/uploadStore.js';
import { startServedService } from './lib/processes.js';

const TRANSFERS = Number(process.env.BENCH_UI_TRANSFERS ?? 1000);
const UPLOAD = Number(process.env.BENCH_UI_UPLOAD_MB ?? 1024) * 1024 * 1024;
const CHROMIUM = { executablePath: process.env.FERRY_CHROMIUM ?? '/usr/bin/chromium', args: ['--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update', '--disable-sync'] };

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

const work = await mkdtemp(join(process.env.BENCH_DIR ?? tmpdir(), 'ferry-bench-ui-'));
const svc = await startServedService(work);
const configDir = join(work, 'agent');
await seedHistory(configDir, TRANSFERS);
const agentProc = startFerry(['agent', '--ui', '--listen', '127.0.0.1:0', '--config-dir', configDir, '--hosted-url', svc.url, '--log-level', 'info'], {}, { built: true });
const browser = await chromium.launch(CHROMIUM);
try {
  const agentUrl = String(jsonLine(await agentProc.waitFor((l) => jsonLine(l)?.msg === 'ferry agent ready', 'ready'))!.url);
  const appUrl = agentUrl.replace(/\/api\/v1$/, '/');
  await signInAgent(agentUrl, svc);
  const teamId = (await call(agentUrl, 'GET', '/teams')).body[0].id as string;

  // The Transfers screen with the history: first render, heap, scrolling.
  const page = await browser.newPage({ viewport: { width: 1100, height: 720 } });
  const t0 = Date.now();
  await page.goto(appUrl);
  // A function, not a string: the window's CSP forbids evaluating strings.
  const rowsAtLeast = (n: number) => (globalThis as unknown as { document: { querySelectorAll(s: string): { length: number } } }).document.querySelectorAll('ul.rows > li').length >= n;
  await page.waitForFunction(rowsAtLeast, TRANSFERS, { timeout: 60_000, polling: 'raf' });
  const firstRender = Date.now() - t0;
  record(`Transfers' first render, ${TRANSFERS} transfers (page load included)`, firstRender, 'ms', '< 500', firstRender < 500);
  const cdp = await page.context().newCDPSession(page);
  await cdp.send('HeapProfiler.collectGarbage');
  const heap = ((await cdp.send('Runtime.getHeapUsage')) as { usedSize: number }).usedSize / 1024 / 1024;
  record('renderer JS heap', heap, 'MiB', '< 100', heap < 100);
  const frames = await page.evaluate(`new Promise((resolve) => {
    const view = document.querySelector('main.place-view');
    let frames = 0; const start = performance.now();
    const step = (t) => { frames++; view.scrollTop += 120; if (t - start < 2000) requestAnimationFrame(step); else resolve({ frames, ms: t - start }); };
    requestAnimationFrame(step);
  })`) as { frames: number; ms: number };
  const dropped = Math.max(0, Math.round(frames.ms / (1000 / 60)) - frames.frames);
  record('frames dropped while scrolling 2 s (of 60 a second)', dropped, 'frames', '≈ 0', dropped <= 6);

  // An upload at full speed with the window closed, then open (counting its messages).
  const file = join(work, 'big.bin');
  const fh = await open(file, 'w');
  const buf = Buffer.alloc(16 * 1024 * 1024);
  for (let done = 0; done < UPLOAD; done += buf.length) await fh.write(randomFillSync(buf));
  await fh.close();
  await page.close();
  const closed = await uploadTime(agentUrl, teamId, file);
  const open2 = await browser.newPage({ viewport: { width: 1100, height: 720 } });
  let messages = 0;
  open2.on('websocket', (ws) => ws.on('framereceived', () => void messages++));
  await open2.goto(appUrl);
  await open2.waitForFunction(rowsAtLeast, TRANSFERS + 1, { timeout: 60_000 });
  messages = 0;
  const opened = await uploadTime(agentUrl, teamId, file);
  const rate = messages / opened;
  record('messages to the window during the upload', rate, 'per s', '≤ 10', rate <= 10);
  const mibps = (s: number) => UPLOAD / 1024 / 1024 / s;
  record(`upload throughput, window closed (${UPLOAD / 1024 / 1024} MiB)`, mibps(closed), 'MiB/s', '', true);
  record('upload throughput, window open', mibps(opened), 'MiB/s', '', true);
  record('open / closed', closed / opened, 'x', '≥ 0.95', closed / opened >= 0.95);
  await open2.close();

  const assets = join(repoRoot, 'dist', 'renderer', 'assets');
  let gz = 0;
  for (const f of await readdir(assets)) if (f.endsWith('.js')) gz += gzipSync(await readFile(join(assets, f))).length;
  record('renderer JS, gzipped', gz / 1024, 'KiB', '< 300', gz / 1024 < 300);

  console.log('\nferry app window (browser mode, Chromium)');
  for (const r of rows) console.log(`  ${r.what.padEnd(64)} ${String(r.value).padStart(10)} ${r.unit.padEnd(6)} ${r.target.padEnd(8)} ${r.target ? (r.pass ? 'PASS' : 'FAIL') : ''}`);
  await mkdir(join(repoRoot, '.bench-results'), { recursive: true });
  await writeFile(join(repoRoot, '.bench-results', 'ui.json'), JSON.stringify({ when: new Date().toISOString(), transfers: TRANSFERS, uploadBytes: UPLOAD, rows }, null, 2));
} finally {
  await browser.close();
  await agentProc.stop();
  await svc.stop();
  await rm(work, { recursive: true, force: true });
}
