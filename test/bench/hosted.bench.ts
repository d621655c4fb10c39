// The hosted service under load: autocannon against the list routes (the Team
// Package list: default order page 1, a name filter, a deep page; a Portal's
// Packages; a Teamspace's Packages) and the upload flow's metadata path
// (register a file, get its part blueprints, finalize it), with N Packages in the
// Team, per backend (sqlite, postgres) and number of instances (1, 2). `ferry
// serve` runs built, as its own processes; the Packages are written straight into
// its database (lib/hostedSeed.ts). Prints requests/s, p50 and p99 latency and
// CPU per request (of the instances' processes, from /proc) per route, then the
// targets as PASS/FAIL, and on SQLite the plan of each list query. Writes
// .bench-results/hosted.json (or --out), and exits 0 whatever the figures.
//
// Run: npm run bench:hosted -- [--backend sqlite,postgres] [--instances 1,2]
//        [--packages 1000,100000] [--duration 5] [--warmup 1] [--connections 4]
//        [--database-url postgres://...] [--out FILE]
// --database-url (or FERRY_BENCH_DATABASE_URL) names a throwaway PostgreSQL
// database: the benchmark empties its public schema before each seeding.
import { copyFile, mkdir, mkdtemp, readdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { parseArgs } from 'node:util';
import { sql } from 'kysely';
import { call } from '../helpers/hosted.js';
import { repoRoot } from '../helpers/cli.js';
import * as dbLayer from '../../src/hosted/db/open.js';
import { openDatabase, type OpenedDb } from '../../src/hosted/db/open.js';
import { SINGLE_PUT } from '../../src/api/hosted/files.js';
import { startServedService, startStoreProcess, type ServedService, type StoreProgram } from './lib/processes.js';
import { seedPackages } from './lib/hostedSeed.js';
import { sqlitePlans, type Plan } from './lib/listPlans.js';
import { load, type LoadFigures, type Target } from './lib/load.js';

type Backend = 'sqlite' | 'postgres';
const list = (v: string) => v.split(',').map((s) => s.trim()).filter(Boolean);

const { values: opts } = parseArgs({
  options: {
    backend: { type: 'string', default: 'sqlite' },
    instances: { type: 'string', default: '1,2' },
    packages: { type: 'string', default: '1000,100000' },
    duration: { type: 'string', default: '5' },
    warmup: { type: 'string', default: '1' },
    connections: { type: 'string', default: '4' },
    'database-url': { type: 'string', default: process.env.FERRY_BENCH_DATABASE_URL ?? '' },
    out: { type: 'string', default: join(repoRoot, '.bench-results', 'hosted.json') },
    sources: { type: 'boolean', default: false },
  },
});
const BACKENDS = list(opts.backend) as Backend[];
const INSTANCES = list(opts.instances).map(Number);
const PACKAGES = list(opts.packages).map(Number);
const SECONDS = Number(opts.duration);
const WARMUP = Number(opts.warmup);
const CONNECTIONS = Number(opts.connections);
const DATABASE_URL = opts['database-url'];
for (const b of BACKENDS) if (b !== 'sqlite' && b !== 'postgres') throw new Error(`--backend: sqlite or postgres, not ${b}`);
for (const n of INSTANCES) if (n !== 1 && n !== 2) throw new Error(`--instances: 1 or 2, not ${n}`);

// The benchmark picks each instance's database by its flags: one inherited from the
// environment (a test run on PostgreSQL sets it) would put a "sqlite" run elsewhere.
delete process.env.FERRY_DATABASE_URL;

/** Every class of rate limit off: the benchmark measures the routes, not the 429s (the counter's upsert is skipped too). */
const NO_LIMITS = ['--rate-limit-sign-in', '0', '--rate-limit-public', '0', '--rate-limit-api', '0', '--rate-limit-package', '0'];

interface Row {
  backend: Backend;
  instances: number;
  packages: number;
  route: string;
  /** Why the combination was not measured ("needs PostgreSQL", an error); absent when it was. */
  skipped?: string;
  figures?: LoadFigures;
}
const rows: Row[] = [];
const plans: Record<string, Plan[]> = {};

interface Seeded { token: string; teamId: string; portalId: string; teamspaceId: string; listed: number; packageToken: string; packageId: string }

/** Signs the owner in, makes a Portal and a Teamspace through the API, and writes `count` Packages into the database. */
async function prepare(svc: ServedService, backend: Backend, count: number): Promise<Seeded> {
  const auth = await call(svc.url, 'POST', '/v1/auth', { body: svc.owner });
  if (auth.status !== 200) throw new Error(`sign-in: ${auth.status} ${JSON.stringify(auth.body)}`);
  const h = { 'x-user-token': auth.body.token as string };
  const userId = auth.body.user.id as string;
  const teamId = (await call(svc.url, 'GET', '/v1/teams', { headers: h })).body[0].id as string;
  const portal = await call(svc.url, 'POST', `/v1/teams/${teamId}/portals`, { headers: h, body: { name: 'Bench inbox', subdomain: `bench-${Date.now()}` } });
  const space = await call(svc.url, 'POST', `/v1/teams/${teamId}/spaces`, { headers: h, body: { name: 'Bench space' } });
  const pkg = await call(svc.url, 'POST', `/v1/teams/${teamId}/packages`, { headers: h, body: { name: 'Metadata path', description: '', recipients: [] } });
  for (const r of [portal, space, pkg]) if (r.status !== 201) throw new Error(`setup: ${r.status} ${JSON.stringify(r.body)}`);
  const plan = { teamId, userId, portalId: portal.body.id as string, teamspaceId: space.body.id as string, count };
  const t0 = performance.now();
  const db = await openForSeeding(svc, backend);
  let seeded;
  try {
    seeded = await seedPackages(db.db, plan);
    // After a bulk load PostgreSQL has neither statistics (its plans) nor a visibility map (its
    // index-only scans, the counts) until autovacuum gets to them, and then competes with the
    // measurement: a database in service has both. (SQLite's plans here need neither.)
    if (backend === 'postgres') await sql`VACUUM ANALYZE`.execute(db.db);
  } finally {
    await db.close();
  }
  console.log(`  seeded ${count} Packages in ${((performance.now() - t0) / 1000).toFixed(1)} s (${seeded.listed} listed by default, ${seeded.portal} through the Portal, ${seeded.teamspace} in the Teamspace)`);
  if (backend === 'sqlite') {
    const deep = Math.max(0, Math.floor(seeded.listed / 50 / 2) - 1) * 50;
    plans[`sqlite, ${count} Packages`] = sqlitePlans(join(svc.dataDir, 'ferry.db'), { ...plan }, deep);
  }
  return { token: h['x-user-token'], teamId, portalId: plan.portalId, teamspaceId: plan.teamspaceId, listed: seeded.listed, packageToken: pkg.body.access_token, packageId: pkg.body.id };
}

/**
 * The service's own database layer on the instance's database: its SQLite file, or the PostgreSQL
 * URL through open.ts's openConfiguredDatabase (which the PostgreSQL backend of issue 21 adds;
 * until it is there, a postgres run reports that it needs it).
 */
async function openForSeeding(svc: ServedService | undefined, backend: Backend): Promise<OpenedDb> {
  if (backend === 'sqlite') return openDatabase(join(svc!.dataDir, 'ferry.db'));
  const open = (dbLayer as Record<string, unknown>).openConfiguredDatabase as ((o: { database: string; sqliteFile: string }) => Promise<OpenedDb>) | undefined;
  if (!open) throw new Error('needs PostgreSQL: this build has no PostgreSQL backend (openConfiguredDatabase)');
  return open({ database: DATABASE_URL, sqliteFile: '' });
}

/** Empties the PostgreSQL database given for the benchmark, so that each seeding starts from nothing (the instance migrates it). */
async function emptyPostgres(): Promise<void> {
  const opened = await openForSeeding(undefined, 'postgres');
  try {
    await sql`DROP SCHEMA public CASCADE`.execute(opened.db);
    await sql`CREATE SCHEMA public`.execute(opened.db);
  } finally {
    await opened.close();
  }
}

/** A second instance on the first one's database and store, with its keys (copied until instances share them otherwise). */
async function startSecond(work: string, first: ServedService, args: string[]): Promise<ServedService> {
  return startServedService(work, args, { built: !opts.sources }, async (dir) => {
    for (const f of await readdir(first.dataDir)) if (f.endsWith('.key')) await copyFile(join(first.dataDir, f), join(dir, f));
  });
}

/** Names the metadata path's files, unique across runs: each configuration registers into the same Package. */
let fileSeq = 0;

function routes(s: Seeded): { name: string; target: Target }[] {
  const user = { 'x-user-token': s.token };
  const deepPage = Math.max(1, Math.floor(s.listed / 50 / 2));
  const pkg = `/v1/packages/${s.packageId}/files`;
  const json = { 'content-type': 'application/json', 'x-package-token': s.packageToken };
  const lastModified = new Date().toISOString();
  return [
    { name: 'team list, page 1', target: { path: `/v1.1/teams/${s.teamId}/packages`, headers: user } },
    { name: 'team list, name filter', target: { path: `/v1.1/teams/${s.teamId}/packages?name=reel%207`, headers: user } },
    { name: 'team list, sorted by name', target: { path: `/v1.1/teams/${s.teamId}/packages?sort=name`, headers: user } },
    { name: `team list, deep page (middle)`, target: { path: `/v1.1/teams/${s.teamId}/packages?page=${deepPage}`, headers: user } },
    { name: 'portal list, page 1', target: { path: `/v1.1/portals/${s.portalId}/packages`, headers: user } },
    { name: 'teamspace list, page 0', target: { path: `/v1.1/spaces/${s.teamspaceId}/packages`, headers: user } },
    {
      // An empty file: its finalize stores an empty object where a real one completes the multipart
      // upload of parts that this client, talking to the service only, does not upload.
      name: 'metadata path (register, blueprints, finalize)',
      target: {
        headers: json,
        requests: [
          {
            method: 'POST',
            path: pkg,
            setupRequest: (req) => ({ ...req, body: JSON.stringify({ kind: 'file', name: `f${fileSeq++}.bin`, path: 'shots', last_modified: lastModified, size: 0 }) }),
            onResponse: (status, body, ctx) => void (ctx.fileId = status === 201 ? JSON.parse(body).file.id : 'none'),
          },
          {
            method: 'POST',
            setupRequest: (req, ctx) => ({ ...req, path: `${pkg}/${ctx.fileId}?start=0&count=1`, body: JSON.stringify({ upload_id: SINGLE_PUT }) }),
          },
          {
            method: 'POST',
            setupRequest: (req, ctx) => ({ ...req, path: `${pkg}/${ctx.fileId}/finalize`, body: JSON.stringify({ chunk_extras: [], file_extras: { upload_id: SINGLE_PUT }, size: 0 }) }),
          },
        ],
      },
    },
  ];
}

async function measure(instances: ServedService[], s: Seeded, where: Omit<Row, 'route'>): Promise<void> {
  for (const { name, target } of routes(s)) {
    if (WARMUP > 0) await load(instances, target, CONNECTIONS, WARMUP);
    const figures = await load(instances, target, CONNECTIONS, SECONDS);
    rows.push({ ...where, route: name, figures });
    const f = figures;
    console.log(`  ${name.padEnd(48)} ${f.rps.toFixed(0).padStart(6)} req/s  p50 ${f.p50.toFixed(1).padStart(6)} ms  p99 ${f.p99.toFixed(1).padStart(6)} ms  CPU ${f.cpuMsPerRequest?.toFixed(2) ?? '?'} ms/req${f.failures ? `  ${f.failures} FAILED (${f.firstFailure})` : ''}`);
  }
}

function skipAll(where: Omit<Row, 'route' | 'skipped'>, why: string): void {
  console.log(`  ${why}`);
  rows.push({ ...where, route: '*', skipped: why });
}

const work = await mkdtemp(join(process.env.BENCH_DIR ?? tmpdir(), 'ferry-bench-hosted-'));
try {
  for (const backend of BACKENDS) {
    for (const count of PACKAGES) {
      console.log(`\n${backend}, ${count} Packages`);
      if (backend === 'postgres' && !DATABASE_URL) {
        for (const n of INSTANCES) skipAll({ backend, instances: n, packages: count }, `${n} instance(s): needs PostgreSQL: give --database-url (or FERRY_BENCH_DATABASE_URL)`);
        continue;
      }
      let store: StoreProgram | undefined;
      let first: ServedService | undefined;
      let second: ServedService | undefined;
      try {
        // On PostgreSQL, as deployed: every instance, one or two, on one external store (its own process, not counted in CPU).
        let args = NO_LIMITS;
        if (backend === 'postgres') {
          await emptyPostgres();
          store = await startStoreProcess(work, { built: !opts.sources });
          args = [...NO_LIMITS, '--database', DATABASE_URL, ...store.flags];
        }
        first = await startServedService(work, args, { built: !opts.sources });
        const seeded = await prepare(first, backend, count);
        for (const n of INSTANCES) {
          const where = { backend, instances: n, packages: count };
          console.log(` ${n} instance(s)`);
          if (n === 2 && backend === 'sqlite') {
            skipAll(where, 'needs PostgreSQL: two instances share one database, and SQLite is one machine\'s');
            continue;
          }
          try {
            if (n === 2) second ??= await startSecond(work, first, args);
            await measure(n === 2 ? [first, second!] : [first], seeded, where);
          } catch (err) {
            skipAll(where, `failed: ${(err as Error).message.split('\n')[0]}`);
          }
        }
      } catch (err) {
        for (const n of INSTANCES) if (!rows.some((r) => r.backend === backend && r.packages === count && r.instances === n)) skipAll({ backend, instances: n, packages: count }, `failed: ${(err as Error).message.split('\n')[0]}`);
      } finally {
        await second?.stop();
        await first?.stop();
        await store?.stop();
      }
    }
  }
  report();
  await mkdir(dirname(opts.out), { recursive: true });
  await writeFile(opts.out, JSON.stringify({ when: new Date().toISOString(), duration: SECONDS, connections: CONNECTIONS, rows, plans }, null, 2));
} finally {
  await rm(work, { recursive: true, force: true });
}

/** The targets of issue 21, computed from this run's figures (never asserted). */
function report(): void {
  const measured = rows.filter((r) => r.figures);
  const fig = (b: Backend, n: number, count: number, route: string) => measured.find((r) => r.backend === b && r.instances === n && r.packages === count && r.route === route)?.figures;
  const lo = Math.min(...PACKAGES);
  const hi = Math.max(...PACKAGES);
  const lines: string[] = [];
  const verdict = (ok: boolean) => (ok ? 'PASS' : 'FAIL');
  for (const b of BACKENDS) {
    for (const n of INSTANCES) {
      for (const route of [...new Set(measured.map((r) => r.route))].filter((r) => r.includes('list'))) {
        const big = fig(b, n, hi, route);
        const small = fig(b, n, lo, route);
        if (big) lines.push(`${b}, ${n} inst, ${route}: p99 at ${hi} = ${big.p99.toFixed(1)} ms (< 50)  ${verdict(big.p99 < 50)}`);
        if (big && small && hi !== lo) {
          const ratio = big.p99 / small.p99;
          lines.push(`${b}, ${n} inst, ${route}: p99 ${hi} / ${lo} = ${ratio.toFixed(2)}x (<= 1.5)  ${verdict(ratio <= 1.5)}`);
          // CPU per request moves far less than latency on a shared machine: the same growth, measured steadily.
          if (big.cpuMsPerRequest !== undefined && small.cpuMsPerRequest !== undefined) {
            const cpu = big.cpuMsPerRequest / small.cpuMsPerRequest;
            lines.push(`${b}, ${n} inst, ${route}: CPU/request ${hi} / ${lo} = ${cpu.toFixed(2)}x (<= 1.5, the same target in CPU)  ${verdict(cpu <= 1.5)}`);
          }
        }
      }
    }
    for (const count of PACKAGES) {
      for (const route of [...new Set(measured.map((r) => r.route))]) {
        const one = fig(b, 1, count, route)?.cpuMsPerRequest;
        const two = fig(b, 2, count, route)?.cpuMsPerRequest;
        if (one !== undefined && two !== undefined) lines.push(`${b}, ${count}, ${route}: CPU/request 2 inst / 1 = ${(two / one).toFixed(2)}x (<= 1.1)  ${verdict(two / one <= 1.1)}`);
      }
    }
  }
  for (const r of rows.filter((x) => x.skipped)) lines.push(`${r.backend}, ${r.instances} inst, ${r.packages}: not measured (${r.skipped})`);
  console.log('\ntargets');
  for (const l of lines) console.log(`  ${l}`);
  for (const [where, ps] of Object.entries(plans)) {
    console.log(`\nquery plans (${where})`);
    for (const p of ps) console.log(`  ${p.query.padEnd(32)} ${p.scans ? 'SCAN ' : ''}${p.tempSort ? 'SORT ' : ''}${p.plan.join(' | ')}`);
  }
}
