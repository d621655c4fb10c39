// The streamed ZIP writer: it reads its entries a page at a time as it sends
// them (never the whole list before the first byte), its measured length is the
// archive's, and a list that changes between its walks fails the stream instead
// of sending a wrong archive.
import { Readable } from 'node:stream';
import { expect, test } from 'vitest';
import { crc32, measureZip, streamZip, type EntryPages, type ZipEntry } from '../../../src/hosted/services/zipStream.js';
import { readZip } from '../../helpers/flow.js';

const PAGES = 50;
const PER_PAGE = 1000;

/** 50 pages of 1000 entries (a folder and files, one of 3 bytes in each page); counts the walks and the pages each pulled. */
function source(changeOnWalk?: number) {
  const pulled: number[] = [];
  const pages: EntryPages = () => {
    const walk = pulled.push(0) - 1;
    return (async function* () {
      for (let p = 0; p < PAGES; p++) {
        pulled[walk]!++;
        const page: ZipEntry[] = [{ name: `p${p}`, kind: 'directory', size: 0, mtime: new Date('2024-05-01T10:00:00Z'), key: null }];
        for (let i = 1; i < PER_PAGE; i++) {
          page.push({ name: `p${p}/f${i}`, kind: 'file', size: i === 1 ? 3 : 0, mtime: new Date('2024-05-01T10:00:00Z'), key: i === 1 ? `k${p}` : null });
        }
        if (walk === changeOnWalk && p === PAGES - 1) page.pop();
        yield page;
      }
    })();
  };
  return { pages, pulled };
}

const open = async (key: string) => Readable.from([Buffer.from(key.padEnd(3, '_').slice(0, 3))]);

test('sends the first bytes after reading a page or two of the second walk, and the whole archive is what it measured', async () => {
  const { pages, pulled } = source();
  const zip = await streamZip(pages, open);
  expect(pulled).toEqual([PAGES]);
  const chunks: Buffer[] = [];
  const it = zip.stream[Symbol.asyncIterator]();
  chunks.push((await it.next()).value as Buffer);
  expect(pulled).toHaveLength(2);
  expect(pulled[1]).toBeLessThanOrEqual(3);
  for (let r = await it.next(); !r.done; r = await it.next()) chunks.push(r.value as Buffer);
  const data = Buffer.concat(chunks);
  expect(data.length).toBe(zip.size);
  const entries = await readZip(data);
  expect(entries.size).toBe(PAGES * PER_PAGE);
  expect(entries.get('p7/f1')!.toString()).toBe('k7_');
  expect(entries.get('p7/')!.length).toBe(0);
});

test('fails the stream when the entries change between walks', async () => {
  const { pages } = source(2);
  const zip = await streamZip(pages, open);
  await expect(async () => {
    for await (const _ of zip.stream) void _;
  }).rejects.toThrow(/changed while its ZIP was being sent/);
});

test('measures ZIP64 records where an entry passes 4 GiB: its descriptor, its central extra field, and the end records', async () => {
  const GiB = 1024 ** 3;
  const entry = (name: string, size: number): ZipEntry => ({ name, kind: 'file', size, mtime: new Date('2024-05-01T10:00:00Z'), key: 'k' });
  const one = (e: ZipEntry[]): EntryPages => () => (async function* () { yield e; })();
  // Local header + name + bytes + descriptor (16, or 24 in ZIP64); central header + name + UT (9) (+ ZIP64 extra, 28); end (22).
  expect(await measureZip(one([entry('a', 10)]))).toBe(30 + 1 + 10 + 16 + 46 + 1 + 9 + 22);
  const big = 5 * GiB;
  // The big entry needs ZIP64 for its size; the one after it for its offset; the central directory's offset needs the ZIP64 end records.
  expect(await measureZip(one([entry('a', big), entry('b', 1)]))).toBe(30 + 1 + big + 24 + (30 + 1 + 1 + 24) + 2 * (46 + 1 + 9 + 28) + 56 + 20 + 22);
});

test('computes CRC-32 eight bytes a step, alike in one piece or several', () => {
  expect(crc32(0, Buffer.from('123456789')).toString(16)).toBe('cbf43926');
  const text = Buffer.from('The quick brown fox jumps over the lazy dog');
  expect(crc32(0, text).toString(16)).toBe('414fa339');
  for (const cut of [1, 7, 8, 9, 20]) expect(crc32(crc32(0, text.subarray(0, cut)), text.subarray(cut))).toBe(0x414fa339);
  expect(crc32(0, Buffer.alloc(0))).toBe(0);
});
