// What GET /diagnostics measures, each within PROBE_TIMEOUT_MS: whether the
// service and the stores answer a real request (and how long it took), and the
// free space of every folder the agent writes to.
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { Agent, request } from 'undici';
import type { AgentDb } from '../store/db.js';
import type { DiskSpace, Reach } from '../../api/agent/diagnostics.js';
import { withoutCredentials } from './secrets.js';

/** How long each probe may take; one that takes longer is reported `timed_out`. */
export const PROBE_TIMEOUT_MS = 3000;
/** Destinations measured at most (the Downloads folder, then active and recent ones). */
const MAX_DISKS = 30;

class TimedOut extends Error {}

/** `p`, or a TimedOut rejection after `ms` (the work itself may go on: a hung file system is not ours to stop). */
function within<T>(p: Promise<T>, ms: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new TimedOut(`no answer within ${ms} ms`)), ms);
  });
  return Promise.race([p, timeout]).finally(() => clearTimeout(timer));
}

/**
 * One request to `url` over a connection of its own (a pooled one would hide a
 * broken path): any HTTP answer proves the TCP and HTTP path; the latency is the
 * time to its headers.
 */
export async function probeUrl(url: string, method: 'GET' | 'HEAD', shownUrl: string, timeoutMs = PROBE_TIMEOUT_MS): Promise<Reach> {
  const dispatcher = new Agent({ connect: { timeout: timeoutMs }, headersTimeout: timeoutMs, bodyTimeout: timeoutMs, pipelining: 0 });
  const ac = new AbortController();
  const started = performance.now();
  try {
    const res = await within(request(url, { method, signal: ac.signal, dispatcher }), timeoutMs);
    const latency = Math.round((performance.now() - started) * 10) / 10;
    await res.body.dump().catch(() => {});
    return { url: withoutCredentials(shownUrl), reachable: true, status: res.statusCode, latency_ms: latency, timed_out: false, error: null };
  } catch (err) {
    const e = err as Error & { code?: string; cause?: { code?: string; message?: string } };
    const timedOut = err instanceof TimedOut || /timeout/i.test(e.code ?? '') || /timeout/i.test(e.name);
    const why = timedOut ? `no answer within ${timeoutMs} ms` : [e.cause?.code ?? e.code, e.cause?.message ?? e.message].filter(Boolean).join(': ');
    return { url: withoutCredentials(shownUrl), reachable: false, status: null, latency_ms: null, timed_out: timedOut, error: why || 'unreachable' };
  } finally {
    ac.abort();
    void dispatcher.destroy().catch(() => {});
  }
}

/** The service: the request its outage probe makes too. */
export const probeService = (hostedUrl: string, timeoutMs?: number) =>
  probeUrl(`${hostedUrl.replace(/\/+$/, '')}/v1/system/packages/spec`, 'GET', hostedUrl, timeoutMs);

/** A store, by its origin: a HEAD of its root (any answer, an S3 refusal included, proves the path). */
export const probeStore = (origin: string, timeoutMs?: number) => probeUrl(`${origin}/`, 'HEAD', origin, timeoutMs);

/** The user's Downloads folder, where a bundle goes by default and the app suggests downloads. */
export const downloadsFolder = (): string => path.join(os.homedir(), 'Downloads');

type Use = DiskSpace['uses'][number];

/** Every folder the agent writes to, with why: the Downloads folder, active and recent downloads, Portal download automations, writing gateways. */
export function destinations(db: AgentDb): Map<string, Use[]> {
  const out = new Map<string, Use[]>();
  const add = (p: unknown, use: Use) => {
    if (typeof p !== 'string' || !path.isAbsolute(p)) return;
    const uses = out.get(p) ?? [];
    if (!uses.includes(use)) uses.push(use);
    out.set(p, uses);
  };
  const rows = (sql: string): Record<string, unknown>[] => {
    try {
      return db.prepare(sql).all() as Record<string, unknown>[];
    } catch {
      return [];
    }
  };
  add(downloadsFolder(), 'downloads_folder');
  for (const r of rows(`SELECT dst_folder, MAX(state IN ('transferring','paused')) AS active, MAX(created_at) AS at FROM downloads GROUP BY dst_folder ORDER BY active DESC, at DESC LIMIT ${MAX_DISKS}`)) add(r.dst_folder, 'download');
  for (const r of rows(`SELECT fields FROM automations WHERE type IN ('portal_download','all_portals_download') ORDER BY created_at DESC LIMIT ${MAX_DISKS}`)) {
    try {
      add((JSON.parse(String(r.fields)) as { dst_folder?: unknown }).dst_folder, 'automation');
    } catch {
      /* fields that are not JSON: nothing to measure */
    }
  }
  for (const r of rows(`SELECT root_path FROM storage_gateways WHERE permissions = 'w' LIMIT ${MAX_DISKS}`)) add(r.root_path, 'gateway');
  return new Map([...out].slice(0, MAX_DISKS));
}

/** The free and total space of the file system holding `p` (or its nearest existing parent, for a folder not made yet). */
export async function diskSpace(p: string, uses: Use[], timeoutMs = PROBE_TIMEOUT_MS): Promise<DiskSpace> {
  const base = { path: p, uses };
  try {
    return await within(
      (async () => {
        let at = p;
        for (;;) {
          try {
            const s = await fs.statfs(at);
            return { ...base, measured: at, free_bytes: s.bavail * s.bsize, total_bytes: s.blocks * s.bsize, timed_out: false, error: null };
          } catch (err) {
            const up = path.dirname(at);
            if ((err as NodeJS.ErrnoException).code !== 'ENOENT' || up === at) throw err;
            at = up;
          }
        }
      })(),
      timeoutMs,
    );
  } catch (err) {
    const e = err as NodeJS.ErrnoException;
    return { ...base, measured: null, free_bytes: null, total_bytes: null, timed_out: err instanceof TimedOut, error: e.code ? `${e.code}: ${e.message}` : e.message };
  }
}
