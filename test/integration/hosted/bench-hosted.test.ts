// `npm run bench:hosted` end to end on a tiny configuration, so that the
// benchmark cannot rot: it runs, measures every route without a failed request,
// says which combinations need PostgreSQL, and its list queries walk indexes
// (no full scan, no sort of every match). No figure is asserted.
import { spawn } from 'node:child_process';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { repoRoot } from '../../helpers/cli.js';

interface Out {
  rows: { backend: string; instances: number; packages: number; route: string; skipped?: string; figures?: { requests: number; failures: number; firstFailure?: string } }[];
  plans: Record<string, { query: string; plan: string[]; scans: boolean; tempSort: boolean }[]>;
}

let dir: string;
let out: Out;
let stdout = '';

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'ferry-bench-hosted-test-'));
  const file = join(dir, 'hosted.json');
  const args = ['--import', 'tsx', 'test/bench/hosted.bench.ts', '--sources', '--packages', '200', '--instances', '1,2', '--duration', '1', '--warmup', '0', '--connections', '2', '--out', file];
  const code = await new Promise<number | null>((resolve, reject) => {
    const child = spawn(process.execPath, args, { cwd: repoRoot, env: { ...process.env, NODE_NO_WARNINGS: '1', FERRY_BENCH_DATABASE_URL: '' } });
    child.stdout.setEncoding('utf8').on('data', (d: string) => (stdout += d));
    child.stderr.setEncoding('utf8').on('data', (d: string) => (stdout += d));
    child.on('error', reject);
    child.on('close', resolve);
  });
  expect(code, stdout).toBe(0);
  out = JSON.parse(await readFile(file, 'utf8')) as Out;
}, 120_000);

afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

describe('npm run bench:hosted on 200 Packages', () => {
  it('measures every list route and the metadata path on SQLite with one instance, with no failed request', () => {
    const measured = out.rows.filter((r) => r.backend === 'sqlite' && r.instances === 1 && r.figures);
    expect(measured.map((r) => r.route)).toEqual([
      'team list, page 1',
      'team list, name filter',
      'team list, sorted by name',
      'team list, deep page (middle)',
      'portal list, page 1',
      'teamspace list, page 0',
      'metadata path (register, blueprints, finalize)',
    ]);
    for (const r of measured) {
      expect(r.figures!.requests, r.route).toBeGreaterThan(0);
      expect(r.figures!.failures, `${r.route}: ${r.figures!.firstFailure}`).toBe(0);
    }
    expect(stdout).toContain('p99');
    expect(stdout).toContain('CPU');
  });

  it('reports two instances on SQLite as needing PostgreSQL instead of measuring them', () => {
    const two = out.rows.filter((r) => r.instances === 2);
    expect(two).toHaveLength(1);
    expect(two[0]!.skipped).toMatch(/needs PostgreSQL/);
  });

  it('plans each list query as an index search: no full scan, and no sort of every match for the default order', () => {
    const plans = out.plans['sqlite, 200 Packages']!;
    expect(plans.length).toBeGreaterThan(0);
    for (const p of plans) {
      expect(p.scans, `${p.query}: ${p.plan.join(' | ')}`).toBe(false);
      expect(p.tempSort, `${p.query}: ${p.plan.join(' | ')}`).toBe(false);
    }
  });

  it('leads a name filter\'s count with a trigram\'s names, looked up by rowid; its page walks the Team\'s index past the others', () => {
    const plans = out.plans['sqlite, 200 Packages']!;
    const count = plans.find((p) => p.query === 'team list, name filter from a trigram: count')!;
    const page = plans.find((p) => p.query === 'team list, name filter from a trigram: page 1')!;
    expect(count.plan[0], count.plan.join(' | ')).toBe('SEARCH packages USING INTEGER PRIMARY KEY (rowid=?)');
    expect(page.plan[0], page.plan.join(' | ')).toBe('SEARCH packages USING INDEX packages_team_created (team_id=?)');
    for (const p of [count, page]) expect(p.plan.some((d) => d.startsWith('SCAN package_names VIRTUAL TABLE')), p.plan.join(' | ')).toBe(true);
  });
});
