// docs/deploy.md on one machine, for tests: a stand-alone store (`ferry objectstore`),
// `ferry serve` processes on one PostgreSQL database of the run's cluster with the
// same keys, and Debian's nginx running docs/deploy/nginx.conf itself (only its
// ports and log directory changed) in front of them. Every process is its own, so
// that one instance can be killed (SIGKILL). close() stops them all.
import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { expect, vi } from 'vitest';
import { GENEROUS_LIMITS } from './hosted.js';
import { jsonLine, repoRoot, startFerry, type Running } from './cli.js';
import { freePort } from './ports.js';
import { createTestDatabase, dropTestDatabase } from './postgres.js';

const NGINX = ['/usr/sbin/nginx', '/usr/local/sbin/nginx', '/usr/bin/nginx'].find((p) => existsSync(p));
export const deployOwner = { email: 'owner@example.com', password: 'correct horse battery' };
const store = { accessKey: 'DEPLOYTESTKEY0001', secretKey: 'deploy-test-secret-key', bucket: 'ferry' };

export interface AnsweredRequest { method: string; path: string; port: number; status: number }

export interface Deployment {
  /** nginx's address, the instances' --public-url. */
  url: string;
  tmp: string;
  /** The instances' ports, in the order of the upstream block. */
  ports: [number, number];
  instances: [Running, Running];
  /** The access log's requests after its first `from` lines, each with the port of the instance that answered it. */
  answered(from?: number): Promise<{ lines: number; requests: AnsweredRequest[] }>;
  close(): Promise<void>;
}

