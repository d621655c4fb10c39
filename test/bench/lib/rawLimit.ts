// The raw limit of the agent benchmark: a file up and down through the raw
// loopback server (loopback.ts) with the plain client, as many requests in
// flight and as large as the agent's. The server runs in a child process
// (rawServer.ts) so that the client never shares its event loop.
import { fork } from 'node:child_process';
import { open, rm } from 'node:fs/promises';
import http from 'node:http';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { getRange, mbps, pool, putRange, settleDisk } from './loopback.js';
import { cpuOf } from './processes.js';

/** CPU seconds the raw client (this process) and the raw server spent on one direction. */
export interface RawCpu { client: number; server?: number }

export interface RawFigures { uploadMBps: number; downloadMBps: number; uploadCpu: RawCpu; downloadCpu: RawCpu }

const ownCpu = (): number => {
  const u = process.cpuUsage();
  return (u.user + u.system) / 1e6;
};

/** Runs fn, and answers the CPU this process and process `pid` spent meanwhile. */
async function metered(pid: number | undefined, fn: () => Promise<void>): Promise<RawCpu> {
  const [c0, s0] = [ownCpu(), pid === undefined ? undefined : await cpuOf(pid)];
  await fn();
  const [c1, s1] = [ownCpu(), pid === undefined ? undefined : await cpuOf(pid)];
  return { client: c1 - c0, server: s0 === undefined || s1 === undefined ? undefined : s1 - s0 };
}

export async function measureRaw(source: string, size: number, work: string, part: number, concurrency: number): Promise<RawFigures> {
  const proc = fork(fileURLToPath(new URL('./rawServer.ts', import.meta.url)), [], { stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
  try {
    const port = await new Promise<number>((ok, fail) => {
      proc.once('message', (m) => ok((m as { port: number }).port));
      proc.once('exit', (code) => fail(new Error(`raw server exited early (${code})`)));
    });
    const agent = new http.Agent({ keepAlive: true, maxSockets: concurrency });
    const url = `http://127.0.0.1:${port}/raw`;
    const parts = Math.ceil(size / part);
    const range = (i: number): [number, number] => [i * part, Math.min(size, (i + 1) * part) - 1];
    try {
      settleDisk();
      let t = performance.now();
      const uploadCpu = await metered(proc.pid, () => pool(parts, concurrency, async (i) => void (await putRange(agent, url, source, ...range(i)))));
      const uploadMBps = mbps(size, performance.now() - t);
      const dest = join(work, 'raw-download.bin');
      const fh = await open(dest, 'w');
      await fh.truncate(size);
      settleDisk();
      t = performance.now();
      let downloadCpu: RawCpu;
      try {
        downloadCpu = await metered(proc.pid, () => pool(parts, concurrency, (i) => getRange(agent, url, fh, ...range(i))));
      } finally {
        await fh.close();
      }
      const downloadMBps = mbps(size, performance.now() - t);
      await rm(dest, { force: true });
      return { uploadMBps, downloadMBps, uploadCpu, downloadCpu };
    } finally {
      agent.destroy();
    }
  } finally {
    proc.removeAllListeners('exit');
    if (proc.exitCode === null) {
      const exited = new Promise((ok) => proc.once('exit', ok));
      proc.kill('SIGTERM');
      await exited;
    }
  }
}
