// Small files read whole in one trip to the reader's thread: the bytes and their
// MD5 come back only when the file is still as it was walked, before and after
// the read; a part sent from such a read reaches the store intact, and one from a
// file changed since its walk is refused before anything is sent.
import { createHash } from 'node:crypto';
import fs from 'node:fs/promises';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { WHOLE_READ_MAX, WholeFileReader } from '../../../src/agent/engine/wholeReads.js';
import { ObjectHttp } from '../../../src/agent/engine/objectHttp.js';
import { FileChangedError, sendPart } from '../../../src/agent/engine/partUpload.js';

let dir: string;
const reader = new WholeFileReader();
beforeAll(async () => {
  dir = await fs.mkdtemp(path.join(os.tmpdir(), 'ferry-whole-'));
});
afterAll(async () => {
  await reader.close();
  await fs.rm(dir, { recursive: true, force: true });
});

const md5 = (b: Buffer) => createHash('md5').update(b).digest('hex');

/** Writes `data` and answers the file as its walk would record it. */
async function walked(name: string, data: Buffer) {
  const p = path.join(dir, name);
  await fs.writeFile(p, data);
  const st = await fs.stat(p);
  return { path: p, size: st.size, mtimeMs: st.mtimeMs };
}

describe('WholeFileReader', () => {
  it('answers the bytes and MD5 of files read at once, of every size up to WHOLE_READ_MAX, round after round of released buffers', async () => {
    const sizes = [0, 1, 4096, 16_384, 100_000, WHOLE_READ_MAX];
    const datas = sizes.map((n) => Buffer.from(Array.from({ length: n }, (_, i) => (i * 7 + n) % 251)));
    const files = await Promise.all(datas.map((d, i) => walked(`f${i}`, d)));
    for (let round = 0; round < 3; round++) {
      const got = await Promise.all(files.map((f) => reader.read(f)));
      got.forEach((g, i) => {
        expect(g, `file of ${sizes[i]} bytes`).not.toBeNull();
        expect(g!.data.equals(datas[i]!)).toBe(true);
        expect(g!.md5).toBe(md5(datas[i]!));
      });
      for (const g of got) g!.release();
    }
  });

  it('answers null for a file whose size or modification time is no longer the walk\'s', async () => {
    const f = await walked('changing', Buffer.from('before'));
    expect(await reader.read({ ...f, size: f.size + 1 })).toBeNull();
    expect(await reader.read({ ...f, mtimeMs: f.mtimeMs - 1000 })).toBeNull();
    await fs.writeFile(f.path, Buffer.from('after!'));
    await fs.utimes(f.path, new Date(), new Date(Date.now() + 5000));
    expect(await reader.read(f)).toBeNull();
  });

  it('rejects with the error of the file system for a file that is gone, and refuses files over WHOLE_READ_MAX', async () => {
    await expect(reader.read({ path: path.join(dir, 'missing'), size: 1, mtimeMs: 0 })).rejects.toMatchObject({ code: 'ENOENT' });
    await expect(reader.read({ path: path.join(dir, 'f0'), size: WHOLE_READ_MAX + 1, mtimeMs: 0 })).rejects.toThrow(RangeError);
  });

  it('fails the reads under way when closed, and reads again after', async () => {
    const own = new WholeFileReader();
    const f = await walked('again', Buffer.from('again'));
    expect((await own.read(f))!.data.toString()).toBe('again');
    const cut = expect(own.read(f)).rejects.toThrow(/closed/);
    await own.close();
    await cut;
    expect((await own.read(f))!.data.toString()).toBe('again');
    await own.close();
  });
});

describe('a part that is the whole of a small file', () => {
  let server: http.Server;
  let url: string;
  const received: Buffer[] = [];
  const objects = new ObjectHttp({ timeoutMs: 10_000 });
  beforeAll(async () => {
    // A store that answers each PUT with the MD5 of what it received as the ETag.
    server = http.createServer(async (req, res) => {
      const chunks: Buffer[] = [];
      for await (const c of req) chunks.push(c as Buffer);
      const body = Buffer.concat(chunks);
      received.push(body);
      res.writeHead(200, { etag: `"${md5(body)}"` }).end();
    });
    await new Promise<void>((ok) => server.listen(0, '127.0.0.1', ok));
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/bucket/key?partNumber=1`;
  });
  afterAll(async () => {
    await objects.close();
    await new Promise((ok) => server.close(ok));
  });
  const bp = () => ({ method: 'PUT', url, headers: {}, body: '' }) as Parameters<typeof sendPart>[1];
  const abort = new AbortController();

  it('goes in one read and is stored with the ETag of its bytes, marked as read whole', async () => {
    const data = Buffer.from('sixteen KiB or so'.repeat(1000));
    const f = await walked('small.bin', data);
    const file = { local_path: f.path, size: f.size, mtime_ms: f.mtimeMs };
    const outcome = await sendPart(objects, bp(), file, { start: 0, length: f.size }, abort.signal);
    expect(outcome).toEqual({ kind: 'stored', etag: md5(data), whole: true });
    expect(received.at(-1)!.equals(data)).toBe(true);
  });

  it('is refused, with nothing sent, when the file changed since its walk', async () => {
    const f = await walked('edited.bin', Buffer.from('walked'));
    await fs.writeFile(f.path, Buffer.from('edited, longer'));
    const sent = received.length;
    const outcome = await sendPart(objects, bp(), { local_path: f.path, size: f.size, mtime_ms: f.mtimeMs }, { start: 0, length: f.size }, abort.signal);
    expect(outcome.kind).toBe('fatal');
    expect((outcome as { error: Error }).error).toBeInstanceOf(FileChangedError);
    expect(received.length).toBe(sent);
  });
});
