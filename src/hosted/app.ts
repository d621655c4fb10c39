// Builds the hosted service's Fastify app: JSON parsing, validation, one log
// line per request, `{code, message}` errors, and the route modules.
import websocket from '@fastify/websocket';
import Fastify, { LogController, type FastifyError, type FastifyInstance, type FastifyBaseLogger, type RawServerDefault } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { HostedContext } from './context.js';
import { HttpError } from './errors.js';
import { validatorCompiler } from '../http/validation.js';
import { acceptJsonBodies } from '../http/json.js';
import { routeModules } from './routes/index.js';
import { GATEWAY_MAX_FRAME } from '../api/hosted/storageGateway.js';
import { registerRateLimits } from './ratelimit/plugin.js';
import health from './routes/health.js';
import { registerOpenApi } from '../http/openapi/serve.js';
import { HOSTED_API } from '../api/openapi/hosted.js';

export type HostedApp = FastifyInstance<RawServerDefault, IncomingMessage, ServerResponse, FastifyBaseLogger, TypeBoxTypeProvider>;
export type RouteModule = (app: HostedApp, ctx: HostedContext) => void | Promise<void>;

/** Query values that must never reach a log file. */
const redactUrl = (url: string) => url.replace(/([?&](secret|token|X-Amz-Signature)=)[^&]*/gi, '$1***');

export async function buildApp(ctx: HostedContext): Promise<HostedApp> {
  const app = Fastify({
    loggerInstance: ctx.log as FastifyBaseLogger,
    // Our onResponse hook writes the one line per request instead of Fastify's two.
    logController: new LogController({ disableRequestLogging: true }),
    bodyLimit: 1024 * 1024,
    // Off unless --trust-proxy: then req.ip comes from X-Forwarded-For (rate limits, lockouts).
    trustProxy: ctx.config.trustProxy,
    // At close idle keep-alive sockets go at once; requests in flight finish (server.ts bounds the wait).
    forceCloseConnections: 'idle',
    // Requests that still arrive on an open connection while it drains are served: a load balancer has /readyz to stop sending.
    return503OnClosing: false,
    routerOptions: { ignoreTrailingSlash: true },
  }).withTypeProvider<TypeBoxTypeProvider>();

  app.setValidatorCompiler(validatorCompiler);

  acceptJsonBodies(app, () => new HttpError(400, 'malformed_json', 'request body is not valid JSON'));

  app.addHook('onResponse', async (req, reply) => {
    req.log.info(
      { method: req.method, url: redactUrl(req.url), status: reply.statusCode, ms: Math.round(reply.elapsedTime) },
      'request',
    );
  });

  // While shutting down every answer closes its connection, so that the client's next request opens one to another instance.
  app.addHook('onSend', async (_req, reply) => {
    if (ctx.instance.shuttingDown) reply.header('connection', 'close');
  });

  app.setNotFoundHandler((req, reply) => {
    reply.code(404).send({ code: 'not_found', message: `no route ${req.method} ${req.url.split('?')[0]}` });
  });

  app.setErrorHandler((err: FastifyError | HttpError, req, reply) => {
    if (err instanceof HttpError) {
      reply.code(err.status).headers(err.headers).send({ code: err.code, message: err.message });
      return;
    }
    if (err.validation) {
      const details = err.validation.map((v) => ({
        path: `${err.validationContext ?? ''}${v.instancePath || ''}`,
        message: v.message ?? 'invalid',
      }));
      reply.code(400).send({ code: 'validation_failed', message: `${err.validationContext ?? 'request'}${err.validation[0]?.instancePath ?? ''} ${err.validation[0]?.message ?? 'is invalid'}`, details });
      return;
    }
    const status = err.statusCode ?? 500;
    if (status >= 500) {
      req.log.error({ err }, 'unexpected error');
      reply.code(500).send({ code: 'internal', message: 'internal error' });
      return;
    }
    reply.code(status).send({ code: (err.code ?? 'bad_request').toLowerCase(), message: err.message });
  });

  // A worker serves its health and nothing else.
  if (ctx.instance.role === 'worker') {
    await health(app, ctx);
    return app;
  }
  // Storage gateways connect with a WebSocket (routes/storageGateway.ts); registered first so that every route knows an upgrade.
  await app.register(websocket, { options: { maxPayload: GATEWAY_MAX_FRAME } });
  // Before the routes: it hooks every route added after it.
  await registerRateLimits(app, ctx);
  // Before the route modules, so that its collector sees them all: GET /openapi.json and GET /docs/api (docs/openapi.md), rate limited as public requests.
  registerOpenApi(app, HOSTED_API);
  for (const register of routeModules) await register(app, ctx);
  return app;
}
