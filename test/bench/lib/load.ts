// Load on the hosted service with autocannon, spread over one or more instances
// (one autocannon per instance, the connections split between them, as a
// round-robin proxy would), with the figures the hosted benchmark prints:
// requests per second, p50 and p99 latency over every response of every
// instance, and the CPU the instances' processes spent per request (/proc).
import autocannon, { type Request } from 'autocannon';
import type { Program } from './processes.js';

export interface Target {
  /** GET this path... */
  path?: string;
  /** ...or run these requests in turn on each connection (a flow whose later requests use earlier answers). */
  requests?: Request[];
  headers: Record<string, string>;
}

export interface LoadFigures {
  requests: number;
  rps: number;
  p50: number;
  p99: number;
  /** CPU milliseconds (user + system, all instance processes) per completed request; undefined without /proc. */
  cpuMsPerRequest?: number;
  /** Answers that were not 2xx, plus connection errors: nonzero means the figures measure a failure. */
  failures: number;
  /** The first failing status seen, to say what went wrong. */
  firstFailure?: string;
}

function percentile(sorted: Float64Array, p: number): number {
  if (sorted.length === 0) return NaN;
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!;
}

/** One run of `seconds` against every instance at once, `connections` in all. */
export async function load(instances: Program[], target: Target, connections: number, seconds: number): Promise<LoadFigures> {
  const times: number[] = [];
  let failures = 0;
  let firstFailure: string | undefined;
  // A flow's failing answer is kept with its body (autocannon's response event has none), to say what went wrong.
  const requests = target.requests?.map((r) => ({
    ...r,
    onResponse: (status: number, body: string, ctx: Record<string, any>, headers: Record<string, string>) => {
      if (status < 200 || status > 299) firstFailure ??= `HTTP ${status} ${body.slice(0, 200)}`;
      r.onResponse?.(status, body, ctx, headers);
    },
  }));
  const cpu0 = await Promise.all(instances.map((i) => i.cpu()));
  const runs = instances.map((inst, k) => {
    const share = Math.max(1, Math.floor(connections / instances.length) + (k < connections % instances.length ? 1 : 0));
    const origin = new URL(inst.url).origin;
    const run = autocannon({
      url: origin,
      connections: share,
      duration: seconds,
      headers: target.headers,
      requests: requests ?? [{ method: 'GET', path: target.path! }],
    });
    run.on('response', (_client: unknown, status: number, _bytes: number, ms: number) => {
      times.push(ms);
      if (status < 200 || status > 299) {
        failures++;
        firstFailure ??= `HTTP ${status}`;
      }
    });
    run.on('reqError', (err: Error) => {
      failures++;
      firstFailure ??= err.message;
    });
    return run;
  });
  const results = await Promise.all(runs);
  const cpu1 = await Promise.all(instances.map((i) => i.cpu()));
  const duration = Math.max(...results.map((r) => r.duration));
  const sorted = Float64Array.from(times).sort();
  const known = cpu0.every((c) => c !== undefined) && cpu1.every((c) => c !== undefined);
  const cpuSeconds = known ? cpu1.reduce((s, c, i) => s + (c! - cpu0[i]!), 0) : undefined;
  return {
    requests: times.length,
    rps: times.length / duration,
    p50: percentile(sorted, 50),
    p99: percentile(sorted, 99),
    cpuMsPerRequest: cpuSeconds === undefined || times.length === 0 ? undefined : (cpuSeconds * 1000) / times.length,
    failures,
    firstFailure,
  };
}
