#!/usr/bin/env node
// `npm test`: the system programs the suites need (scripts/system-deps.mjs),
// type checking (Node code and the renderer), the layer check, the
// build, every vitest suite (unit and integration), the agent's suites again on
// Node 24 (the Node inside Electron, scripts/node24.mjs), the hosted suites again
// on PostgreSQL (a throwaway cluster; skipped, saying why, where none can run),
// the external-S3 suites against Ceph's RADOS Gateway (a throwaway one-node
// cluster; skipped likewise), then the app's Playwright tests in Debian's Chromium. Lists each test that ran in no pass
// with its reason, then ends with one line "N passed, N failed" that CI reads.
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { postgresUnavailable } from './postgres-cluster.mjs';
import { cephUnavailable } from './ceph-cluster.mjs';
import { ensureSystemDeps } from './system-deps.mjs';

const root = path.resolve(path.dirname(new URL(import.meta.url).pathname), '..');
const bin = (name) => path.join(root, 'node_modules', '.bin', name);
let passed = 0;
let failed = 0;
/** Each vitest test by file and name: whether some pass ran it, and why it was skipped where it was not. */
const outcomes = new Map();

function step(name, cmd, args, env = {}) {
  console.log(`\n=== ${name}: ${[path.basename(cmd), ...args].join(' ')}`);
  const r = spawnSync(cmd, args, { cwd: root, stdio: 'inherit', env: { ...process.env, ...env } });
  return r.status === 0;
}

function check(name, cmd, args) {
  if (step(name, cmd, args)) passed++;
  else {
    failed++;
    console.log(`--- ${name} FAILED`);
  }
}

// The programs the suites drive, before anything runs: installed where possible, else the run stops and says how.
const missing = ensureSystemDeps();
if (missing.length > 0) {
  for (const d of missing) console.error(`npm test needs ${d.pkg} (${d.why}).`);
  console.error(`Install with: sudo apt-get install -y --no-install-recommends ${missing.map((d) => d.pkg).join(' ')}`);
  console.log(`0 passed, ${missing.length} failed`);
  process.exit(1);
}

check('typecheck', bin('tsc'), ['-p', 'tsconfig.json', '--noEmit']);
check('typecheck renderer', bin('tsc'), ['-p', 'renderer/tsconfig.json', '--noEmit']);
check('typecheck web pages', bin('tsc'), ['-p', 'web/tsconfig.json', '--noEmit']);
check('layers', process.execPath, ['scripts/check-layers.mjs']);

// The command, the desktop app and its window, built from the sources as they are: some tests run the builds.
check('build', process.execPath, ['scripts/build.mjs']);

/** Runs a vitest step and counts what its JSON report says. */
function vitestStep(name, cmd, args, report, env = {}) {
  const results = path.join(root, '.test-results', report);
  fs.rmSync(results, { force: true });
  const ok = step(name, cmd, args, env);
  if (!fs.existsSync(results)) {
    // A step that passes without a report ran nothing here (node24 off Linux x64 says why).
    if (!ok) failed++;
    console.log(`--- ${name} wrote no results`);
    return;
  }
  const r = JSON.parse(fs.readFileSync(results, 'utf8'));
  for (const suite of r.testResults ?? []) {
    for (const a of suite.assertionResults ?? []) {
      const key = `${path.relative(root, suite.name)} > ${a.fullName}`;
      const ran = a.status === 'passed' || a.status === 'failed';
      const seen = outcomes.get(key) ?? { ran: false, reason: undefined };
      outcomes.set(key, { ran: seen.ran || ran, reason: seen.reason ?? a.meta?.skip_reason });
    }
  }
  passed += r.numPassedTests;
  failed += r.numFailedTests;
  // A suite that fails to load counts as a failure even though it ran no test.
  const brokenSuites = (r.testResults ?? []).filter((s) => s.status === 'failed' && (s.assertionResults ?? []).every((a) => a.status !== 'failed')).length;
  failed += brokenSuites;
  if (!ok && r.numFailedTests === 0 && brokenSuites === 0) failed++;
}

