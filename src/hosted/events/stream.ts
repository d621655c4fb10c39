// One Server-Sent Events stream: the replay after Last-Event-ID (or `reset`
// when it cannot be complete), then the events as they are raised, read from
// the table in id order, with a comment line every --events-heartbeat-ms so that proxies
// and clients know the connection is alive. Ended when the client goes, the
// service stops, or (looked at every heartbeat) the credential it opened with no
// longer stands.
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { HostedContext } from '../context.js';
import { HttpError, badRequest } from '../errors.js';
import { RESET_EVENT, STREAM_EVENT_TYPES, type ResetEvent, type StreamEvent, type StreamEventType } from '../../api/hosted/events.js';
import { eventBounds, eventsAfter, type EventScope } from '../services/events.js';

/** What an EventSource waits before it reconnects. */
const RETRY_MS = 3_000;
const BATCH = 500;

/** Last-Event-ID (the header EventSource sends on a reconnect) or the `last_event_id` query; undefined for none. */
export function lastEventId(req: FastifyRequest, query: string | undefined): number | undefined {
  const raw = req.headers['last-event-id'] ?? query;
  if (raw === undefined || raw === '') return undefined;
  const v = Array.isArray(raw) ? raw[0]! : raw;
  if (!/^\d{1,15}$/.test(v.trim())) throw badRequest('Last-Event-ID must be an event id (a number)', 'invalid_last_event_id');
  return Number(v.trim());
}

/** The `types` query: known types only (400 otherwise); undefined for all. */
export function typesOf(raw: string | undefined): StreamEventType[] | undefined {
  if (raw === undefined || raw.trim() === '') return undefined;
  const types = [...new Set(raw.split(',').map((t) => t.trim()).filter(Boolean))];
  const unknown = types.filter((t) => !(STREAM_EVENT_TYPES as readonly string[]).includes(t));
  if (unknown.length > 0) throw badRequest(`unknown event type ${unknown.join(', ')}; known: ${STREAM_EVENT_TYPES.join(', ')}`, 'invalid_event_type');
  return types as StreamEventType[];
}

/** Where the stream starts: after `last`, or after the newest event (with `reset` when `last` cannot be replayed). */
async function startingPoint(ctx: HostedContext, last: number | undefined): Promise<{ cursor: number; reset: boolean }> {
  const { oldest, newest } = await eventBounds(ctx);
  const now = newest ?? 0;
  if (last === undefined) return { cursor: now, reset: false };
  // Ids past the newest were never given by this database; ids below the oldest kept were swept.
  if (last > now || (oldest !== null && last < oldest - 1)) return { cursor: now, reset: true };
  return { cursor: last, reset: false };
}

/** Streams open in this process, per holder (services are many in a test process: one table each). */
const openStreams = new WeakMap<HostedContext, Map<string, number>>();

/**
 * Counts a stream against its holder (a token, an API key, a user): at most
 * --events-max-streams at once in this process, else 429. Answers the release.
 */
function claimStream(ctx: HostedContext, holder: string): () => void {
  let open = openStreams.get(ctx);
  if (!open) openStreams.set(ctx, (open = new Map()));
  const n = open.get(holder) ?? 0;
  const max = ctx.config.eventsMaxStreams;
  if (n >= max) {
    throw new HttpError(429, 'too_many_streams', `at most ${max} event streams may be open at once with one credential; close one first`, { 'retry-after': String(RETRY_MS / 1000) });
  }
  open.set(holder, n + 1);
  let released = false;
  return () => {
    if (released) return;
    released = true;
    const left = (open.get(holder) ?? 1) - 1;
    if (left > 0) open.set(holder, left);
    else open.delete(holder);
  };
}

const message = (e: StreamEvent) => `id: ${e.id}\nevent: ${e.type}\ndata: ${JSON.stringify(e)}\n\n`;

/** Whose stream it is, and whether its credential still stands. */
export interface StreamHolder {
  /** For the cap of streams per credential (claimStream). */
  key: string;
  /** Looked at every heartbeat: false (a user token's session ended) ends the stream. */
  recheck?: () => Promise<boolean>;
}

export async function serveEventStream(ctx: HostedContext, req: FastifyRequest, reply: FastifyReply, scope: EventScope, last: number | undefined, holder: StreamHolder): Promise<void> {
  const opened = performance.now();
  const start = await startingPoint(ctx, last);
  // A HEAD (Fastify answers one for every GET) holds nothing open.
  const release = req.method === 'HEAD' ? () => {} : claimStream(ctx, holder.key);
  let cursor = start.cursor;
  const res = reply.raw;
  reply.hijack();
  res.writeHead(200, {
    'content-type': 'text/event-stream; charset=utf-8',
    'cache-control': 'no-cache, no-transform',
    connection: 'keep-alive',
    // nginx and the like would hold the stream back in their buffers.
    'x-accel-buffering': 'no',
  });
  // A HEAD (Fastify answers one for every GET) learns the headers and no more.
  if (req.method === 'HEAD') return void res.end();
  res.write(`retry: ${RETRY_MS}\n\n`);
  if (start.reset) {
    const data: ResetEvent = { reason: 'replay_unavailable', last_event_id: cursor };
    res.write(`id: ${cursor}\nevent: ${RESET_EVENT}\ndata: ${JSON.stringify(data)}\n\n`);
  }
  res.socket?.setNoDelay(true);

  let closed = false;
  let pumping: Promise<void> | undefined;
  let again = false;
  const drained = () => new Promise<void>((ok) => {
    const done = () => {
      res.off('drain', done);
      res.off('close', done);
      ok();
    };
    res.once('drain', done);
    res.once('close', done);
  });
  /** Writes every event after the cursor; one pass at a time, another if asked meanwhile. */
  const pump = (): void => {
    if (closed) return;
    if (pumping) {
      again = true;
      return;
    }
    pumping = (async () => {
      do {
        again = false;
        for (;;) {
          const batch = await eventsAfter(ctx, scope, cursor, BATCH);
          if (closed || batch.length === 0) break;
          let ok = true;
          for (const e of batch) ok = res.write(message(e));
          cursor = batch.at(-1)!.id;
          if (!ok) await drained();
          if (batch.length < BATCH) break;
        }
      } while (again && !closed);
    })()
      .catch((err) => {
        if (!closed) ctx.log.warn({ err }, 'event stream failed');
        end();
      })
      .finally(() => {
        pumping = undefined;
      });
  };

  let rechecking = false;
  const heartbeat = setInterval(() => {
    res.write(': ping\n\n');
    // A notice missed (another process wrote the event) is found here.
    pump();
    if (holder.recheck && !rechecking) {
      rechecking = true;
      void holder.recheck()
        .then((ok) => ok || end(), () => end())
        .finally(() => (rechecking = false));
    }
  }, ctx.config.eventsHeartbeatMs);
  heartbeat.unref();

  let unsubscribe: (() => void) | undefined;
  res.on('close', end);
  unsubscribe = ctx.events.subscribe({
    event: (id) => {
      if (id > cursor) pump();
    },
    close: () => end(),
  });
  function end() {
    if (closed) return;
    closed = true;
    // A hijacked reply gets no request line from the app's onResponse hook: this is it.
    req.log.info({ url: req.url.split('?')[0], status: 200, ms: Math.round(performance.now() - opened), sent: cursor }, 'event stream closed');
    clearInterval(heartbeat);
    unsubscribe?.();
    release();
    if (!res.writableEnded) res.end();
  }
  req.log.info({ url: req.url.split('?')[0], from: cursor, reset: start.reset }, 'event stream opened');
  // The replay, and whatever was raised while the stream was being set up.
  pump();
}
