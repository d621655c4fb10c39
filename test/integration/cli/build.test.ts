// The built `ferry` (scripts/build.mjs, run by npm install as `prepare`): the
// bundle runs the agent and the service as the sources do, and bin/ferry.cjs
// runs it only while it is newer than every file under src/, with libuv's
// thread pool sized before it starts. The bundle under test is built into a
// folder of this file's own: the other CLI suites run dist/'s meanwhile.
import { execFile } from 'node:child_process';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { pathToFileURL } from 'node:url';
import { afterAll, beforeAll, describe, expect, test, vi } from 'vitest';
import { jsonLine, repoRoot, startFerry, type Running } from '../../helpers/cli.js';
import { call } from '../../helpers/hosted.js';
import { onlyIf } from '../../helpers/skip.js';

vi.setConfig({ testTimeout: 120_000, hookTimeout: 120_000 });
const run = promisify(execFile);

let tmp: string;
/** Inside the repository, so that the bundle's packages resolve from node_modules as dist/'s do. */
let outdir: string;
const running: Running[] = [];

beforeAll(async () => {
  tmp = await fs.mkdtemp(path.join(os.tmpdir(), 'ferry-build-'));
  await fs.mkdir(path.join(repoRoot, '.test-results'), { recursive: true });
  outdir = await fs.mkdtemp(path.join(repoRoot, '.test-results', 'bundle-'));
  const script = 'const { buildCli } = await import(process.argv[1]); await buildCli(process.argv[2]);';
  await run(process.execPath, ['--input-type=module', '-e', script, pathToFileURL(path.join(repoRoot, 'scripts', 'build.mjs')).href, outdir], { cwd: repoRoot });
});
afterAll(async () => {
  await Promise.all(running.map((r) => r.stop('SIGKILL')));
  await fs.rm(tmp, { recursive: true, force: true });
  if (outdir) await fs.rm(outdir, { recursive: true, force: true });
});

describe('the bundle', () => {
  test('runs the agent, which reports the package version, and loads none of the service packages', async () => {
    const agent = startFerry(['agent', '--listen', '127.0.0.1:0', '--config-dir', path.join(tmp, 'agent')], {}, { bundle: path.join(outdir, 'ferry.mjs') });
    running.push(agent);
    const ready = jsonLine(await agent.waitFor((l) => jsonLine(l)?.msg === 'ferry agent ready', 'ready line'))!;
    const about = await call(String(ready.url), 'GET', '/about');
    const pkg = JSON.parse(await fs.readFile(path.join(repoRoot, 'package.json'), 'utf8')) as { version: string };
    expect(about.status).toBe(200);
    expect(about.body.version).toBe(pkg.version);
    // Each subcommand is its own chunk: what the agent's imports reach holds neither the AWS SDK nor Kysely.
    const packages = await packagesImportedBy('agent');
    expect(packages).toContain('better-sqlite3');
    expect(packages.filter((p) => /^@aws-sdk\/|^kysely$|^nodemailer$/.test(p))).toEqual([]);
  });

  test('runs the hosted service, which answers its public route', async () => {
    const serve = startFerry(['serve', '--listen', '127.0.0.1:0', '--s3-listen', '127.0.0.1:0', '--data-dir', path.join(tmp, 'serve')], {}, { bundle: path.join(outdir, 'ferry.mjs') });
    running.push(serve);
    const ready = jsonLine(await serve.waitFor((l) => jsonLine(l)?.msg === 'ferry hosted service ready', 'ready line'))!;
    const r = await call(String(ready.url), 'GET', '/v1/system/packages/spec');
    expect(r.status).toBe(200);
    expect(r.body.min_chunk_size).toEqual(expect.any(Number));
    expect(await serve.stop('SIGTERM')).toBe(0);
  });
});

