// One ranged GET into the partial file (src/agent/engine/rangeFetch.ts) against
// raw HTTP servers: which client reads it, and how its writes reach the file.
import { createHash, randomBytes } from 'node:crypto';
import fs, { type FileHandle } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, test } from 'vitest';
import { createRangeTransport, fetchRange, type RangeTransport } from '../../../src/agent/engine/rangeFetch.js';
import { serveRaw, type Served } from '../../helpers/rawHttp.js';

let dir: string;
let transport: RangeTransport;
const open: Served[] = [];
const serve = async (...a: Parameters<typeof serveRaw>) => {
  const s = await serveRaw(...a);
  open.push(s);
  return s;
};

beforeEach(async () => {
  dir = await fs.mkdtemp(path.join(os.tmpdir(), 'ferry-rangefetch-'));
  transport = createRangeTransport(5_000);
});

afterEach(async () => {
  await transport.close();
  await Promise.all(open.splice(0).map((s) => s.close()));
  await fs.rm(dir, { recursive: true, force: true });
});

const range = (url: URL, fh: FileHandle, start: number, end: number, total: number) =>
  fetchRange({ url: url.href, start, end, total, etag: null, fh, signal: new AbortController().signal, transport, onBytes: () => undefined });

describe('fetchRange', () => {
  test('reads plain http through plainGet, and turns to undici for an origin that answers without Content-Length', async () => {
    const chunked = await serve((socket) =>
      socket.write('HTTP/1.1 206 X\r\nContent-Range: bytes 0-9/10\r\nTransfer-Encoding: chunked\r\n\r\n5\r\n01234\r\n5\r\n56789\r\n0\r\n\r\n'),
    );
    const plain = await serve((socket) => socket.write('HTTP/1.1 206 X\r\nContent-Range: bytes 0-9/10\r\nContent-Length: 10\r\n\r\nabcdefghij'));
    for (const [s, want] of [[plain, 'abcdefghij'], [chunked, '0123456789']] as const) {
      const fh = await fs.open(path.join(dir, 'f'), 'w+');
      const etag = await range(s.url, fh, 0, 9, 10);
      await fh.close();
      expect(etag).toBeNull();
      expect(await fs.readFile(path.join(dir, 'f'), 'utf8')).toBe(want);
    }
    expect([...transport.notPlain]).toEqual([chunked.url.origin]);
  });

  test('the ranges of one file write it one at a time, and every byte lands where it belongs', async () => {
    const size = 16 << 20;
    const data = randomBytes(size);
    const s = await serve((socket, _n, request) => {
      const [, a, b] = /range: bytes=(\d+)-(\d+)/i.exec(request)!.map(Number);
      socket.write(`HTTP/1.1 206 X\r\nContent-Range: bytes ${a}-${b}/${size}\r\nContent-Length: ${b! - a! + 1}\r\n\r\n`);
      socket.write(data.subarray(a, b! + 1));
    });
    const real = await fs.open(path.join(dir, 'big'), 'w+');
    let writing = 0;
    let most = 0;
    // The real file, its writes counted while they run.
    const fh = Object.create(real) as FileHandle;
    fh.writev = async (bufs, at) => {
      most = Math.max(most, ++writing);
      try {
        return await real.writev(bufs, at);
      } finally {
        writing--;
      }
    };
    const part = size / 8;
    await Promise.all(Array.from({ length: 8 }, (_, i) => range(s.url, fh, i * part, (i + 1) * part - 1, size)));
    await real.close();
    expect(most).toBe(1);
    expect((await fs.readFile(path.join(dir, 'big'))).equals(data)).toBe(true);
  });

  test("a whole object's MD5 is taken from its bytes as they arrive, over either client", async () => {
    const data = randomBytes(300_000);
    const head = `HTTP/1.1 200 OK\r\nETag: "x"\r\n`;
    const plain = await serve((socket) => socket.write(Buffer.concat([Buffer.from(`${head}Content-Length: ${data.length}\r\n\r\n`), data])));
    const chunked = await serve((socket) => socket.write(Buffer.concat([Buffer.from(`${head}Transfer-Encoding: chunked\r\n\r\n${data.length.toString(16)}\r\n`), data, Buffer.from('\r\n0\r\n\r\n')])));
    for (const s of [plain, chunked]) {
      const fh = await fs.open(path.join(dir, 'whole'), 'w+');
      const md5 = createHash('md5');
      await fetchRange({ url: s.url.href, start: 0, end: data.length - 1, total: data.length, etag: null, fh, signal: new AbortController().signal, transport, onBytes: () => undefined, md5 });
      await fh.close();
      expect(md5.digest('hex')).toBe(createHash('md5').update(data).digest('hex'));
    }
  });
});
