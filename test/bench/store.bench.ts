// Throughput of the embedded object store against (1) a raw loopback node:http
// server that discards uploads and streams zeros, and (2) s3rver, all driven by
// the same client: pre-signed UploadPart PUTs (16 MiB parts, 8 in flight, body
// streamed from a file) and 8 parallel ranged GETs written with positional
// writes. Each server runs in its own child process so the client never shares
// its event loop; rounds are interleaved so all three see the same machine.
// Run: npx tsx test/bench/store.bench.ts  (env BENCH_SIZE_MB, BENCH_ROUNDS, BENCH_DIR)

import { CompleteMultipartUploadCommand, CreateMultipartUploadCommand, GetObjectCommand, S3Client, UploadPartCommand } from '@aws-sdk/client-s3';
import { getSignedUrl } from '@aws-sdk/s3-request-presigner';
import { fork, type ChildProcess } from 'node:child_process';
import { createHash, randomFillSync } from 'node:crypto';
import { createReadStream } from 'node:fs';
import { mkdir, mkdtemp, open, rm, stat, writeFile } from 'node:fs/promises';
import http from 'node:http';
import { createRequire } from 'node:module';
import { cpus, tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { fmt as f, getRange, mbps, MiB, pool, putRange, serveRaw, settleDisk } from './lib/loopback.js';

const PART = 16 * MiB;
const CONCURRENCY = 8;
const BUCKET = 'bench';
const KEY = 'bench/object.bin';

type Target = 'raw' | 'store' | 's3rver';
interface Ready { port: number; accessKey: string; secretKey: string }

// ---------------------------------------------------------------- servers (child processes)

interface S3rverInstance { run(): Promise<{ port: number }>; close(): Promise<void>; httpServer: http.Server }
type S3rverCtor = new (opts: Record<string, unknown>) => S3rverInstance;

async function child(target: Target, dir: string): Promise<void> {
  let ready: Ready;
  let stop: () => Promise<void>;
  if (target === 'raw') {
    const server = await serveRaw();
    ready = { port: (server.address() as { port: number }).port, accessKey: 'RAW', secretKey: 'RAWRAWRAWRAWRAWRAW' };
    stop = async () => {
      server.closeAllConnections();
      await new Promise((ok) => server.close(ok));
    };
  } else if (target === 'store') {
    const { startObjectStore } = await import('../../src/objectstore/index.js');
    const creds = { accessKey: 'BENCHACCESSKEY000000', secretKey: 'bench-secret-key-0123456789abcdef' };
    const store = await startObjectStore({ host: '127.0.0.1', port: 0, dataDir: dir, ...creds, buckets: [BUCKET] });
    ready = { port: store.port, ...creds };
    stop = () => store.close();
  } else {
    // s3rver ships no types; it is a dev dependency only used here.
    const S3rver = createRequire(import.meta.url)('s3rver') as S3rverCtor;
    const s3rver = new S3rver({ address: '127.0.0.1', port: 0, directory: dir, silent: true, configureBuckets: [{ name: BUCKET }] });
    const { port } = await s3rver.run();
    ready = { port, accessKey: 'S3RVER', secretKey: 'S3RVER' };
    stop = async () => {
      s3rver.httpServer.closeAllConnections();
      await s3rver.close();
    };
  }
  process.send!({ ready });
  process.on('message', (msg) => {
    if (msg === 'stop') void stop().finally(() => process.exit(0));
    if (msg === 'cpu') {
      const { user, system } = process.cpuUsage();
      process.send!({ cpu: (user + system) / 1e6 });
    }
  });
  // If the benchmark dies, never leave a server behind.
  process.on('disconnect', () => process.exit(0));
}

// ---------------------------------------------------------------- client

function startChild(target: Target, dir: string): Promise<{ proc: ChildProcess; ready: Ready }> {
  const proc = fork(fileURLToPath(import.meta.url), ['--serve', target, dir], { stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
  return new Promise((ok, fail) => {
    proc.once('message', (m) => ok({ proc, ready: (m as { ready: Ready }).ready }));
    proc.once('exit', (code) => fail(new Error(`${target} server exited early (${code})`)));
  });
}

async function stopChild(proc: ChildProcess): Promise<void> {
  if (proc.exitCode !== null) return;
  proc.removeAllListeners('exit'); // the "exited early" guard from startChild
  const exited = new Promise((ok) => proc.once('exit', ok));
  proc.send('stop');
  const timer = setTimeout(() => proc.kill('SIGKILL'), 10_000);
  await exited;
  clearTimeout(timer);
}

/** CPU seconds the server process has used so far (worker threads included). */
function serverCpu(proc: ChildProcess): Promise<number> {
  return new Promise((ok) => {
    const onMessage = (m: unknown): void => {
      const cpu = (m as { cpu?: number }).cpu;
      if (cpu === undefined) return;
      proc.off('message', onMessage);
      ok(cpu);
    };
    proc.on('message', onMessage);
    proc.send('cpu');
  });
}

/** POST a small body to a pre-signed URL (CompleteMultipartUpload); rejects on a non-200 answer. */
function post(agent: http.Agent, url: string, body: string): Promise<void> {
  return new Promise((ok, fail) => {
    const req = http.request(url, { method: 'POST', agent, headers: { 'Content-Length': Buffer.byteLength(body) } }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => {
        const text = Buffer.concat(chunks).toString();
        // S3 may answer 200 with an <Error> body for a failed completion.
        if (res.statusCode === 200 && !text.includes('<Error>')) ok();
        else fail(new Error(`complete ${res.statusCode}: ${text.slice(0, 200)}`));
      });
    });
    req.on('error', fail);
    req.end(body);
  });
}

interface Result {
  target: Target;
  uploadMBps: number;
  downloadMBps: number;
  /** Server CPU seconds per GiB moved: contention on a shared machine hardly moves it, unlike MiB/s. */
  uploadCpuPerGiB: number;
  downloadCpuPerGiB: number;
  completeMs?: number;
  completePct?: number;
  verified?: boolean;
}

async function md5File(path: string): Promise<string> {
  const h = createHash('md5');
  for await (const chunk of createReadStream(path, { highWaterMark: 4 * MiB })) h.update(chunk as Buffer);
  return h.digest('hex');
}

async function runTarget(target: Target, work: string, source: string, size: number, sourceMd5: string): Promise<Result> {
  const dir = join(work, `${target}-data`);
  await mkdir(dir);
  const { proc, ready } = await startChild(target, dir);
  const agent = new http.Agent({ keepAlive: true, maxSockets: CONCURRENCY });
  const endpoint = `http://127.0.0.1:${ready.port}`;
  const s3 = new S3Client({
    endpoint, region: 'us-east-1', forcePathStyle: true,
    credentials: { accessKeyId: ready.accessKey, secretAccessKey: ready.secretKey },
    requestChecksumCalculation: 'WHEN_REQUIRED', responseChecksumValidation: 'WHEN_REQUIRED',
  });
  const dest = join(work, `${target}-download.bin`);
  try {
    const parts = Math.ceil(size / PART);
    const uploadId = target === 'raw'
      ? '0'.repeat(32)
      : (await s3.send(new CreateMultipartUploadCommand({ Bucket: BUCKET, Key: KEY }))).UploadId!;
    // URLs are signed before the clock starts: signing is the hosted service's job, not the transfer's.
    const urls = await Promise.all(Array.from({ length: parts }, (_, i) =>
      getSignedUrl(s3, new UploadPartCommand({ Bucket: BUCKET, Key: KEY, UploadId: uploadId, PartNumber: i + 1 }), { expiresIn: 3600 })));
    const etags: string[] = [];
    settleDisk();
    let cpu = await serverCpu(proc);
    let t = performance.now();
    await pool(parts, CONCURRENCY, async (i) => {
      etags[i] = await putRange(agent, urls[i]!, source, i * PART, Math.min(size, (i + 1) * PART) - 1);
    });
    const uploadMs = performance.now() - t;
    const uploadCpu = (await serverCpu(proc)) - cpu;

    let completeMs: number | undefined;
    if (target !== 'raw') {
      const url = await getSignedUrl(s3, new CompleteMultipartUploadCommand({ Bucket: BUCKET, Key: KEY, UploadId: uploadId }), { expiresIn: 3600 });
      const xml = `<CompleteMultipartUpload>${etags.map((etag, i) => `<Part><PartNumber>${i + 1}</PartNumber><ETag>${etag}</ETag></Part>`).join('')}</CompleteMultipartUpload>`;
      t = performance.now();
      await post(agent, url, xml);
      completeMs = performance.now() - t;
    }

    const getUrl = await getSignedUrl(s3, new GetObjectCommand({ Bucket: BUCKET, Key: KEY }), { expiresIn: 3600 });
    const fh = await open(dest, 'w');
    await fh.truncate(size);
    settleDisk();
    cpu = await serverCpu(proc);
    t = performance.now();
    try {
      await pool(parts, CONCURRENCY, (i) => getRange(agent, getUrl, fh, i * PART, Math.min(size, (i + 1) * PART) - 1));
    } finally {
      await fh.close();
    }
    const downloadMs = performance.now() - t;
    const downloadCpu = (await serverCpu(proc)) - cpu;
    const verified = target === 'raw' ? undefined : (await md5File(dest)) === sourceMd5;
    const gib = size / (1024 * MiB);
    return {
      target,
      uploadMBps: mbps(size, uploadMs),
      downloadMBps: mbps(size, downloadMs),
      uploadCpuPerGiB: uploadCpu / gib,
      downloadCpuPerGiB: downloadCpu / gib,
      ...(completeMs === undefined ? {} : { completeMs, completePct: (completeMs / uploadMs) * 100 }),
      ...(verified === undefined ? {} : { verified }),
    };
  } finally {
    s3.destroy();
    agent.destroy();
    await stopChild(proc);
    // Free the disk (and dirty page cache) before the next target runs.
    await rm(dest, { force: true });
    await rm(dir, { recursive: true, force: true });
  }
}

/**
 * Best round per target for throughput: the machine may be shared, and
 * interference only ever slows a run down. Completion time is the median
 * round, so one scheduling hiccup of a few ms neither passes nor fails it.
 */
function summarise(target: Target, samples: Result[]): Result {
  const mine = samples.filter((r) => r.target === target);
  const pick = (f: (r: Result) => number | undefined, better: (a: number, b: number) => number): number | undefined =>
    mine.map(f).filter((v): v is number => v !== undefined).reduce<number | undefined>((a, b) => (a === undefined ? b : better(a, b)), undefined);
  const median = (values: number[]): number | undefined => values.sort((a, b) => a - b)[Math.floor((values.length - 1) / 2)];
  const timed = mine.filter((r) => r.completeMs !== undefined);
  const mid = median(timed.map((r) => r.completePct!));
  const completePct = mid;
  const completeMs = timed.find((r) => r.completePct === mid)?.completeMs;
  return {
    target,
    uploadMBps: pick((r) => r.uploadMBps, Math.max)!,
    downloadMBps: pick((r) => r.downloadMBps, Math.max)!,
    uploadCpuPerGiB: pick((r) => r.uploadCpuPerGiB, Math.min)!,
    downloadCpuPerGiB: pick((r) => r.downloadCpuPerGiB, Math.min)!,
    ...(completePct === undefined ? {} : { completePct, completeMs }),
    ...(target === 'raw' ? {} : { verified: mine.length > 0 && mine.every((r) => r.verified === true) }),
  };
}

async function main(): Promise<void> {
  const sizeMiB = Number(process.env.BENCH_SIZE_MB ?? 1024);
  const rounds = Math.max(1, Number(process.env.BENCH_ROUNDS ?? 3));
  const size = sizeMiB * MiB;
  const work = await mkdtemp(join(process.env.BENCH_DIR ?? tmpdir(), 'ferry-bench-'));
  const source = join(work, 'source.bin');
  const samples: Result[] = [];
  const errors: string[] = [];
  const targets = ['raw', 'store', 's3rver'] as const;
  try {
    const block = Buffer.alloc(MiB);
    const fh = await open(source, 'w');
    for (let done = 0; done < size; done += MiB) await fh.write(randomFillSync(block), 0, Math.min(MiB, size - done));
    await fh.close();
    const sourceMd5 = await md5File(source);
    const actual = (await stat(source)).size;
    console.log(`object ${sizeMiB} MiB, parts ${PART / MiB} MiB, ${CONCURRENCY} in flight, ${rounds} interleaved rounds, ${cpus().length} CPUs, node ${process.version}, dir ${work}`);
    for (let round = 1; round <= rounds; round++) {
      // Rotate the order so no target always runs first (with the least dirty page cache).
      const order = targets.map((_, i) => targets[(i + round - 1) % targets.length]!);
      for (const target of order) {
        let r: Result;
        try {
          r = await runTarget(target, work, source, actual, sourceMd5);
        } catch (err) {
          // One failed round is reported; the others still count.
          errors.push(`round ${round} ${target}: ${(err as Error).message}`);
          console.log(`  round ${round} ${target.padEnd(6)} FAILED ${(err as Error).message}`);
          continue;
        }
        samples.push(r);
        const extra = r.completePct === undefined ? '' : `, complete ${r.completeMs!.toFixed(1)} ms`;
        console.log(`  round ${round} ${target.padEnd(6)} up ${r.uploadMBps.toFixed(0)} MiB/s (server ${r.uploadCpuPerGiB.toFixed(2)} CPU-s/GiB), down ${r.downloadMBps.toFixed(0)} MiB/s (${r.downloadCpuPerGiB.toFixed(2)} CPU-s/GiB)${extra}`);
      }
    }
  } finally {
    await rm(work, { recursive: true, force: true });
  }

  const results = targets.map((t) => summarise(t, samples));
  const by = Object.fromEntries(results.map((r) => [r.target, r])) as Record<Target, Result>;
  const rows = results.map((r) => [
    r.target,
    f(r.uploadMBps),
    f(r.downloadMBps),
    `${f(r.uploadMBps / by.raw.uploadMBps, 2)} / ${f(r.downloadMBps / by.raw.downloadMBps, 2)}`,
    `${f(r.uploadMBps / by.s3rver.uploadMBps, 2)} / ${f(r.downloadMBps / by.s3rver.downloadMBps, 2)}`,
    r.completePct === undefined ? '-' : `${f(r.completePct, 3)}% (${f(r.completeMs, 1)} ms)`,
    `${f(r.uploadCpuPerGiB, 2)} / ${f(r.downloadCpuPerGiB, 2)}`,
    r.verified === undefined ? '-' : r.verified ? 'ok' : 'MISMATCH',
  ]);
  const head = ['target', 'upload MiB/s', 'download MiB/s', 'x raw (up/down)', 'x s3rver (up/down)', 'complete/upload', 'server CPU-s/GiB (up/down)', 'bytes'];
  const widths = head.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i]!.length)));
  console.log(`\nbest of ${rounds} round(s) per target (MiB/s: highest, CPU: lowest); complete/upload from the median round`);
  for (const row of [head, ...rows]) console.log(row.map((c, i) => c.padEnd(widths[i]!)).join('  '));

  const store = by.store;
  const checks = [
    { name: 'store upload >= 0.6x raw', value: store.uploadMBps / by.raw.uploadMBps, pass: store.uploadMBps >= 0.6 * by.raw.uploadMBps },
    { name: 'store download >= 0.6x raw', value: store.downloadMBps / by.raw.downloadMBps, pass: store.downloadMBps >= 0.6 * by.raw.downloadMBps },
    { name: 'store upload >= 3x s3rver', value: store.uploadMBps / by.s3rver.uploadMBps, pass: store.uploadMBps >= 3 * by.s3rver.uploadMBps },
    { name: 'store download >= 3x s3rver', value: store.downloadMBps / by.s3rver.downloadMBps, pass: store.downloadMBps >= 3 * by.s3rver.downloadMBps },
    { name: 'store complete < 1% of upload', value: store.completePct ?? NaN, pass: (store.completePct ?? Infinity) < 1 },
    { name: 'store bytes round-trip intact', value: store.verified ? 1 : 0, pass: store.verified === true },
  ];
  for (const c of checks) console.log(`${c.pass ? 'PASS' : 'FAIL'}  ${c.name} (${Number.isFinite(c.value) ? c.value.toFixed(3) : 'not measured'})`);
  for (const e of errors) console.log(`error: ${e}`);

  await mkdir('.bench-results', { recursive: true });
  await writeFile(join('.bench-results', 'store.json'), JSON.stringify({
    date: new Date().toISOString(),
    node: process.version,
    cpus: cpus().length,
    sizeMiB,
    partMiB: PART / MiB,
    concurrency: CONCURRENCY,
    rounds,
    client: 'node:http keep-alive agent, pre-signed URLs (parts, complete, ranged GETs)',
    summary: 'best round per target: highest MiB/s, lowest server CPU-s/GiB; median round for complete/upload',
    results,
    checks,
    errors,
    samples,
  }, null, 2) + '\n');
  console.log('figures written to .bench-results/store.json');
}

if (process.argv[2] === '--serve') {
  await child(process.argv[3] as Target, process.argv[4]!);
} else {
  await main();
}
