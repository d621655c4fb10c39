// The one door of every request from the window, the agent's channels and main's
// own alike: it answers only the app's own main frame, checks a request against
// its channel's schema where main answers it (the agent checks its own), and
// answers every error as data (docs/architecture.md, principle 4): never a
// rejected promise, never an unexpected error's details.
import type { Answer, EventName, EventOf } from '../src/ipc/contract.js';
import type { DesktopEventName, DesktopEventOf } from '../src/ipc/desktop.js';
import { ipcRequest } from '../src/ipc/names.js';
import { bodyValidator } from '../src/http/validation.js';
import { invalidMessage } from '../src/http/invalidMessage.js';
import { AgentErrorCode } from '../src/api/agent/errors.js';

/** What main needs of Electron's ipcMain (tests pass a stand-in). */
export interface IpcMainLike {
  handle(channel: string, listener: (event: { senderFrame: unknown }, request: unknown) => Promise<unknown>): void;
}

export interface Door {
  ipcMain: IpcMainLike;
  /** Whether a request comes from the app's own main frame (main/window.ts, isOwnFrame). */
  trusted(frame: unknown): boolean;
  log?(message: string): void;
}

/** Sends an event to the window, typed by the contract: the agent's events and main's own. */
export type SendToWindow = <E extends EventName | DesktopEventName>(event: E, payload: E extends EventName ? EventOf<E> : E extends DesktopEventName ? DesktopEventOf<E> : never) => void;

type Answering = (request: unknown) => Promise<Answer<unknown>> | Answer<unknown>;

export const NOT_OWN_WINDOW = { ok: false, error: { code: AgentErrorCode.forbidden, message: "not the app's own window" } } as const;

/** Answers one channel for the app's own frame only. */
export function handleTrusted(door: Door, channel: string, answer: Answering): void {
  door.ipcMain.handle(ipcRequest(channel), async (event, request): Promise<Answer<unknown>> => {
    if (!door.trusted(event.senderFrame)) return NOT_OWN_WINDOW;
    try {
      return await answer(request);
    } catch (err) {
      door.log?.(`unexpected error on ${channel}: ${err instanceof Error ? err.message : String(err)}`);
      return { ok: false, error: { code: AgentErrorCode.internal, message: 'internal error' } };
    }
  });
}

/** A handler behind its request's schema: a request that does not fit answers 262145 in words, with the field at fault. */
export function validated<Q>(schema: object, handler: (request: Q) => Promise<Answer<unknown>> | Answer<unknown>): Answering {
  // Compiled at the first request, not while main starts and opens the window.
  let validate: ReturnType<typeof bodyValidator> | undefined;
  return (request) => {
    validate ??= bodyValidator(schema);
    const req = request ?? {};
    if (!validate(req)) return { ok: false, error: { code: AgentErrorCode.badRequest, ...invalidMessage(validate.errors, req) } };
    return handler(req as Q);
  };
}
