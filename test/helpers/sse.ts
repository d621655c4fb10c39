// A Server-Sent Events reader for tests: opens the stream with fetch, parses
// messages (id, event, data; comments and `retry:` skipped) and hands them out
// in order. Close every stream opened.
export interface SseMessage { id?: string; event?: string; data: string }

export interface SseStream {
  status: number;
  headers: Headers;
  /** The body when the answer was not a stream (an error's JSON). */
  body?: any;
  /** The next message; rejects after `timeoutMs` or when the stream ends first. */
  next(timeoutMs?: number): Promise<SseMessage>;
  /** Messages until one satisfies `pred` (that one included). */
  until(pred: (m: SseMessage) => boolean, timeoutMs?: number): Promise<SseMessage[]>;
  /** Resolves when the server ends the stream. */
  ended: Promise<void>;
  close(): void;
}

export async function openStream(url: string, headers: Record<string, string> = {}): Promise<SseStream> {
  const abort = new AbortController();
  const res = await fetch(url, { headers: { accept: 'text/event-stream', ...headers }, signal: abort.signal });
  if (!(res.headers.get('content-type') ?? '').startsWith('text/event-stream')) {
    const text = await res.text();
    let body: any = text;
    try {
      body = JSON.parse(text);
    } catch {
      // not JSON
    }
    const never = new Promise<never>(() => undefined);
    return { status: res.status, headers: res.headers, body, next: () => never, until: () => never, ended: Promise.resolve(), close: () => abort.abort() };
  }
  const queue: SseMessage[] = [];
  const waiters: (() => void)[] = [];
  let done = false;
  const wake = () => {
    for (const w of waiters.splice(0)) w();
  };
  const ended = (async () => {
    const reader = res.body!.pipeThrough(new TextDecoderStream()).getReader();
    let buf = '';
    try {
      for (;;) {
        const { value, done: end } = await reader.read();
        if (end) break;
        buf += value;
        let at: number;
        while ((at = buf.indexOf('\n\n')) >= 0) {
          const block = buf.slice(0, at);
          buf = buf.slice(at + 2);
          const m: SseMessage = { data: '' };
          const data: string[] = [];
          for (const line of block.split('\n')) {
            if (line.startsWith(':')) continue;
            const colon = line.indexOf(':');
            const field = colon < 0 ? line : line.slice(0, colon);
            const v = colon < 0 ? '' : line.slice(colon + 1).replace(/^ /, '');
            if (field === 'id') m.id = v;
            else if (field === 'event') m.event = v;
            else if (field === 'data') data.push(v);
          }
          if (data.length === 0) continue;
          m.data = data.join('\n');
          queue.push(m);
          wake();
        }
      }
    } catch {
      // aborted by close()
    } finally {
      done = true;
      wake();
    }
  })();
  const next = async (timeoutMs = 10_000): Promise<SseMessage> => {
    const deadline = Date.now() + timeoutMs;
    while (queue.length === 0) {
      if (done) throw new Error('the stream ended');
      const left = deadline - Date.now();
      if (left <= 0) throw new Error('no event came in time');
      await new Promise<void>((ok) => {
        const t = setTimeout(ok, left);
        waiters.push(() => {
          clearTimeout(t);
          ok();
        });
      });
    }
    return queue.shift()!;
  };
  return {
    status: res.status,
    headers: res.headers,
    next,
    async until(pred, timeoutMs = 10_000) {
      const out: SseMessage[] = [];
      for (;;) {
        const m = await next(timeoutMs);
        out.push(m);
        if (pred(m)) return out;
      }
    },
    ended,
    close: () => abort.abort(),
  };
}

/** The parsed data of a stream message. */
export const dataOf = (m: SseMessage) => JSON.parse(m.data);