vitestStep('vitest', bin('vitest'), ['run', ...process.argv.slice(2)], 'vitest.json');
// A run of chosen files (npm test -- FILE) leaves the rest out.
if (process.argv.length <= 2) vitestStep('vitest on Node 24', process.execPath, ['scripts/node24.mjs'], 'vitest-node24.json');

// The hosted suites on PostgreSQL: test/helpers/postgresGlobal.ts starts the cluster, each service gets its database.
// test/integration/deploy (several instances behind nginx) runs only in this pass.
const postgresSkipped = process.argv.length <= 2 ? postgresUnavailable() : undefined;
if (process.argv.length <= 2 && !postgresSkipped) {
  vitestStep(
    'vitest hosted on PostgreSQL',
    bin('vitest'),
    ['run', 'test/integration/hosted', 'test/integration/deploy', '--outputFile.json=.test-results/vitest-postgres.json'],
    'vitest-postgres.json',
    { FERRY_TEST_DATABASE: 'postgres' },
  );
}

// The external-S3 suites again with Ceph's RADOS Gateway as the store (test/helpers/cephGlobal.ts starts
// the cluster): a signing or XML detail that only Ferry's own store accepts fails here.
const RGW_SUITES = ['external-s3', 'upload-flow', 'zip', 'cloud-delivery', 'portal-page'].map((f) => `test/integration/hosted/${f}.test.ts`);
const cephSkipped = process.argv.length <= 2 ? cephUnavailable() : undefined;
if (process.argv.length <= 2 && !cephSkipped) {
  vitestStep(
    'vitest external-S3 suites on Ceph RADOS Gateway',
    bin('vitest'),
    ['run', ...RGW_SUITES, 'test/integration/cli/bucket-cors.test.ts', '--outputFile.json=.test-results/vitest-rgw.json'],
    'vitest-rgw.json',
    { FERRY_TEST_S3: 'rgw' },
  );
}

// The app against a real service and agent, in Chromium.
const pwResults = path.join(root, '.test-results', 'playwright.json');
fs.rmSync(pwResults, { force: true });
const pwOk = step('playwright', bin('playwright'), ['test']);
const pwSkipped = [];
if (fs.existsSync(pwResults)) {
  const report = JSON.parse(fs.readFileSync(pwResults, 'utf8'));
  const s = report.stats ?? {};
  passed += (s.expected ?? 0) + (s.flaky ?? 0);
  failed += s.unexpected ?? 0;
  const walk = (suite, file) => {
    for (const spec of suite.specs ?? []) {
      for (const t of spec.tests ?? []) {
        if (t.status !== 'skipped') continue;
        const why = (t.annotations ?? []).find((a) => a.type === 'skip')?.description;
        pwSkipped.push(`${file ?? suite.file} > ${spec.title}: ${why ?? 'no reason given'}`);
      }
    }
    for (const inner of suite.suites ?? []) walk(inner, file ?? suite.file);
  };
  for (const suite of report.suites ?? []) walk(suite);
  if (!pwOk && !s.unexpected) failed++;
} else {
  failed++;
  console.log('--- playwright wrote no results');
}

if (postgresSkipped) console.log(`\nPostgreSQL run skipped: ${postgresSkipped}`);
if (cephSkipped) console.log(`\nRADOS Gateway run skipped (the external-S3 suites ran against the embedded store only): ${cephSkipped}`);
const skipped = [...[...outcomes].filter(([, o]) => !o.ran).map(([key, o]) => `${key}: ${o.reason ?? 'no reason given'}`), ...pwSkipped];
// The last line stays "N passed, N failed" (what CI reads); the skipped count is the line before it.
console.log(`\n${skipped.length} skipped (run in no pass)${skipped.map((line) => `\n  ${line}`).join('')}`);
console.log(`${passed} passed, ${failed} failed`);
process.exit(failed === 0 ? 0 : 1);
