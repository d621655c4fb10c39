// What the dataset benchmark reads from the agent while a transfer runs: the
// bytes of its `GET /events` stream (and each message, to see a transfer end
// without polling its whole record), the size and time of list calls, and a
// process's peak RSS from /proc.
import { readFile } from 'node:fs/promises';

export interface EventMeter {
  /** Bytes of the stream received so far. */
  bytes(): number;
  /** Ends the stream. */
  stop(): Promise<void>;
}

/**
 * Follows `GET {agentUrl}/events`, counting its bytes and handing each message's
 * parsed `data` to `onData`, until stopped or until the agent ends it. Resolves once the stream answered 200.
 */
export async function followEvents(agentUrl: string, onData: (data: unknown) => void): Promise<EventMeter> {
  const abort = new AbortController();
  const res = await fetch(`${agentUrl}/events`, { signal: abort.signal, headers: { accept: 'text/event-stream' } });
  if (res.status !== 200 || !res.body) throw new Error(`GET /events: ${res.status}`);
  let bytes = 0;
  const decoder = new TextDecoder();
  let partial = '';
  const reading = (async () => {
    try {
      for await (const chunk of res.body as unknown as AsyncIterable<Uint8Array>) {
        bytes += chunk.length;
        const lines = (partial + decoder.decode(chunk, { stream: true })).split('\n');
        partial = lines.pop()!;
        for (const line of lines) {
          if (!line.startsWith('data:')) continue;
          try {
            onData(JSON.parse(line.slice(5)));
          } catch {
            // A message that is not JSON (a keep-alive comment is not a data line): only its bytes count.
          }
        }
      }
    } catch {
      // Stopped, or the agent went away (a SIGKILL): the bytes so far are what it sent.
    }
  })();
  return {
    bytes: () => bytes,
    async stop() {
      abort.abort();
      await reading;
    },
  };
}

export interface Timed { status: number; bytes: number; ms: number; firstMs: number; body: any }

const KEEP_BODY = 16 << 20;

/** GETs `url`, reading the whole answer: `firstMs` until its status and headers, `ms` until its last byte. A body over 16 MB is counted, not kept (`body` undefined). */
export async function timedGet(url: string): Promise<Timed> {
  const t = performance.now();
  const res = await fetch(url);
  const firstMs = performance.now() - t;
  let bytes = 0;
  let kept: Buffer[] | undefined = [];
  for await (const chunk of res.body ?? []) {
    bytes += chunk.length;
    if (kept && bytes <= KEEP_BODY) kept.push(Buffer.from(chunk));
    else kept = undefined;
  }
  const ms = performance.now() - t;
  let body: unknown;
  if (kept) {
    const text = Buffer.concat(kept).toString();
    try {
      body = JSON.parse(text);
    } catch {
      body = text;
    }
  }
  return { status: res.status, bytes, ms, firstMs, body };
}

/** Peak resident memory of `pid` in bytes (VmHWM); undefined once it is gone or without /proc. */
export async function peakRss(pid: number): Promise<number | undefined> {
  try {
    const m = /^VmHWM:\s+(\d+) kB/m.exec(await readFile(`/proc/${pid}/status`, 'utf8'));
    return m ? Number(m[1]) * 1024 : undefined;
  } catch {
    return undefined;
  }
}

/** The id and state a message carries about an upload or download: the whole record, or a typed change of a summary. */
export function stateIn(data: unknown): { id: string; state: string } | undefined {
  const d = data as Record<string, any> | null;
  if (!d || typeof d !== 'object') return undefined;
  const rec = d.upload ?? d.download ?? d;
  const id = rec?.upload_id ?? rec?.download_id;
  return typeof id === 'string' && typeof rec.state === 'string' ? { id, state: rec.state } : undefined;
}
