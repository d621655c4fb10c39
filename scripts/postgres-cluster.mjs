// A throwaway PostgreSQL cluster for the tests: initdb into a temporary
// directory, trust authentication, loopback TCP on a free port, durability off
// (fsync) for speed. PostgreSQL refuses to run as root: as root, the server runs
// as the `postgres` user that Debian's package creates. Used by scripts/test.mjs
// (is one possible here?) and test/helpers/postgresGlobal.ts (start, stop).
import { execFileSync, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';

/** The directory holding initdb and pg_ctl: on PATH, else Debian's newest /usr/lib/postgresql/N/bin. */
export function postgresBin() {
  for (const dir of (process.env.PATH ?? '').split(path.delimiter)) {
    if (dir && fs.existsSync(path.join(dir, 'initdb')) && fs.existsSync(path.join(dir, 'pg_ctl'))) return dir;
  }
  const base = '/usr/lib/postgresql';
  const versions = fs.existsSync(base) ? fs.readdirSync(base).filter((v) => /^\d+$/.test(v)).sort((a, b) => Number(b) - Number(a)) : [];
  for (const v of versions) if (fs.existsSync(path.join(base, v, 'bin', 'initdb'))) return path.join(base, v, 'bin');
  return undefined;
}

const isRoot = () => typeof process.getuid === 'function' && process.getuid() === 0;

/** Why no cluster can be started here, or undefined when one can. */
export function postgresUnavailable() {
  if (!postgresBin()) return 'no PostgreSQL server installed (initdb not found; Debian: apt-get install postgresql)';
  if (isRoot()) {
    if (spawnSync('id', ['-u', 'postgres']).status !== 0) return 'running as root and there is no postgres user to run the server as';
    if (spawnSync('runuser', ['--help']).error) return 'running as root without runuser to start the server as postgres';
  }
  return undefined;
}

/** Runs a PostgreSQL program, as the postgres user when we are root. */
function run(bin, args) {
  const cmd = path.join(postgresBin(), bin);
  if (isRoot()) execFileSync('runuser', ['-u', 'postgres', '--', cmd, ...args], { stdio: 'pipe' });
  else execFileSync(cmd, args, { stdio: 'pipe' });
}

/** A port free now on 127.0.0.1. */
export function freePort() {
  return new Promise((resolve, reject) => {
    const srv = net.createServer();
    srv.once('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const { port } = srv.address();
      srv.close(() => resolve(port));
    });
  });
}

/**
 * Starts a cluster; returns the URL of its `postgres` database (superuser `ferry`,
 * no password) and stop(), which ends the server and removes its files.
 */
export async function startCluster() {
  const why = postgresUnavailable();
  if (why) throw new Error(`cannot start PostgreSQL: ${why}`);
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'ferry-pg-'));
  const data = path.join(dir, 'data');
  if (isRoot()) execFileSync('chown', ['postgres:', dir]);
  run('initdb', ['-D', data, '-A', 'trust', '-U', 'ferry', '-E', 'UTF8', '--no-locale', '--no-sync']);
  const port = await freePort();
  fs.appendFileSync(
    path.join(data, 'postgresql.conf'),
    [
      `port = ${port}`,
      `listen_addresses = '127.0.0.1'`,
      `unix_socket_directories = ''`,
      'fsync = off',
      'synchronous_commit = off',
      'full_page_writes = off',
      'max_connections = 400',
      '',
    ].join('\n'),
  );
  run('pg_ctl', ['-D', data, '-l', path.join(dir, 'server.log'), '-w', '-t', '60', 'start']);
  const stop = () => {
    try {
      run('pg_ctl', ['-D', data, '-m', 'immediate', '-w', 'stop']);
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  };
  return { url: `postgres://ferry@127.0.0.1:${port}/postgres`, stop };
}
