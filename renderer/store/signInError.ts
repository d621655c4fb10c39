// What the sign-in and settings forms show of an agent's refusal: words, and the
// field that can fix it. Kept apart from the store so that it runs anywhere (tests).
import { AgentErrorCode } from '../../src/api/agent/errors.js';

/** What a form shows: the words, and the field (of the request, or of the form) that can fix it. */
export interface FormError { message: string; field?: string }

/**
 * A sign-in error in words a person understands, with the sign-in form's field
 * it belongs to (server, email, password, api_key): the agent answers the
 * service's refusal (262146), a service that cannot be reached or that answers
 * something else (262151), an address where no Ferry server is (404).
 */
export function signInError(e: { code: number; message: string; field?: string }, withKey = false): FormError {
  if (e.code === AgentErrorCode.sessionNil) return withKey ? { message: 'The server refused this API key.', field: 'api_key' } : { message: 'Wrong email or password. Try again.', field: 'password' };
  const tooMany = /answered 429: (.+)$/.exec(e.message);
  if (tooMany) return { message: `${tooMany[1]![0]!.toUpperCase()}${tooMany[1]!.slice(1).replace(/\.?$/, '.')}`, field: withKey ? 'api_key' : 'password' };
  if (e.code === AgentErrorCode.notFound || /answered 404/.test(e.message)) return { message: 'No Ferry server answers at this address. Check it.', field: 'server' };
  if (e.code === AgentErrorCode.upstream || e.code === AgentErrorCode.internal) return { message: 'The server cannot be reached. Check its address and your connection.', field: 'server' };
  // The request's own field (a schema's words: "email" is not an email address).
  return e.field ? { message: e.message, field: e.field } : { message: e.message };
}
