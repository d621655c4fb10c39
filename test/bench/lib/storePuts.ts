// `ferry objectstore` as its own process with its request log on, for the runs
// that must count what reaches the store: the log's PUT lines are counted per
// object key as they come (nothing is kept but the counts since the last mark),
// so a million requests cost a map, not a million lines.
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { repoRoot } from '../../helpers/cli.js';
import { cpuOf, type StoreProgram } from './processes.js';

export interface CountedStore extends StoreProgram {
  keys: { access: string; secret: string };
  /** Forgets the counts so far: what follows is counted from zero. */
  mark(): void;
  /** PUTs answered 2xx since the last mark, per object key (`packages/{package}/{file}`). */
  puts(): Map<string, number>;
}

export async function startCountedStore(work: string): Promise<CountedStore> {
  const dataDir = await mkdtemp(join(work, 'store-'));
  const keys = { access: 'bench', secret: randomBytes(16).toString('hex') };
  const child = spawn(process.execPath, ['--require', join(repoRoot, 'bin/threadPool.cjs'), join(repoRoot, 'dist/ferry.mjs'),
    'objectstore', '--listen', '127.0.0.1:0', '--data-dir', dataDir, '--access-key', keys.access, '--log-level', 'debug'], {
    cwd: repoRoot,
    env: { ...process.env, NODE_NO_WARNINGS: '1', FERRY_OBJECTSTORE_SECRET_KEY: keys.secret },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let counts = new Map<string, number>();
  let stderr = '';
  child.stderr.setEncoding('utf8').on('data', (d: string) => (stderr = (stderr + d).slice(-4000)));
  let partial = '';
  let ready: (url: string) => void;
  const url = new Promise<string>((ok) => (ready = ok));
  const exited = new Promise<void>((ok) => child.once('close', () => ok()));
  child.stdout.setEncoding('utf8').on('data', (d: string) => {
    const lines = (partial + d).split('\n');
    partial = lines.pop()!;
    for (const line of lines) {
      if (!line.startsWith('{')) continue;
      const l = JSON.parse(line) as { msg?: string; method?: string; url?: string; status?: number };
      if (l.msg === 'ferry object store ready') ready(String((l as { url?: string }).url));
      else if (l.msg === 'objectstore: request' && l.method === 'PUT' && l.status! < 300) {
        // url is /bucket/key: the key is what the service named the file's object.
        const key = l.url!.slice(l.url!.indexOf('/', 1) + 1);
        counts.set(key, (counts.get(key) ?? 0) + 1);
      }
    }
  });
  const storeUrl = await Promise.race([url, exited.then(() => { throw new Error(`ferry objectstore exited before it was ready: ${stderr}`); })]);
  const pid = child.pid!;
  return {
    url: storeUrl,
    pid,
    keys,
    flags: ['--s3-endpoint', storeUrl, '--s3-access-key', keys.access, '--s3-secret-key', keys.secret],
    cpu: () => cpuOf(pid),
    mark: () => void (counts = new Map()),
    puts: () => counts,
    kill: (signal) => void child.kill(signal),
    async stop() {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
      await exited;
      await rm(dataDir, { recursive: true, force: true });
    },
  };
}
