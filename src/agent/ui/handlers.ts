// The handler table: one function per channel of the contract, over the agent's
// services. Both hosts use it (docs/architecture.md, principle 2): the agent's browser transport
// (HTTP + WebSocket, agent/server/ui.ts) and, in the desktop app, the
// agent's utility process answering the window through main. A request is
// checked against its channel's schema first; every error comes back as data.
import type { Logger } from 'pino';
import { AgentErrorCode } from '../../api/agent/errors.js';
import { bodyValidator } from '../../http/validation.js';
import { invalidMessage } from '../../http/invalidMessage.js';
import { AgentError } from '../errors.js';
import type { AgentContext } from '../context.js';
import type { AgentServices } from '../services/index.js';
import { channels, type Answer, type Channel, type RequestOf, type ResponseOf } from '../../ipc/contract.js';

/** A record as the window takes it: its summary (the record has every field of it, and the files). */

export type Handlers = { [C in Channel]: (req: RequestOf<C>) => Promise<ResponseOf<C>> };

export function createHandlers(services: AgentServices, ctx: Pick<AgentContext, 'events'>): Handlers {
  const { session, uploads, downloads, system, folders, settings, automations, gateways, diagnostics, disks } = services;
  return {
    'session.current': async () => {
      try {
        return await session.current();
      } catch (err) {
        if (err instanceof AgentError && err.code === AgentErrorCode.sessionNil) return null;
        throw err;
      }
    },
    'session.login': (r) => session.login(r.email, r.password),
    'session.loginWithApiKey': (r) => session.loginWithApiKey(r.api_key),
    'session.logout': async () => {
      session.logout();
      return { done: true as const };
    },
    'session.thisComputer': () => settings.useThisComputer(),
    'teams.list': () => session.teams(),

    'transfers.snapshot': async () => {
      // The cursor first: an event published while the lists are built is applied again on top, which changes nothing.
      const cursor = ctx.events.lastId;
      return { cursor, uploads: uploads.summaries(), downloads: downloads.summaries() };
    },

    'uploads.create': (r) => uploads.create(r),
    'uploads.createPortal': (r) => uploads.createPortal(r),
    'uploads.pause': (r) => uploads.pause(r.upload_id),
    'uploads.resume': async (r) => uploads.resume(r.upload_id),
    'uploads.remove': (r) => uploads.remove(r.upload_id),
    'uploads.cancel': (r) => uploads.cancel(r.upload_id),
    'uploads.pauseAll': () => uploads.pauseMany(),
    'uploads.resumeAll': async () => uploads.resumeMany(),
    'uploads.files': async (r) => uploads.files(r.upload_id, r.after, r.limit),
    'uploads.link': ({ upload_id, ...body }) => uploads.link(upload_id, body),
    'uploads.transferLink': (r) => uploads.transferLink(r.upload_id),
    'uploads.links': (r) => uploads.links(r.upload_id),
    'uploads.revokeLink': (r) => uploads.revokeLink(r.upload_id, r.link_id),

    'downloads.preview': (r) => downloads.preview(r.url, r.password),
    'downloads.previewFiles': (r) => downloads.previewFiles(r.url, r.password, r.after),
    'downloads.create': (r) => downloads.create(r),
    'downloads.pause': (r) => downloads.pause(r.download_id),
    'downloads.resume': async (r) => downloads.resume(r.download_id),
    'downloads.remove': (r) => downloads.remove(r.download_id, r.remove_files ?? false),
    'downloads.cancel': (r) => downloads.cancel(r.download_id),
    'downloads.pauseAll': () => downloads.pauseMany(),
    'downloads.resumeAll': async () => downloads.resumeMany(),
    'downloads.files': async (r) => downloads.files(r.download_id, r.after, r.limit),

    'automations.list': async () => automations.list(),
    'automations.create': (r) => automations.create(r.type, r.fields),
    'automations.update': (r) => automations.update(r.type, r.automation_id, r.fields),
    'automations.setEnabled': (r) => automations.setEnabled(r.automation_id, r.enabled),
    'automations.remove': (r) => automations.remove(r.automation_id),
    'automations.packages': async (r) => automations.packages(r.automation_id),

    'gateways.list': async () => gateways.list(),
    'gateways.register': (r) => gateways.register(r),
    'gateways.update': (r) => gateways.update(r),
    'gateways.unregister': (r) => gateways.unregister(r.id),
    'gateways.createConnection': (r) => gateways.newConnection(r),

    'system.about': async () => system.about(),
    'settings.get': async () => settings.get(),
    'settings.update': (r) => settings.update(r),
    'diagnostics.get': () => diagnostics.get(),
    'diagnostics.bundle': (r) => diagnostics.bundle(r),
    'disks.list': async () => disks.list(),
    'disks.status': async () => disks.status(),
    'disks.update': async (r) => disks.update(r.disk_id, r.change),
    'fs.list': (r) => folders.list(r.path),
    'fs.measure': (r) => folders.measure(r.paths),
  };
}

const validators = new Map(Object.entries(channels).map(([name, c]) => [name, bodyValidator(c.request)]));

/**
 * Answers one request: unknown channels and requests that do not fit their schema
 * answer a bad-request error (in words, with the field at fault); an AgentError crosses as its code and message; anything
 * unexpected is logged and answers "internal error" without its details.
 */
export async function dispatch(handlers: Handlers, channel: string, payload: unknown, log: Logger): Promise<Answer<unknown>> {
  const validate = validators.get(channel);
  if (!validate || !Object.hasOwn(handlers, channel)) return { ok: false, error: { code: AgentErrorCode.badRequest, message: `no channel "${channel}"` } };
  const req = payload ?? {};
  if (!validate(req)) {
    return { ok: false, error: { code: AgentErrorCode.badRequest, ...invalidMessage(validate.errors, req) } };
  }
  try {
    const handler = handlers[channel as Channel] as (r: unknown) => Promise<unknown>;
    return { ok: true, value: await handler(req) };
  } catch (err) {
    if (err instanceof AgentError) return { ok: false, error: { code: err.code, message: err.message, ...(err.field ? { field: err.field } : {}) } };
    log.error({ err, channel }, 'unexpected error in an IPC handler');
    return { ok: false, error: { code: AgentErrorCode.internal, message: 'internal error' } };
  }
}
