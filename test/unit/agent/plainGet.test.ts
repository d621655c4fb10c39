// The plain-HTTP GET client of downloads (src/agent/engine/plainGet.ts) against
// real sockets: raw `net` servers, so each test controls exactly what the
// "store" sends and when.
import { randomBytes } from 'node:crypto';
import net from 'node:net';
import { afterEach, describe, expect, test } from 'vitest';
import { PlainGetUnsupported, PlainPool, type PlainAnswer } from '../../../src/agent/engine/plainGet.js';
import { serveRaw, type Served } from '../../helpers/rawHttp.js';

const open: Served[] = [];
const pools: PlainPool[] = [];
afterEach(async () => {
  for (const p of pools.splice(0)) p.close();
  await Promise.all(open.splice(0).map((s) => s.close()));
});

async function serve(answer: (socket: net.Socket, n: number) => void): Promise<Served> {
  const s = await serveRaw(answer);
  open.push(s);
  return s;
}

const head = (length: number, status = 206) => `HTTP/1.1 ${status} X\r\nContent-Length: ${length}\r\nETag: "abc"\r\n\r\n`;

function pool(): PlainPool {
  const p = new PlainPool();
  pools.push(p);
  return p;
}

const get = (p: PlainPool, s: Served, stallMs = 5_000, signal = new AbortController().signal) =>
  p.get(s.url, { headers: { range: 'bytes=0-9' }, signal, stallMs });

/** Reads the whole body; with `release`, gives each chunk back at once (as the writer does once it is written). */
function readAll(a: PlainAnswer, release = true): Promise<{ data: Buffer; buffers: Set<ArrayBufferLike> }> {
  return new Promise((ok, no) => {
    const parts: Buffer[] = [];
    const buffers = new Set<ArrayBufferLike>();
    a.body.on('error', no);
    a.body.on('end', () => ok({ data: Buffer.concat(parts), buffers }));
    a.body.on('data', (c) => {
      parts.push(Buffer.from(c));
      buffers.add(c.buffer);
      if (release) a.body.release(c.length);
    });
  });
}

/** `n` GETs one after the other through one pool, each read whole and ended: their bodies. */
async function getsInTurn(s: Served, n: number): Promise<string[]> {
  const p = pool();
  const bodies: string[] = [];
  for (let i = 0; i < n; i++) {
    const a = await get(p, s);
    bodies.push((await readAll(a)).data.toString());
    a.body.destroy();
  }
  return bodies;
}

describe('plainGet', () => {
  test('reads a head split over several writes and a large body in order, into a fixed ring of buffers', async () => {
    const body = randomBytes(8 << 20);
    const s = await serve((socket) => {
      const h = head(body.length);
      socket.write(h.slice(0, 7));
      setTimeout(() => socket.write(h.slice(7) + body.subarray(0, 100).toString('latin1'), 'latin1'), 20);
      setTimeout(() => socket.write(body.subarray(100)), 40);
    });
    const a = await get(pool(), s);
    expect(a.statusCode).toBe(206);
    expect(a.headers.etag).toBe('"abc"');
    const { data, buffers } = await readAll(a);
    expect(data.equals(body)).toBe(true);
    // 8 MiB came in 64 KiB reads or smaller: all of them into the same few buffers, none allocated per read.
    expect(buffers.size).toBeLessThanOrEqual(24);
    a.body.destroy();
  });

  test('keeps the connection for the next GET once the answer is read and released', async () => {
    const s = await serve((socket) => socket.write(head(10) + '0123456789'));
    expect(await getsInTurn(s, 3)).toEqual(Array(3).fill('0123456789'));
    expect(s.connections()).toBe(1);
  });

  test('sends a GET again on a new connection when a kept one turns out closed, once', async () => {
    // The store drops each connection at its second request, as one whose idle timeout just ran out.
    const s = await serve((socket, n) => (n === 0 ? socket.write(head(10) + '0123456789') : socket.destroy()));
    expect(await getsInTurn(s, 2)).toEqual(Array(2).fill('0123456789'));
    expect(s.connections()).toBe(2);
  });

  test('stops reading while every buffer is held, and goes on as they are released', async () => {
    const body = randomBytes(4 << 20);
    const s = await serve((socket) => socket.write(head(body.length) + body.toString('latin1'), 'latin1'));
    const a = await get(pool(), s);
    const held: Buffer[] = [];
    const parts: Buffer[] = [];
    let seen = 0;
    const ended = new Promise<void>((ok, no) => {
      a.body.on('end', ok);
      a.body.on('error', no);
    });
    a.body.on('data', (c) => {
      held.push(c);
      parts.push(Buffer.from(c));
      seen += c.length;
    });
    await new Promise((r) => setTimeout(r, 200));
    // Nothing released: at most the ring (24 x 64 KiB) was read.
    expect(seen).toBeLessThanOrEqual(24 * 64 * 1024);
    expect(seen).toBeLessThan(body.length);
    const releaser = setInterval(() => {
      const c = held.shift();
      if (c) a.body.release(c.length);
    }, 1);
    await ended;
    clearInterval(releaser);
    expect(Buffer.concat(parts).equals(body)).toBe(true);
    a.body.destroy();
  });

  test('refuses an answer without Content-Length, which the caller then gets elsewhere', async () => {
    const s = await serve((socket) => socket.write('HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n0\r\n\r\n'));
    await expect(get(pool(), s)).rejects.toBeInstanceOf(PlainGetUnsupported);
  });

  test('fails a store that falls silent with ETIMEDOUT, but not while the reader holds the bytes', async () => {
    const s = await serve((socket) => socket.write(head(10) + '01234'));
    const a = await get(pool(), s, 150);
    const failure = new Promise<Error>((ok) => a.body.on('error', ok));
    a.body.on('data', () => undefined);
    expect(((await failure) as NodeJS.ErrnoException).code).toBe('ETIMEDOUT');

    const quiet = await serve((socket) => socket.write(head(10) + '0123456789'));
    const b = await get(pool(), quiet, 100);
    b.body.pause();
    await new Promise((r) => setTimeout(r, 300)); // paused longer than stallMs: our wait, not the store's
    expect((await readAll(b)).data.toString()).toBe('0123456789');
  });

  test('ends with an error when the store closes early, sends too much, or the caller aborts', async () => {
    const early = await serve((socket) => socket.end(head(10) + '01234'));
    const a = await get(pool(), early);
    await expect(readAll(a)).rejects.toMatchObject({ code: 'ECONNRESET' });

    const much = await serve((socket) => socket.write(head(3) + '0123456789'));
    const b = await get(pool(), much);
    await expect(readAll(b)).rejects.toMatchObject({ code: 'EPROTO' });

    const slow = await serve((socket) => socket.write(head(10) + '01'));
    const ac = new AbortController();
    const c = await get(pool(), slow, 5_000, ac.signal);
    const read = readAll(c);
    ac.abort();
    await expect(read).rejects.toMatchObject({ name: 'AbortError' });
  });
});
