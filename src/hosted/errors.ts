// HttpError carries a status and a stable code to the error handler, which
// turns it into `{code, message}`. Anything else is a 500 whose message is logged, not sent.
export class HttpError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    readonly headers: Record<string, string> = {},
  ) {
    super(message);
  }
}

export const badRequest = (message: string, code = 'bad_request') => new HttpError(400, code, message);
export const unauthorized = (message = 'missing or invalid credentials') => new HttpError(401, 'unauthorized', message);
export const forbidden = (message = 'not allowed') => new HttpError(403, 'forbidden', message);
export const notFound = (what = 'resource') => new HttpError(404, 'not_found', `${what} not found`);
export const conflict = (message: string, code = 'conflict') => new HttpError(409, code, message);
export const gone = (message: string) => new HttpError(410, 'gone', message);
