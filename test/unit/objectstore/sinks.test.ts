// The two ways a received body reaches its temp file (src/objectstore/fileSink.ts,
// directSink.ts): each must leave exactly the bytes given, answer their MD5,
// and hold back the source when writes fall behind.
import { createHash, randomBytes } from 'node:crypto';
import { readdirSync, readlinkSync } from 'node:fs';
import { mkdir, mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { addonFile } from '../../../src/native/addons.js';
import { alignedBuffer, misalignment } from '../../../src/native/alignedBuffers.js';
import { DIRECT_BLOCK, directIoWorks, directSink } from '../../../src/objectstore/directSink.js';
import { cachedSink, type BodySink, type SinkHooks } from '../../../src/objectstore/fileSink.js';
import { cachedBytes } from '../../helpers/pageCache.js';
import { onlyIf } from '../../helpers/skip.js';

const MiB = 1 << 20;
const CHUNK = 64 * 1024;
const md5 = (b: Buffer) => createHash('md5').update(b).digest('hex');
const direct = process.platform === 'linux' && addonFile('pagecache') !== undefined;

/** Whether this process holds `path` open (Linux: its /proc/self/fd links). */
function isOpen(path: string): boolean {
  return readdirSync('/proc/self/fd').some((fd) => {
    try {
      return readlinkSync(`/proc/self/fd/${fd}`) === path;
    } catch {
      return false; // closed while listed
    }
  });
}

let dir: string;
beforeAll(async () => void (dir = await mkdtemp(join(tmpdir(), 'ferry-sinks-'))));
afterAll(() => rm(dir, { recursive: true, force: true }));

/** Hooks that count resumes and keep the first failure. */
function hooks(): SinkHooks & { resumes: number; waitResume(): Promise<void>; failed?: Error } {
  let wake: (() => void) | undefined;
  const h = {
    resumes: 0,
    failed: undefined as Error | undefined,
    resume() {
      h.resumes++;
      wake?.();
    },
    fail(err: Error) {
      h.failed ??= err;
    },
    waitResume: () => new Promise<void>((ok) => (wake = ok)),
  };
  return h;
}

/** Gives `data` to the sink in socket-sized chunks, waiting whenever it asks; answers how often it asked. */
async function pour(sink: BodySink, data: Buffer, h: ReturnType<typeof hooks>): Promise<number> {
  let pauses = 0;
  for (let at = 0; at < data.length; at += CHUNK) {
    if (!sink.write(data.subarray(at, at + CHUNK))) {
      pauses++;
      await h.waitResume();
    }
  }
  return pauses;
}

const NO_DIRECT = 'O_DIRECT writes are not available on this filesystem';

const sinks = [
  { name: 'through the page cache', open: (path: string, h: SinkHooks) => cachedSink(path, h), run: true },
  { name: 'past the page cache', open: (path: string, h: SinkHooks) => directSink(path, h)!, run: direct },
];

describe.each(sinks)('a body written $name', ({ open, run }) => {
  // Around the 4 KiB blocks and 1 MiB buffers, and more buffers than a body may hold.
  test.each([0, 1, 4095, 4097, MiB, MiB + 1, 21 * MiB + 12_345])('%i bytes arrive whole, with their MD5', onlyIf(run, NO_DIRECT), async (n) => {
    const path = join(dir, `body-${n}-${Math.random()}`);
    const data = randomBytes(n);
    const h = hooks();
    const sink = open(path, h);
    await pour(sink, data, h);
    const got = await sink.end();
    expect(got.size).toBe(n);
    expect(got.md5.toString('hex')).toBe(md5(data));
    expect(md5(await readFile(path))).toBe(md5(data));
    expect(h.failed).toBeUndefined();
  });

  test('an aborted body closes its file, and a finished one too', onlyIf(run && process.platform === 'linux', run ? 'counts open files in /proc: Linux only' : NO_DIRECT), async () => {
    const path = join(dir, `aborted-${Math.random()}`);
    const h = hooks();
    const sink = open(path, h);
    await pour(sink, randomBytes(3 * MiB + 5), h);
    expect(isOpen(path)).toBe(true);
    await sink.abort();
    expect(isOpen(path)).toBe(false);
    expect(h.failed).toBeUndefined();
    const done = join(dir, `done-${Math.random()}`);
    const finished = open(done, h);
    await pour(finished, randomBytes(MiB + 5), h);
    await finished.end();
    expect(isOpen(done)).toBe(false);
  });
});

describe('past the page cache', onlyIf(direct, NO_DIRECT), () => {
  test('buffers start on a 4 KiB boundary', () => {
    for (let i = 0; i < 5; i++) expect(misalignment(alignedBuffer(MiB, 4096)!, 4096)).toBe(0);
  });

  test('the source waits once a body holds its buffers, and is resumed', async () => {
    const path = join(dir, 'held.bin');
    const h = hooks();
    const sink = directSink(path, h)!;
    const data = randomBytes(12 * DIRECT_BLOCK);
    // Given all at once, nothing is written yet: the sink must ask to wait within 8 buffers.
    let taken = 0;
    while (taken < data.length && sink.write(data.subarray(taken, taken + CHUNK))) taken += CHUNK;
    expect(taken).toBeLessThan(8 * DIRECT_BLOCK);
    await h.waitResume();
    expect(h.resumes).toBe(1);
    await pour(sink, data.subarray(taken + CHUNK), h);
    const got = await sink.end();
    expect(got.md5.toString('hex')).toBe(md5(data));
  });

  test('the written bytes are not left in the page cache', async ({ skip }) => {
    const path = join(dir, 'uncached.bin');
    const h = hooks();
    const sink = directSink(path, h)!;
    await pour(sink, randomBytes(16 * MiB), h);
    await sink.end();
    const cached = cachedBytes(path);
    if (typeof cached === 'string') skip(cached);
    // The last block may be cached by the truncate; the body's MiBs are not.
    expect(cached).toBeLessThan(MiB);
  });

  test('with FERRY_STORE_DIRECT_IO=0 a directory gets no direct writes', async () => {
    const off = join(dir, 'off');
    await mkdir(off);
    process.env.FERRY_STORE_DIRECT_IO = '0';
    try {
      expect(directIoWorks(off)).toBe(false);
    } finally {
      delete process.env.FERRY_STORE_DIRECT_IO;
    }
    expect(directIoWorks(dir)).toBe(true);
  });
});
