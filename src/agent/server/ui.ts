// The app's browser transport (browser mode; docs/architecture.md, principle 2): the same handler
// table the desktop app uses, over HTTP for requests and a WebSocket for events.
//   POST /ui/ipc/:channel  body = the request; answers 200 {ok, value | error}
//   GET  /ui/events?since=N  (WebSocket) {event, payload} messages:
//        `transfers.changed` batches (after the snapshot cursor N), `session.changed`
//        `automations.changed` and `gateways.changed`
//   POST /ui/unlock {api_key}  sets the cookie that stands for the agent's API key
//   (and `settings.update` with a new local_api_key sets the one for that key)
// Requests must carry `X-Ferry-UI: 1`: a header a foreign page cannot send
// without a CORS preflight, which the agent never grants; the Host and Origin
// checks (and the API key) of every agent request apply here too.
import websocket from '@fastify/websocket';
import { Type } from 'typebox';
import { AgentErrorCode } from '../../api/agent/errors.js';
import { createHandlers, dispatch } from '../ui/handlers.js';
import { followForWindow, type WindowSend } from '../ui/windowEvents.js';
import type { AgentContext } from '../context.js';
import type { AgentServices } from '../services/index.js';
import type { AgentApp } from './app.js';
import { sameSecret, UI_COOKIE, uiCookieValue } from './security.js';
import { restKey } from '../config.js';

export const UI_HEADER = 'x-ferry-ui';
const uiCookie = (key: string) => `${UI_COOKIE}=${uiCookieValue(key)}; Path=/; HttpOnly; SameSite=Strict`;
/** A window this far behind is dropped rather than buffered without end; it reconnects and takes a snapshot. */
const MAX_BUFFERED = 8 * 1024 * 1024;

export async function uiTransport(app: AgentApp, services: AgentServices, ctx: AgentContext): Promise<void> {
  const handlers = createHandlers(services, ctx);
  await app.register(websocket, { options: { maxPayload: 64 * 1024 } });

  // A browser proves the agent's API key once and gets a cookie (security.ts); without a key there is nothing to unlock.
  app.post('/ui/unlock', { schema: { body: Type.Object({ api_key: Type.String({ maxLength: 1024 }) }) } }, async (req, reply) => {
    if (req.headers[UI_HEADER] !== '1') {
      return reply.code(403).send({ code: AgentErrorCode.forbidden, message: `${UI_HEADER}: 1 is required` });
    }
    const key = restKey(ctx.config);
    if (key && !sameSecret(req.body.api_key, key)) return { ok: false, error: { code: AgentErrorCode.apiKey, message: 'That is not the API key of this agent.' } };
    if (key) reply.header('set-cookie', uiCookie(key));
    return { ok: true, value: { done: true } };
  });

  app.post('/ui/ipc/:channel', { schema: { params: Type.Object({ channel: Type.String({ maxLength: 100 }) }) } }, async (req, reply) => {
    if (req.headers[UI_HEADER] !== '1') {
      return reply.code(403).send({ code: AgentErrorCode.forbidden, message: `${UI_HEADER}: 1 is required` });
    }
    const answer = await dispatch(handlers, req.params.channel, req.body, ctx.log);
    // The page that sets a new local API key stays signed in: its cookie is made for the key the agent starts again with.
    if (req.params.channel === 'settings.update' && answer.ok) {
      const set = (req.body as { local_api_key?: string | null }).local_api_key;
      const next = set === undefined ? undefined : (set ?? ctx.config.apiKey);
      if (next) reply.header('set-cookie', uiCookie(next));
    }
    return answer;
  });

  app.get('/ui/events', { websocket: true, schema: { querystring: Type.Object({ since: Type.Optional(Type.Integer({ minimum: 0 })) }) } }, (socket, req) => {
    const send: WindowSend = (event, payload) => {
      if (socket.readyState !== socket.OPEN) return;
      if (socket.bufferedAmount > MAX_BUFFERED) {
        req.log.warn('a window is too slow for its events; it is dropped and reconnects');
        return socket.terminate();
      }
      socket.send(JSON.stringify({ event, payload }));
    };
    const since = (req.query as { since?: number }).since;
    const unsubscribe = followForWindow(ctx.events, send, { ...(since !== undefined ? { since } : {}) });
    socket.on('close', unsubscribe);
    // A message from the window means nothing here: requests go over HTTP.
    socket.on('message', () => {});
  });
}