/** The packages a subcommand's chunk imports, following the chunks it imports in turn. */
async function packagesImportedBy(command: string): Promise<string[]> {
  const entry = await fs.readFile(path.join(outdir, 'ferry.mjs'), 'utf8');
  const chunk = new RegExp(`import\\("\\./chunks/(${command}-[A-Z0-9]+\\.mjs)"\\)`).exec(entry)?.[1];
  expect(chunk, `the ${command} command is its own chunk`).toBeDefined();
  const seen = new Set<string>();
  const packages = new Set<string>();
  const visit = async (file: string): Promise<void> => {
    if (seen.has(file)) return;
    seen.add(file);
    const text = await fs.readFile(path.join(outdir, 'chunks', file), 'utf8');
    for (const m of text.matchAll(/^import\s[^'"]*['"]([^'"]+)['"]/gm)) {
      if (m[1]!.startsWith('./')) await visit(m[1]!.slice(2));
      else packages.add(m[1]!);
    }
  };
  await visit(chunk!);
  return [...packages];
}

describe('bin/ferry.cjs', () => {
  // A copy of bin/ in a scratch tree inside the repo (so that `tsx` resolves from
  // node_modules), with a stand-in bundle and stand-in sources that each say which ran.
  let scratch: string;
  beforeAll(async () => {
    await fs.mkdir(path.join(repoRoot, '.test-results'), { recursive: true });
    scratch = await fs.mkdtemp(path.join(repoRoot, '.test-results', 'bin-'));
    await fs.mkdir(path.join(scratch, 'bin'), { recursive: true });
    await fs.mkdir(path.join(scratch, 'src', 'cli'), { recursive: true });
    for (const f of ['ferry.cjs', 'threadPool.cjs']) await fs.copyFile(path.join(repoRoot, 'bin', f), path.join(scratch, 'bin', f));
    await fs.writeFile(path.join(scratch, 'src', 'cli', 'main.ts'), "const from: string = 'sources';\nconsole.log(from);\n");
  });
  afterAll(async () => {
    if (scratch) await fs.rm(scratch, { recursive: true, force: true });
  });

  const ferryBin = async (env: Record<string, string> = {}) =>
    (await run(process.execPath, [path.join(scratch, 'bin', 'ferry.cjs')], { env: { ...process.env, ...env } })).stdout.trim();
  const setTimes = (file: string, seconds: number) => fs.utimes(file, seconds, seconds);

  test('runs the sources while there is no bundle', async () => {
    await fs.rm(path.join(scratch, 'dist'), { recursive: true, force: true });
    expect(await ferryBin()).toBe('sources');
  });

  test('runs the bundle when it is newer than every source, and the sources once one is newer', async () => {
    const bundle = path.join(scratch, 'dist', 'ferry.mjs');
    await fs.mkdir(path.dirname(bundle), { recursive: true });
    await fs.writeFile(bundle, "console.log('bundle');\n");
    await setTimes(path.join(scratch, 'src', 'cli', 'main.ts'), 1_700_000_000);
    await setTimes(bundle, 1_700_000_100);
    expect(await ferryBin()).toBe('bundle');
    await setTimes(path.join(scratch, 'src', 'cli', 'main.ts'), 1_700_000_200);
    expect(await ferryBin()).toBe('sources');
  });

  // The bundle stands in to count the threads of its process once a file read has started
  // libuv's pool (Linux tells them in /proc): the pool's size is the difference between
  // a run at libuv's default and one left to bin/ferry.cjs.
  test('starts libuv\'s pool with 16 threads unless UV_THREADPOOL_SIZE says otherwise', onlyIf(process.platform === 'linux', 'reads /proc: Linux only'), async () => {
    const bundle = path.join(scratch, 'dist', 'ferry.mjs');
    await fs.mkdir(path.dirname(bundle), { recursive: true });
    await fs.writeFile(bundle, [
      "import { readdirSync } from 'node:fs';",
      "import { readFile } from 'node:fs/promises';",
      "await readFile(new URL(import.meta.url));",
      "console.log(readdirSync('/proc/self/task').length);",
    ].join('\n'));
    await setTimes(path.join(scratch, 'src', 'cli', 'main.ts'), 1_700_000_000);
    await setTimes(bundle, 1_700_000_100);
    const threads = async (env: Record<string, string>) => Number(await ferryBin(env));
    const atDefault = await threads({ UV_THREADPOOL_SIZE: '4' });
    expect(await threads({ UV_THREADPOOL_SIZE: '' }) - atDefault).toBe(12);
    expect(await threads({ UV_THREADPOOL_SIZE: '6' }) - atDefault).toBe(2);
  });
});
