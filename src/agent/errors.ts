// Errors the agent answers with: an HTTP status and an integer code.
import { AgentErrorCode } from '../api/agent/errors.js';

export class AgentError extends Error {
  constructor(
    readonly status: number,
    readonly code: AgentErrorCode,
    message: string,
    /** The request's field at fault (`url`), answered beside the message so a form can show it there. */
    readonly field?: string,
  ) {
    super(message);
  }
}

export const sessionNil = () => new AgentError(401, AgentErrorCode.sessionNil, 'session is nil');
export const invalid = (message: string, field?: string) => new AgentError(400, AgentErrorCode.badRequest, message, field);
export const notFound = (what: string) => new AgentError(404, AgentErrorCode.notFound, `${what} not found`);
export const conflict = (message: string) => new AgentError(409, AgentErrorCode.conflict, message);
export const upstream = (message: string) => new AgentError(502, AgentErrorCode.upstream, message);