/** docs/deploy/nginx.conf with these ports and log directory; each value replaced must be in the file. */
async function guideConfig(ports: { a: number; b: number; nginx: number }, logDir: string): Promise<string> {
  let conf = await fs.readFile(path.join(repoRoot, 'docs/deploy/nginx.conf'), 'utf8');
  const swaps: [RegExp, string][] = [
    [/127\.0\.0\.1:7410\b/g, `127.0.0.1:${ports.a}`],
    [/127\.0\.0\.1:7420\b/g, `127.0.0.1:${ports.b}`],
    [/listen 8000;/g, `listen 127.0.0.1:${ports.nginx};`],
    [/\/var\/log\/nginx\//g, `${logDir}/`],
  ];
  for (const [re, to] of swaps) {
    expect(conf, `docs/deploy/nginx.conf holds ${re}`).toMatch(re);
    conf = conf.replace(re, to);
  }
  return conf;
}

/** Starts the whole deployment; `flags` go to both instances (after the guide's settings). */
export async function startDeployment(flags: Record<string, string> = {}): Promise<Deployment> {
  const tmp = await fs.mkdtemp(path.join(os.tmpdir(), 'ferry-deploy-'));
  const ports = { a: await freePort(), b: await freePort(), store: await freePort(), nginx: await freePort() };
  const url = `http://127.0.0.1:${ports.nginx}`;
  let db: { name: string; url: string } | undefined;
  let objectstore: Running | undefined;
  const instances: Running[] = [];
  let nginx: ChildProcess | undefined;
  let nginxExited: Promise<void> | undefined;

  const close = async () => {
    if (nginx && nginx.exitCode === null && nginx.signalCode === null) {
      nginx.kill('SIGTERM');
      await nginxExited;
    }
    for (const i of instances) await i.stop('SIGKILL');
    await objectstore?.stop('SIGKILL');
    if (db) await dropTestDatabase(db.name);
    await fs.rm(tmp, { recursive: true, force: true });
  };

  /** One `ferry serve` as the guide runs it: the shared database, store and keys (the secrets in its environment), nginx's address as its public URL, trusting nginx's X-Forwarded-For. */
  const startInstance = async (port: number, keys: Record<string, string>, first: boolean) => {
    const extra = Object.entries({ ...GENEROUS_LIMITS, ...flags }).flatMap(([k, v]) => [`--${k}`, String(v)]);
    const serve = startFerry(
      [
        'serve',
        '--listen', `127.0.0.1:${port}`,
        '--data-dir', path.join(tmp, `instance-${port}`),
        '--public-url', url,
        '--trust-proxy', '127.0.0.1',
        '--s3-endpoint', `http://127.0.0.1:${ports.store}`, '--s3-bucket', store.bucket, '--s3-region', 'us-east-1',
        '--s3-access-key', store.accessKey, '--s3-path-style',
        ...(first ? ['--init-owner', `${deployOwner.email}:${deployOwner.password}`] : []),
        ...extra,
      ],
      // The secrets in the environment, as the guide's EnvironmentFile gives them.
      { ...keys, FERRY_DATABASE_URL: db!.url, FERRY_S3_SECRET_KEY: store.secretKey },
    );
    instances.push(serve);
    await serve.waitFor((l) => jsonLine(l)?.msg === 'ferry hosted service ready', `instance ${port} ready`);
  };

  /** nginx in the foreground: the guide's file inside a minimal main config, everything of its own in tmp/nginx. */
  const startNginx = async () => {
    if (!NGINX) throw new Error('nginx is not installed (Debian package nginx; .ci/run installs it)');
    const dir = path.join(tmp, 'nginx');
    await fs.mkdir(dir, { recursive: true });
    await fs.writeFile(path.join(dir, 'ferry.conf'), await guideConfig(ports, dir));
    const main = [
      // As root, nginx would hand its workers to `nobody`, who cannot enter the temp dir.
      ...(process.getuid?.() === 0 ? ['user root;'] : []),
      'daemon off;',
      'worker_processes 1;',
      `pid ${dir}/nginx.pid;`,
      `error_log ${dir}/error.log warn;`,
      'events { worker_connections 1024; }',
      'http {',
      ...['client_body', 'proxy', 'fastcgi', 'uwsgi', 'scgi'].map((t) => `  ${t}_temp_path ${dir}/${t}_temp;`),
      `  include ${dir}/ferry.conf;`,
      '}',
    ].join('\n');
    await fs.writeFile(path.join(dir, 'nginx.conf'), main);
    let stderr = '';
    nginx = spawn(NGINX, ['-p', dir, '-c', path.join(dir, 'nginx.conf'), '-e', path.join(dir, 'error.log')], { stdio: ['ignore', 'ignore', 'pipe'] });
    nginx.stderr!.setEncoding('utf8').on('data', (d: string) => (stderr += d));
    nginxExited = new Promise((resolve) => nginx!.on('close', () => resolve()));
    await vi.waitFor(
      async () => {
        if (nginx!.exitCode !== null) throw new Error(`nginx exited ${nginx!.exitCode}: ${stderr}`);
        expect((await fetch(`${url}/healthz`)).status).toBe(200);
      },
      { timeout: 30_000, interval: 100 },
    );
  };

  try {
    db = await createTestDatabase();
    objectstore = startFerry(['objectstore', '--listen', `127.0.0.1:${ports.store}`, '--data-dir', path.join(tmp, 'store'),
      '--access-key', store.accessKey, '--secret-key', store.secretKey, '--bucket', store.bucket]);
    await objectstore.waitFor((l) => jsonLine(l)?.msg === 'ferry object store ready', 'the store ready line');
    // The same keys for both, from the environment, as the guide's EnvironmentFile gives them.
    const keys = { FERRY_SIGNING_KEY: randomBytes(32).toString('base64'), FERRY_SEALING_KEY: randomBytes(32).toString('base64') };
    // One first (it migrates and makes the owner), then the other.
    await startInstance(ports.a, keys, true);
    await startInstance(ports.b, keys, false);
    await startNginx();
  } catch (err) {
    await close();
    throw err;
  }

  return {
    url,
    tmp,
    ports: [ports.a, ports.b],
    instances: [instances[0]!, instances[1]!],
    async answered(from = 0) {
      const text = await fs.readFile(path.join(tmp, 'nginx', 'ferry-access.log'), 'utf8').catch(() => '');
      const lines = text.split('\n').filter(Boolean);
      const requests = lines.slice(from).flatMap((l) => {
        const m = /"([A-Z]+) (\S+) [^"]*" (\d+) .* upstream=(\S+(?:, \S+)*) upstream_status=/.exec(l);
        if (!m) return [];
        // After a retry the last address is the one that answered.
        const last = m[4]!.split(', ').pop()!;
        return [{ method: m[1]!, path: m[2]!, status: Number(m[3]), port: Number(last.split(':').pop()) }];
      });
      return { lines: lines.length, requests };
    },
    close,
  };
}
