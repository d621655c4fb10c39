// GET over plain HTTP/1.1 that reads the answer into reused buffers. Node's
// sockets allocate a new 64 KiB buffer for every read; V8 counts those as
// external memory and runs a full collection every few tens of MB, 20-30 times
// per GiB downloaded. Here each connection reads (net `onread`) into a ring of
// buffers that come back once their bytes are written to disk (release), so a
// download allocates nothing per read. Only for http: stores (the embedded
// one); https goes through undici. Answers must carry a Content-Length, as S3's
// GetObject does; others are refused with PlainGetUnsupported, and the caller
// uses undici for that origin from then on.
import net from 'node:net';

const SLOT_BYTES = 64 * 1024;
/** Per connection: the writer holds two half-MiB batches (~18 slots) and one read is under way. */
const SLOTS = 24;
const MAX_HEAD_BYTES = 64 * 1024;
const IDLE_MS = 10_000;

/** The answer cannot be read by this client (no Content-Length, chunked): use another. */
export class PlainGetUnsupported extends Error {}

const fail = (message: string, code: string) => Object.assign(new Error(message), { code });

interface Owed {
  slot: number;
  bytes: number;
}

/** One kept-alive connection and its ring of read buffers. */
class Conn {
  readonly socket: net.Socket;
  private readonly ring = Array.from({ length: SLOTS }, () => Buffer.allocUnsafeSlow(SLOT_BYTES));
  /** Per slot: how many held chunks still point into it. */
  private readonly busy = new Uint8Array(SLOTS);
  private next = 0;
  /** Held chunks, oldest first: bytes are written (released) in the order they came. */
  private readonly owed: Owed[] = [];
  /** Reading stopped because the next slot is still held. */
  starved = false;
  /** Set by the exchange under way. */
  onBytes: ((chunk: Buffer, slot: number) => boolean) | undefined;
  onGone: ((err: Error) => void) | undefined;
  /** Called when reading resumes after starving. */
  onFed: (() => void) | undefined;
  onStarved: (() => void) | undefined;
  idleTimer: NodeJS.Timeout | undefined;

  constructor(host: string, port: number) {
    this.socket = net.connect({
      host,
      port,
      noDelay: true,
      onread: {
        buffer: () => this.slot(),
        callback: (n: number, buf: Uint8Array) => {
          const slot = this.ring.indexOf(buf as Buffer<ArrayBuffer>);
          if (slot >= 0) this.next = (slot + 1) % SLOTS;
          const more = this.onBytes?.(Buffer.from(buf.buffer, buf.byteOffset, n), slot) ?? true;
          if (this.busy[this.next]) {
            this.starved = true;
            this.onStarved?.();
          }
          return more && !this.starved; // false pauses the socket
        },
      },
    });
    this.socket.on('error', (err) => this.onGone?.(err));
    this.socket.on('close', () => this.onGone?.(fail('the store closed the connection', 'ECONNRESET')));
  }

  /** The buffer for the next read: the next ring slot, or a fresh one should it still be held. */
  private slot(): Buffer {
    return this.busy[this.next] ? Buffer.allocUnsafe(SLOT_BYTES) : this.ring[this.next]!;
  }

  /** The consumer holds `bytes` of this slot until it releases them. */
  hold(slot: number, bytes: number): void {
    if (slot < 0 || bytes === 0) return;
    this.busy[slot]!++;
    this.owed.push({ slot, bytes });
  }

  /** Gives back the oldest `n` held bytes. */
  release(n: number): void {
    while (n > 0 && this.owed.length > 0) {
      const o = this.owed[0]!;
      const take = Math.min(n, o.bytes);
      o.bytes -= take;
      n -= take;
      if (o.bytes > 0) break;
      this.owed.shift();
      this.busy[o.slot]!--;
    }
    if (this.starved && !this.busy[this.next]) {
      this.starved = false;
      this.onFed?.();
    }
  }

  get holding(): boolean {
    return this.owed.length > 0;
  }
}

/** Kept-alive connections by host:port; idle ones do not hold the process open. */
export class PlainPool {
  private readonly idle = new Map<string, Conn[]>();
  private closed = false;

