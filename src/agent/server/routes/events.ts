// GET /events: the change feed as Server-Sent Events (`id`, `event`, `data`).
// A client that reconnects with Last-Event-ID (or ?since=) gets what it missed,
// as far as the agent still holds it. Streams end when the agent closes.
import type { ServerResponse } from 'node:http';
import type { AgentRouteModule } from '../app.js';
import { EventsQuery } from '../../../api/agent/events.js';
import type { AgentEvent } from '../../events.js';

const PING_MS = 15_000;
/** A client this far behind is dropped rather than buffered without end; it reconnects with Last-Event-ID. */
const MAX_BUFFERED = 8 * 1024 * 1024;

const header = (v: string | string[] | undefined) => (typeof v === 'string' ? v : undefined);
const frame = (e: AgentEvent) => `id: ${e.id}\nevent: ${e.type}\ndata: ${JSON.stringify(e.data)}\n\n`;

const routes: AgentRouteModule = (app, services) => {
  const open = new Set<ServerResponse>();
  // End the streams before the server waits for its connections to finish.
  app.addHook('preClose', async () => {
    for (const res of open) res.end();
    open.clear();
  });

  app.get('/events', { schema: { querystring: EventsQuery } }, async (req, reply) => {
    const start = services.events.follow({ types: req.query.types, lastEventId: header(req.headers['last-event-id']), since: req.query.since, files: req.query.files });
    reply.hijack();
    const res = reply.raw;
    res.writeHead(200, {
      'content-type': 'text/event-stream; charset=utf-8',
      'cache-control': 'no-cache, no-transform',
      connection: 'keep-alive',
      'x-accel-buffering': 'no',
    });
    res.write('retry: 2000\n\n');
    open.add(res);

    let unsubscribe = () => {};
    const ping = setInterval(() => res.write(': ping\n\n'), PING_MS);
    ping.unref();
    const end = () => {
      clearInterval(ping);
      unsubscribe();
      open.delete(res);
      if (!res.writableEnded) res.end();
    };
    // The response's close: the client left, or the connection was cut.
    res.on('close', end);
    unsubscribe = start((e) => {
      if (res.writableEnded) return;
      res.write(frame(e));
      if (res.writableLength > MAX_BUFFERED) {
        req.log.warn('an /events client is too slow; its stream is ended');
        end();
      }
    });
    if (res.writableEnded) unsubscribe();
  });
};
export default routes;
