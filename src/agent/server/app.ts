// The agent's local REST server under /api/v1: security checks first, then thin
// routes that each call one operation of the services.
import Fastify, { LogController, type FastifyBaseLogger, type FastifyError, type FastifyInstance, type FastifyReply, type RawServerDefault } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { AgentErrorCode } from '../../api/agent/errors.js';
import { validatorCompiler } from '../../http/validation.js';
import { invalidMessage } from '../../http/invalidMessage.js';
import { acceptJsonBodies } from '../../http/json.js';
import { AgentError } from '../errors.js';
import type { AgentContext } from '../context.js';
import type { AgentServices } from '../services/index.js';
import { securityHook } from './security.js';
import { restKey } from '../config.js';
import { agentRoutes } from './routes/index.js';
import { uiTransport } from './ui.js';
import { rendererDir, serveUi } from './staticUi.js';
import { registerOpenApi } from '../../http/openapi/serve.js';
import { AGENT_API } from '../../api/openapi/agent.js';

export type AgentApp = FastifyInstance<RawServerDefault, IncomingMessage, ServerResponse, FastifyBaseLogger, TypeBoxTypeProvider>;
export type AgentRouteModule = (app: AgentApp, services: AgentServices, ctx: AgentContext) => void | Promise<void>;

export const API_PREFIX = '/api/v1';
/**
 * Largest request body. Fastify's 1 MiB would refuse POST /uploads with a few
 * thousand long paths, which the schema allows (up to 10,000 of 4,096 characters).
 */
export const BODY_LIMIT = 64 * 1024 * 1024;

export async function buildAgentApp(ctx: AgentContext, services: AgentServices): Promise<AgentApp> {
  const app = Fastify({
    loggerInstance: ctx.log as FastifyBaseLogger,
    logController: new LogController({ disableRequestLogging: true }),
    forceCloseConnections: true,
    bodyLimit: BODY_LIMIT,
    routerOptions: { ignoreTrailingSlash: true },
    // A path the router cannot take (bad %-encoding, a segment over 100 characters) is bad input too.
    frameworkErrors: (err, _req, res) => {
      const reply = res as FastifyReply;
      if ((err.statusCode ?? 500) >= 500) return reply.code(500).send({ code: AgentErrorCode.internal, message: 'internal error' });
      return reply.code(400).send({ code: AgentErrorCode.badRequest, message: err.message });
    },
  }).withTypeProvider<TypeBoxTypeProvider>();
  app.setValidatorCompiler(validatorCompiler);

  acceptJsonBodies(app, () => new AgentError(400, AgentErrorCode.badRequest, 'request body is not valid JSON'));

  app.addHook('onRequest', securityHook(ctx.config.host, restKey(ctx.config)));
  // What a request changed is on disk before it is answered (one WAL flush for many requests).
  app.addHook('onSend', async (req, _reply, payload) => {
    if (req.method !== 'GET' && req.method !== 'HEAD') await ctx.db.synced();
    return payload;
  });
  app.addHook('onResponse', async (req, reply) => {
    req.log.debug({ method: req.method, url: req.url, status: reply.statusCode, ms: Math.round(reply.elapsedTime) }, 'request');
  });

  app.setNotFoundHandler((req, reply) => {
    reply.code(404).send({ code: AgentErrorCode.notFound, message: `no route ${req.method} ${req.url.split('?')[0]}` });
  });
  app.setErrorHandler((err: FastifyError | AgentError, req, reply) => {
    if (err instanceof AgentError) return reply.code(err.status).send({ code: err.code, message: err.message, ...(err.field ? { field: err.field } : {}) });
    if (err.validation) {
      // In words, with the field at fault (`{code, message, field}`); ajv's errors are those of validation.ts.
      const part = err.validationContext === 'querystring' ? req.query : err.validationContext === 'params' ? req.params : req.body;
      return reply.code(400).send({ code: AgentErrorCode.badRequest, ...invalidMessage(err.validation as Parameters<typeof invalidMessage>[0], part) });
    }
    const status = err.statusCode ?? 500;
    if (status >= 500) {
      req.log.error({ err }, 'unexpected error');
      return reply.code(500).send({ code: AgentErrorCode.internal, message: 'internal error' });
    }
    return reply.code(status).send({ code: AgentErrorCode.badRequest, message: err.message });
  });

  // Before every route: its collector sees them all (GET /openapi.json, GET /docs/api; docs/openapi.md).
  registerOpenApi(app, AGENT_API);
  await app.register(
    async (api) => {
      for (const register of agentRoutes) await register(api as AgentApp, services, ctx);
    },
    { prefix: API_PREFIX },
  );
  await uiTransport(app, services, ctx);
  if (ctx.config.ui) {
    const dir = rendererDir();
    if (!dir) throw new Error("--ui: the app's files are not built (npm run build makes dist/renderer)");
    serveUi(app, dir);
  }
  return app;
}