  /** GET `url` (http: only). Resolves once the head is in; the body flows once a 'data' listener is attached. */
  get(url: URL, o: GetOptions): Promise<PlainAnswer> {
    if (this.closed) return Promise.reject(new Error('the download connections are closed'));
    const port = Number(url.port || 80);
    const key = `${url.hostname}:${port}`;
    const keep = (c: Conn) => this.keep(key, c);
    const idle = this.takeIdle(key);
    if (!idle) return exchange(new Conn(url.hostname, port), url, o, keep);
    // A kept connection the store closed meanwhile fails before any answer: a GET can go again, once, on a new one.
    return exchange(idle, url, o, keep).catch((err: NodeJS.ErrnoException) => {
      if (o.signal.aborted || (err.code !== 'ECONNRESET' && err.code !== 'EPIPE')) throw err;
      return exchange(new Conn(url.hostname, port), url, o, keep);
    });
  }

  /** Closes the idle connections; exchanges under way end by themselves. */
  close(): void {
    this.closed = true;
    for (const [key, list] of this.idle) for (const c of [...list]) this.drop(key, c);
  }

  private takeIdle(key: string): Conn | undefined {
    const c = this.idle.get(key)?.pop();
    if (!c) return undefined;
    clearTimeout(c.idleTimer);
    c.socket.ref();
    return c;
  }

  private keep(key: string, c: Conn): void {
    if (this.closed || c.socket.destroyed || !c.socket.writable) return void c.socket.destroy();
    c.onBytes = c.onFed = c.onStarved = undefined;
    c.onGone = () => this.drop(key, c);
    c.socket.unref();
    const list = this.idle.get(key) ?? [];
    list.push(c);
    this.idle.set(key, list);
    c.idleTimer = setTimeout(() => this.drop(key, c), IDLE_MS).unref();
  }

  private drop(key: string, c: Conn): void {
    clearTimeout(c.idleTimer);
    const list = this.idle.get(key);
    const i = list?.indexOf(c) ?? -1;
    if (i >= 0) list!.splice(i, 1);
    c.socket.destroy();
  }
}

export interface PlainBody {
  on(event: 'data', fn: (chunk: Buffer) => void): void;
  on(event: 'end', fn: () => void): void;
  on(event: 'error', fn: (err: Error) => void): void;
  pause(): void;
  resume(): void;
  isPaused(): boolean;
  readonly destroyed: boolean;
  /** Ends the exchange: a connection whose answer was read whole and released goes back to the pool. */
  destroy(): void;
  /** Gives back the oldest `n` bytes handed out by 'data' (they are written): their buffer is read into again. */
  release(n: number): void;
  text(): Promise<string>;
}

export interface PlainAnswer {
  statusCode: number;
  /** Lower-case names. */
  headers: Record<string, string>;
  body: PlainBody;
}

interface GetOptions {
  headers: Record<string, string>;
  signal: AbortSignal;
  /** Silence (no bytes) for this long fails the exchange with ETIMEDOUT. */
  stallMs: number;
}

