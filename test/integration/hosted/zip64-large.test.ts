// A ZIP past 4 GiB, as the Package ZIP writes it (zipStream.ts): a file larger
// than 4 GiB (ZIP64 sizes in its descriptor and central record) and a file after
// it (a ZIP64 offset), then the ZIP64 end records, read back by Python's zipfile
// with every CRC checked. The bytes come from a generator, not the store: the
// archive's format is the subject. Heavy (4 GiB through the CRC and onto disk).
import { execFileSync } from 'node:child_process';
import { createWriteStream } from 'node:fs';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { afterAll, expect, test } from 'vitest';
import { streamZip, type ZipEntry } from '../../../src/hosted/services/zipStream.js';

const MiB = 1024 * 1024;
const BIG = 4 * 1024 * MiB + 12_345;
let dir: string | undefined;
afterAll(async () => {
  if (dir) await fs.rm(dir, { recursive: true, force: true });
});

/** `size` bytes of a repeating pattern, a MiB at a time. */
function pattern(size: number): Readable {
  const chunk = Buffer.alloc(MiB, 0);
  for (let i = 0; i < MiB; i++) chunk[i] = (i * 31 + 7) & 0xff;
  return Readable.from((function* () {
    for (let sent = 0; sent < size; sent += MiB) yield sent + MiB <= size ? chunk : chunk.subarray(0, size - sent);
  })());
}

const PY = `
import sys, zipfile
z = zipfile.ZipFile(sys.argv[1])
for i in z.infolist():
    with z.open(i) as f:
        n = 0
        while True:
            b = f.read(8 << 20)
            if not b: break
            n += len(b)
    print(i.filename, i.file_size, n, i.header_offset)
`;

test('writes a file past 4 GiB and one after it in ZIP64, and Python reads both with their CRCs', async () => {
  dir = await fs.mkdtemp(path.join(os.tmpdir(), 'ferry-zip64-'));
  const file = path.join(dir, 'big.zip');
  const mtime = new Date('2024-05-01T10:00:00Z');
  const entries: ZipEntry[] = [
    { name: 'a.txt', kind: 'file', size: 1000, mtime, key: 'a' },
    { name: 'media/big.mov', kind: 'file', size: BIG, mtime, key: 'big' },
    { name: 'z.txt', kind: 'file', size: 1000, mtime, key: 'z' },
  ];
  const zip = await streamZip(() => (async function* () { yield entries; })(), async (key) => pattern(key === 'big' ? BIG : 1000));
  await pipeline(zip.stream, createWriteStream(file));
  expect((await fs.stat(file)).size).toBe(zip.size);
  const lines = execFileSync('python3', ['-c', PY, file], { encoding: 'utf8' }).trim().split('\n').map((l) => l.split(' '));
  expect(lines.map(([name, size, read]) => [name, Number(size), Number(read)])).toEqual([
    ['a.txt', 1000, 1000],
    ['media/big.mov', BIG, BIG],
    ['z.txt', 1000, 1000],
  ]);
  // The last entry starts past 4 GiB: its offset is in the ZIP64 extra field.
  expect(Number(lines[2]![3])).toBeGreaterThan(0xffffffff);
}, 300_000);
