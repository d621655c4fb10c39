// The hosted service with one Package of a million files (docs/benchmarks.md,
// "The service at a million files"): `ferry serve` built, in its own process,
// with its embedded store. The first --api-files files are registered and
// finalized through the API (register_files and finalize_files, 100 a request,
// empty files put in one request, as the agent sends small files), a few with
// bytes; the rest are written straight into its database (rows as a file
// finalize leaves them), since sending a million files is the agent benchmark's
// subject. Then, each timed, with the service's CPU and peak RSS: the Package's
// finalize, its file list in pages and as the spec's whole array, the
// Link page, the ZIP of the whole Package streamed to the end, and its delete
// (the expiry sweep's work: every object removed). Writes
// .bench-results/hosted-files.json (or --out); exits 0 whatever the figures.
//
// Run: npm run bench:files -- [--files 1000000] [--api-files 10000] [--out FILE]
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { loadavg, tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { parseArgs } from 'node:util';
import { call } from '../helpers/hosted.js';
import { repoRoot } from '../helpers/cli.js';
import { openDatabase } from '../../src/hosted/db/open.js';
import { SINGLE_PUT } from '../../src/api/hosted/files.js';
import type { FilesTable } from '../../src/hosted/db/schema.js';
import { startServedService, type ServedService } from './lib/processes.js';

const { values: opts } = parseArgs({
  options: {
    files: { type: 'string', default: '1000000' },
    'api-files': { type: 'string', default: '10000' },
    out: { type: 'string', default: join(repoRoot, '.bench-results', 'hosted-files.json') },
  },
});
const FILES = Number(opts.files);
const API_FILES = Math.min(FILES, Number(opts['api-files']));
/** Files with bytes (1 KiB each, among the API's): what the ZIP reads from the store. */
const WITH_BYTES = Math.min(API_FILES, 100);
const PER_FOLDER = 100;

/**
 * The service's peak resident memory in each phase (the service's one process: its
 * API, its database and the embedded store's thread): the kernel's VmHWM, reset at
 * each phase's start (`5` into /proc/PID/clear_refs), and VmRSS sampled every 100 ms
 * where the reset is not allowed.
 */
class Rss {
  private peak = 0;
  private resets = true;
  private timer: NodeJS.Timeout;
  constructor(private readonly pid: number) {
    this.timer = setInterval(() => void this.sample(), 100);
  }
  async sample(): Promise<number> {
    const status = await readFile(`/proc/${this.pid}/status`, 'utf8').catch(() => '');
    const kb = Number(/VmRSS:\s+(\d+)/.exec(status)?.[1] ?? 0);
    const hwm = this.resets ? Number(/VmHWM:\s+(\d+)/.exec(status)?.[1] ?? 0) : 0;
    this.peak = Math.max(this.peak, kb, hwm);
    return kb;
  }
  /** The peak since the last call, in MiB; the next phase's peak starts from the RSS of now. */
  async take(): Promise<number> {
    await this.sample();
    const mib = this.peak / 1024;
    this.resets = await writeFile(`/proc/${this.pid}/clear_refs`, '5').then(() => true, () => false);
    this.peak = 0;
    await this.sample();
    return Math.round(mib);
  }
  stop(): void {
    clearInterval(this.timer);
  }
}

const load = () => loadavg().map((l) => +l.toFixed(1));

interface Phase { phase: string; seconds: number; service_cpu_s: number | null; service_peak_rss_mib: number; load_average: number[]; detail: Record<string, number | string> }
const phases: Phase[] = [];

async function measure(svc: ServedService, rss: Rss, phase: string, run: () => Promise<Record<string, number | string>>): Promise<void> {
  await rss.take();
  const cpu0 = await svc.cpu();
  const t0 = performance.now();
  const detail = await run();
  const seconds = (performance.now() - t0) / 1000;
  const cpu1 = await svc.cpu();
  const p: Phase = { phase, seconds: +seconds.toFixed(3), service_cpu_s: cpu0 === undefined || cpu1 === undefined ? null : +(cpu1 - cpu0).toFixed(2), service_peak_rss_mib: await rss.take(), load_average: load(), detail };
  phases.push(p);
  console.log(`  ${phase.padEnd(34)} ${p.seconds.toFixed(2).padStart(8)} s  cpu ${String(p.service_cpu_s ?? '-').padStart(7)} s  peak RSS ${String(p.service_peak_rss_mib).padStart(5)} MiB  load ${p.load_average.join(' ')}  ${JSON.stringify(detail)}`);
}

const folderOf = (i: number) => `d${String(Math.floor(i / PER_FOLDER)).padStart(5, '0')}`;
const nameOf = (i: number) => `f${String(i).padStart(7, '0')}.bin`;

async function ok<T = any>(r: Promise<{ status: number; body: T }>, what: string, status = 200): Promise<T> {
  const got = await r;
  if (got.status !== status) throw new Error(`${what}: ${got.status} ${JSON.stringify(got.body).slice(0, 300)}`);
  return got.body;
}

async function main(): Promise<void> {
  const work = await mkdtemp(join(tmpdir(), 'ferry-files-bench-'));
  const svc = await startServedService(work, ['--rate-limit-api', '1000000', '--rate-limit-package', '1000000', '--rate-limit-public', '1000000']);
  const rss = new Rss(svc.pid);
  try {
    console.log(`ferry serve (pid ${svc.pid}); ${FILES} files, ${API_FILES} through the API; baseline RSS ${Math.round((await rss.sample()) / 1024)} MiB`);
    const auth = await ok(call(svc.url, 'POST', '/v1/auth', { body: svc.owner }), 'sign-in');
    const h = { 'x-user-token': auth.token as string };
    const teamId = (await ok(call(svc.url, 'GET', '/v1/teams', { headers: h }), 'teams'))[0].id as string;
    const pkg = await ok(call(svc.url, 'POST', `/v1/teams/${teamId}/packages`, { headers: h, body: { name: 'A million files', description: '', recipients: [] } }), 'package', 201);
    const ph = { 'x-package-token': pkg.access_token as string };
    const base = `/v1/packages/${pkg.id}`;

    await measure(svc, rss, `register + finalize ${API_FILES} (API)`, async () => {
      for (let start = 0; start < API_FILES; start += 100) {
        const n = Math.min(100, API_FILES - start);
        const entries = Array.from({ length: n }, (_, k) => start + k);
        const size = (i: number) => (i < WITH_BYTES ? 1024 : 0);
        const reg = await ok(call(svc.url, 'POST', `${base}/register_files`, {
          headers: ph,
          body: { files: entries.map((i) => ({ kind: 'file', name: nameOf(i), path: folderOf(i), last_modified: '2024-05-01T10:00:00Z', size: size(i), single: true })) },
        }), 'register_files');
        const done = await Promise.all(reg.results.map(async (r: any, k: number) => {
          const i = entries[k]!;
          if (r.status !== 201) throw new Error(`register ${i}: ${r.status} ${r.message}`);
          const file = { file_id: r.registration.file.id as string, chunk_extras: [] as { part_number: string; etag: string }[], file_extras: { upload_id: SINGLE_PUT }, size: size(i) };
          if (size(i) > 0) {
            const bp = r.registration.upload_blueprints[0];
            const put = await fetch(bp.url, { method: bp.method, headers: bp.headers, body: Buffer.alloc(1024, i % 251) });
            if (!put.ok) throw new Error(`put ${i}: ${put.status}`);
            file.chunk_extras = [{ part_number: '1', etag: put.headers.get('etag')! }];
          }
          return file;
        }));
        const fin = await ok(call(svc.url, 'POST', `${base}/finalize_files`, { headers: ph, body: { files: done } }), 'finalize_files');
        for (const o of fin.results) if (o.status !== 204) throw new Error(`finalize ${o.file_id}: ${o.status} ${o.message}`);
      }
      return { files_per_s: 0 };
    });
    const api = phases.at(-1)!;
    api.detail = { files_per_s: Math.round(API_FILES / api.seconds), service_cpu_ms_per_file: api.service_cpu_s === null ? '-' : +((api.service_cpu_s * 1000) / API_FILES).toFixed(3) };
    console.log(`    ${JSON.stringify(api.detail)}`);

    // The rest, as file finalizes leave them: rows in the service's database (not a figure of the service).
    const t0 = performance.now();
    const db = openDatabase(join(svc.dataDir, 'ferry.db'));
    try {
      const now = new Date().toISOString();
      for (let start = API_FILES; start < FILES; start += 50_000) {
        await db.db.transaction().execute(async (trx) => {
          for (let s = start; s < Math.min(FILES, start + 50_000); s += 500) {
            const rows: FilesTable[] = [];
            for (let i = s; i < Math.min(FILES, s + 500); i++) {
              const id = `file_bench${i}`;
              rows.push({ id, package_id: pkg.id, kind: 'file', name: nameOf(i), path: folderOf(i), last_modified: '2024-05-01T10:00:00.000Z', size: 0, chunk_size: 5242880, object_key: `packages/${pkg.id}/${id}`, upload_id: SINGLE_PUT, state: 'finalized', virus_detected: 0, created_at: now, updated_at: now });
            }
            await trx.insertInto('files').values(rows).execute();
          }
        });
      }
    } finally {
      await db.close();
    }
    console.log(`  (wrote ${FILES - API_FILES} more file rows into the database in ${((performance.now() - t0) / 1000).toFixed(1)} s)`);

    await measure(svc, rss, 'Package finalize', async () => {
      await ok(call(svc.url, 'POST', `${base}/finalize`, { headers: ph }), 'finalize', 204);
      return {};
    });

    await measure(svc, rss, 'file list, pages of 5000', async () => {
      let after: string | null = null;
      let pages = 0;
      let entries = 0;
      let bytes = 0;
      let slowest = 0;
      do {
        const t = performance.now();
        const res = await fetch(`${svc.url}${base}/files?limit=5000${after ? `&after=${after}` : ''}`, { headers: ph });
        const text = await res.text();
        if (res.status !== 200) throw new Error(`page ${pages}: ${res.status} ${text.slice(0, 200)}`);
        const page = JSON.parse(text) as { files: unknown[]; next: string | null };
        slowest = Math.max(slowest, performance.now() - t);
        pages++;
        entries += page.files.length;
        bytes += text.length;
        after = page.next;
      } while (after && pages < FILES);
      if (entries !== FILES) throw new Error(`the pages held ${entries} entries, not ${FILES}`);
      return { pages, slowest_page_ms: Math.round(slowest), mib: +(bytes / 1048576).toFixed(1) };
    });

    await measure(svc, rss, "file list, the spec's whole array", async () => {
      const res = await fetch(`${svc.url}${base}/files`, { headers: ph });
      if (res.status !== 200 || !res.body) throw new Error(`whole list: ${res.status}`);
      // Read as it comes and counted, not held: the entries are the ids' quotes ("id":"...), the million and two ZIP entries.
      let bytes = 0;
      let entries = 0;
      let tail = '';
      for await (const chunk of res.body as unknown as AsyncIterable<Uint8Array>) {
        bytes += chunk.length;
        // The last 5 characters carry over: a mark split between two chunks is counted once.
        const text = tail + Buffer.from(chunk.buffer, chunk.byteOffset, chunk.length).toString('latin1');
        entries += text.split('{"id":').length - 1;
        tail = text.slice(-5);
      }
      if (entries !== FILES + 2) throw new Error(`the whole array held ${entries} entries, not ${FILES + 2}`);
      return { mib: +(bytes / 1048576).toFixed(1) };
    });

    const link = await ok(call(svc.url, 'POST', `${base}/links`, { headers: ph, body: {} }), 'link', 201);
    await measure(svc, rss, 'Link page (first 200 files)', async () => {
      const res = await fetch(link.url);
      const html = await res.text();
      if (res.status !== 200) throw new Error(`Link page: ${res.status}`);
      return { kib: Math.round(html.length / 1024) };
    });

    await measure(svc, rss, 'ZIP of the whole Package', async () => {
      const d = await ok(call(svc.url, 'GET', `${base}/files/zip_mac/download`, { headers: ph }), 'zip url');
      const res = await fetch(d.url);
      if (res.status !== 200 || !res.body) throw new Error(`zip: ${res.status}`);
      let bytes = 0;
      for await (const chunk of res.body as unknown as AsyncIterable<Uint8Array>) bytes += chunk.length;
      const length = Number(res.headers.get('content-length'));
      if (bytes !== length) throw new Error(`the ZIP was ${bytes} bytes, its Content-Length ${length}`);
      return { mib: +(bytes / 1048576).toFixed(1) };
    });

    await measure(svc, rss, 'delete (every object removed)', async () => {
      await ok(call(svc.url, 'DELETE', base, { headers: h }), 'delete', 204);
      return {};
    });
  } finally {
    rss.stop();
    await svc.stop();
    await rm(work, { recursive: true, force: true });
  }
  await mkdir(dirname(opts.out!), { recursive: true });
  await writeFile(opts.out!, JSON.stringify({ files: FILES, api_files: API_FILES, with_bytes: WITH_BYTES, phases }, null, 2));
  console.log(`wrote ${opts.out}`);
}

main().catch((err) => {
  console.error(err);
  process.exitCode = 0;
});