/** One GET on `conn`; `keep` takes the connection back once its answer is read whole and released. */
function exchange(conn: Conn, url: URL, o: GetOptions, keep: (c: Conn) => void): Promise<PlainAnswer> {
  const listeners = { data: [] as ((c: Buffer) => void)[], end: [] as (() => void)[], error: [] as ((e: Error) => void)[] };
  let head = '';
  let answer: PlainAnswer | undefined;
  /** Body bytes that came with the head, handed out when the body starts flowing. */
  let first: { chunk: Buffer; slot: number } | undefined;
  let left = 0;
  let ended = false;
  let failed: Error | undefined;
  let paused = true;
  let destroyed = false;
  let stall: NodeJS.Timeout | undefined;

  return new Promise<PlainAnswer>((resolve, reject) => {
    const finish = (err?: Error): void => {
      if (ended || failed) return;
      clearTimeout(stall);
      o.signal.removeEventListener('abort', onAbort);
      if (err) {
        failed = err;
        conn.onBytes = conn.onGone = conn.onFed = conn.onStarved = undefined;
        conn.socket.destroy();
        if (!answer) reject(err);
        else for (const fn of listeners.error) fn(err);
      } else {
        ended = true;
        for (const fn of listeners.end) fn();
      }
    };
    // Silence counts only while we wait for the store, not while the disk holds the bytes.
    const waiting = (): boolean => !ended && !failed && (!answer || (!paused && !conn.starved));
    const armStall = (): void => {
      clearTimeout(stall);
      if (waiting()) stall = setTimeout(() => finish(fail(`the store sent nothing for ${o.stallMs} ms`, 'ETIMEDOUT')), o.stallMs);
    };
    const onAbort = (): void => finish(Object.assign(new Error('This operation was aborted'), { name: 'AbortError', code: 'ABORT_ERR' }));
    if (o.signal.aborted) return onAbort();
    o.signal.addEventListener('abort', onAbort, { once: true });

    const deliver = (chunk: Buffer, slot: number): void => {
      if (chunk.length > left) return finish(fail('the store sent more than its Content-Length', 'EPROTO'));
      left -= chunk.length;
      conn.hold(slot, chunk.length);
      for (const fn of listeners.data) fn(chunk);
      if (left === 0) finish();
    };
    const flow = (): void => {
      if (!paused || ended || failed) return;
      paused = false;
      if (first) {
        const f = first;
        first = undefined;
        deliver(f.chunk, f.slot);
      } else if (left === 0) finish();
      if (!paused && !conn.starved && !ended && !failed) conn.socket.resume();
      armStall();
    };

    const body: PlainBody = {
      on(event: 'data' | 'end' | 'error', fn: never) {
        (listeners[event] as unknown[]).push(fn);
        // As with Node's streams, a 'data' listener starts the flow (after the caller's current step).
        if (event === 'data' && listeners.data.length === 1) queueMicrotask(flow);
      },
      pause() {
        paused = true;
        conn.socket.pause();
        clearTimeout(stall);
      },
      resume: () => flow(),
      isPaused: () => paused,
      get destroyed() {
        return destroyed;
      },
      destroy() {
        if (destroyed) return;
        destroyed = true;
        if (ended && !failed && !conn.holding && !/close/i.test(answer!.headers.connection ?? '')) keep(conn);
        else if (ended) conn.socket.destroy();
        else finish(fail('the answer was left unread', 'ECONNABORTED'));
      },
      release: (n) => conn.release(n),
      text: () =>
        new Promise<string>((ok, no) => {
          const parts: Buffer[] = [];
          body.on('error', no);
          body.on('end', () => ok(Buffer.concat(parts).toString('utf8')));
          body.on('data', (c) => {
            parts.push(Buffer.from(c)); // a copy: the slot is given back at once
            conn.release(c.length);
          });
        }),
    };

    conn.onGone = (err) => finish(err);
    conn.onStarved = () => clearTimeout(stall);
    conn.onFed = () => {
      if (!paused && !ended && !failed) conn.socket.resume();
      armStall();
    };
    conn.onBytes = (chunk, slot) => {
      if (failed || ended) return false;
      if (answer) {
        deliver(chunk, slot);
        armStall();
        return !paused;
      }
      // Latin-1 keeps one character per byte, so offsets in `head` are byte offsets.
      const before = head.length;
      head += chunk.toString('latin1');
      const cut = head.indexOf('\r\n\r\n');
      if (cut < 0) {
        if (head.length > MAX_HEAD_BYTES) finish(fail('the store sent an oversized head', 'EPROTO'));
        return true;
      }
      const parsed = parseHead(head.slice(0, cut));
      if (parsed instanceof Error) {
        finish(parsed);
        return false;
      }
      answer = { ...parsed, body };
      left = Number(parsed.headers['content-length']);
      const bodyStart = cut + 4 - before;
      if (bodyStart < chunk.length) first = { chunk: chunk.subarray(bodyStart), slot };
      clearTimeout(stall);
      resolve(answer);
      return false; // the body waits for its listener
    };

    armStall();
    conn.socket.resume();
    const lines = Object.entries(o.headers).map(([k, v]) => `${k}: ${v}\r\n`).join('');
    conn.socket.write(`GET ${url.pathname}${url.search} HTTP/1.1\r\nHost: ${url.host}\r\n${lines}\r\n`);
  });
}

function parseHead(text: string): { statusCode: number; headers: Record<string, string> } | Error {
  const lines = text.split('\r\n');
  const m = /^HTTP\/1\.[01] (\d{3})/.exec(lines[0] ?? '');
  if (!m) return fail(`the store answered something other than HTTP: ${JSON.stringify((lines[0] ?? '').slice(0, 80))}`, 'EPROTO');
  const headers: Record<string, string> = {};
  for (const line of lines.slice(1)) {
    const colon = line.indexOf(':');
    if (colon > 0) headers[line.slice(0, colon).trim().toLowerCase()] = line.slice(colon + 1).trim();
  }
  if (headers['transfer-encoding'] || !/^\d+$/.test(headers['content-length'] ?? '')) {
    return new PlainGetUnsupported('the store answered without a Content-Length');
  }
  return { statusCode: Number(m[1]), headers };
}
