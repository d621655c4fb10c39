// Reading one of the service's Server-Sent Events streams (Team or Package
// events, docs/hosted-api-notes/events.md) until it ends: each message is
// handed over as it arrives. A refusal throws HostedApiError as every other
// call does; a stream silent for longer than `stallMs` (the service sends a
// comment line every 15 s) is given up, so the caller reconnects. Lines end
// with \n, as the service writes them.
import { HostedApiError, type Credentials } from './http.js';
import type { StreamEvent } from '../api/hosted/events.js';

export type { StreamEvent };

export interface StreamMessage {
  id?: string;
  event: string;
  data: string;
}

export interface FollowOptions {
  auth: Credentials;
  /** Resume after this id (sent as Last-Event-ID). */
  lastEventId?: string;
  signal: AbortSignal;
  stallMs?: number;
  /** The service answered with a stream. */
  onOpen?: () => void;
}

const DEFAULT_STALL_MS = 45_000;

/** GET /v1/teams/{team_id}/events, with only `types` when given. */
export const teamEventsPath = (teamId: string, types?: StreamEvent['type'][]) =>
  `/v1/teams/${encodeURIComponent(teamId)}/events${types ? `?types=${encodeURIComponent(types.join(','))}` : ''}`;

/** Resolves when the service ends the stream (or it stalled); rejects on a refusal or a failed connection. */
export async function readEventStream(baseUrl: string, path: string, opts: FollowOptions, onMessage: (m: StreamMessage) => void): Promise<void> {
  const stall = new AbortController();
  const signal = AbortSignal.any([opts.signal, stall.signal]);
  const headers: Record<string, string> = { accept: 'text/event-stream' };
  if (opts.auth.apiKey) headers['x-api-key'] = opts.auth.apiKey;
  if (opts.auth.userToken) headers['x-user-token'] = opts.auth.userToken;
  if (opts.auth.packageToken) headers['x-package-token'] = opts.auth.packageToken;
  if (opts.lastEventId) headers['last-event-id'] = opts.lastEventId;
  const res = await fetch(baseUrl.replace(/\/+$/, '') + path, { headers, signal });
  if (res.status !== 200 || !(res.headers.get('content-type') ?? '').startsWith('text/event-stream')) {
    const text = await res.text().catch(() => '');
    let body: { code?: unknown; message?: unknown } = {};
    try {
      body = JSON.parse(text) as typeof body;
    } catch {
      // not JSON
    }
    throw HostedApiError.of(res.status === 200 ? 502 : res.status, body, res.headers.get('retry-after') ?? undefined);
  }
  opts.onOpen?.();
  let timer: NodeJS.Timeout | undefined;
  const alive = () => {
    clearTimeout(timer);
    timer = setTimeout(() => stall.abort(), opts.stallMs ?? DEFAULT_STALL_MS);
    timer.unref();
  };
  alive();
  const decoder = new TextDecoder();
  let buf = '';
  try {
    for await (const chunk of res.body as unknown as AsyncIterable<Uint8Array>) {
      alive();
      buf += decoder.decode(chunk, { stream: true });
      let at: number;
      while ((at = buf.indexOf('\n\n')) >= 0) {
        const block = buf.slice(0, at);
        buf = buf.slice(at + 2);
        const m = parseBlock(block);
        if (m) onMessage(m);
      }
    }
  } catch (err) {
    // A stall ends the stream like the service would; the caller's own abort is theirs to see.
    if (!stall.signal.aborted || opts.signal.aborted) throw err;
  } finally {
    clearTimeout(timer);
  }
}

function parseBlock(block: string): StreamMessage | undefined {
  let id: string | undefined;
  let event = 'message';
  const data: string[] = [];
  for (const line of block.split('\n')) {
    if (line === '' || line.startsWith(':')) continue;
    const colon = line.indexOf(':');
    const field = colon < 0 ? line : line.slice(0, colon);
    const value = colon < 0 ? '' : line.slice(colon + 1).replace(/^ /, '');
    if (field === 'id') id = value;
    else if (field === 'event') event = value;
    else if (field === 'data') data.push(value);
  }
  if (data.length === 0) return undefined;
  return { ...(id !== undefined ? { id } : {}), event, data: data.join('\n') };
}
