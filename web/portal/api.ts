// Calls to the service from the Portal page (same origin), and the retry rule
// every step of an upload follows: connection losses, 5xx, 408 and 429 are waited
// out (Retry-After when given, else 1 s doubling to 30 s, at once when the browser
// comes back online); anything else is the uploader's to fix and stops the upload.

export class ApiError extends Error {
  constructor(readonly status: number, readonly code: string, message: string, readonly retryAfter?: number) {
    super(message);
  }
}

function retryAfterOf(res: { getResponseHeader?: (n: string) => string | null; headers?: Headers }): number | undefined {
  const v = res.headers?.get('retry-after') ?? res.getResponseHeader?.('retry-after');
  const n = v ? Number(v) : NaN;
  return Number.isFinite(n) && n >= 0 ? n : undefined;
}

export async function api<T>(method: string, path: string, body?: unknown, headers: Record<string, string> = {}): Promise<T> {
  let res: Response;
  try {
    res = await fetch(path, {
      method,
      headers: body === undefined ? headers : { 'content-type': 'application/json', ...headers },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
  } catch {
    throw new ApiError(0, 'offline', 'No connection to the server.');
  }
  const text = await res.text();
  let json: { code?: string; message?: string } | undefined;
  try {
    json = text ? JSON.parse(text) : undefined;
  } catch {
    json = undefined;
  }
  if (!res.ok) throw new ApiError(res.status, json?.code ?? `http_${res.status}`, json?.message ?? `The server answered ${res.status}.`, retryAfterOf(res));
  return json as T;
}

/** PUTs one part (or a whole small file) to the store; resolves its ETag. */
export function putPart(url: string, blob: Blob, onProgress: (loaded: number) => void, signal: AbortSignal): Promise<string> {
  return new Promise((resolve, reject) => {
    const xhr = new XMLHttpRequest();
    xhr.open('PUT', url);
    xhr.upload.onprogress = (e) => onProgress(e.loaded);
    xhr.onload = () => {
      const etag = xhr.getResponseHeader('etag');
      if (xhr.status >= 200 && xhr.status < 300 && etag) return resolve(etag);
      const code = /<Code>([^<]+)<\/Code>/.exec(xhr.responseText ?? '')?.[1] ?? `store_${xhr.status}`;
      reject(new ApiError(xhr.status, code, xhr.status >= 200 && xhr.status < 300 ? 'The store did not show its ETag (its CORS rule must expose ETag).' : `The store answered ${xhr.status} (${code}).`, retryAfterOf(xhr)));
    };
    xhr.onerror = () => reject(new ApiError(0, 'offline', 'No connection to the store.'));
    xhr.ontimeout = xhr.onerror;
    signal.addEventListener('abort', () => xhr.abort(), { once: true });
    xhr.onabort = () => reject(new ApiError(0, 'aborted', 'Stopped.'));
    xhr.send(blob);
  });
}

export const transient = (err: unknown) =>
  err instanceof ApiError && err.code !== 'aborted' && (err.status === 0 || err.status === 408 || err.status === 429 || err.status >= 500);

const MAX_WAIT_S = 30;

/** Waits `seconds`, or less when the browser reports it is back online. */
function pause(seconds: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    const done = () => {
      clearTimeout(timer);
      window.removeEventListener('online', done);
      resolve();
    };
    const timer = setTimeout(done, seconds * 1000);
    window.addEventListener('online', done);
    signal.addEventListener('abort', done, { once: true });
  });
}

/**
 * Runs `fn` until it succeeds, waiting out transient failures (reported through
 * `onWait` with the seconds until the next try, and `onWait(undefined)` once through).
 */
export async function retrying<T>(fn: () => Promise<T>, onWait: (seconds: number | undefined, err: ApiError) => void, signal: AbortSignal): Promise<T> {
  let wait = 1;
  let waited: ApiError | undefined;
  for (;;) {
    try {
      const v = await fn();
      if (waited) onWait(undefined, waited);
      return v;
    } catch (err) {
      if (!transient(err) || signal.aborted) throw err;
      const e = err as ApiError;
      const seconds = Math.min(MAX_WAIT_S, e.retryAfter ?? wait);
      waited = e;
      onWait(seconds, e);
      await pause(seconds, signal);
      wait = Math.min(MAX_WAIT_S, wait * 2);
    }
  }
}
