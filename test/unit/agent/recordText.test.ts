// A whole record as text made as it is sent (agent/server/recordText.ts): the
// text of records read a page at a time parses to the record they make, pages
// are read only as the text is taken, and records written aside for a removal
// read back once from a file that no folder shows.
import fs from 'node:fs';
import os from 'node:os';
import { describe, expect, test } from 'vitest';
import { RecordSpool, recordsText } from '../../../src/agent/server/recordText.js';
import type { StreamedRecord } from '../../../src/api/agent/transfers.js';

const summary = (id: string) => ({ upload_id: id, name: `name "${id}"`, file_count: 3 }) as unknown as StreamedRecord['summary'];
const item = (p: string) => ({ path: p, local_path: `/src/${p}`, size: 1, progress: 1, state: 'complete' as const });

/** A record whose pages (of files with their `index`, as the views give them) note when each is read. */
function record(id: string, pages: string[][], read: number[] = []): StreamedRecord {
  let index = 0;
  return {
    summary: summary(id),
    items: (function* () {
      for (const [i, page] of pages.entries()) {
        read.push(i);
        yield page.map((p) => ({ index: index++, ...item(p) }));
      }
    })(),
  };
}

const text = (pieces: Iterable<string>) => [...pieces].join('');

describe('recordsText', () => {
  test('one record: its summary and the items of every page without their index, empty pages skipped', () => {
    expect(JSON.parse(text(recordsText([record('u1', [['a', 'b'], [], ['c']])], false)))).toEqual({ ...summary('u1'), items: ['a', 'b', 'c'].map(item) });
  });

  test('a record of no files has an empty list', () => {
    expect(JSON.parse(text(recordsText([record('u1', [[]])], false)))).toEqual({ ...summary('u1'), items: [] });
  });

  test('a list of records, and an empty list', () => {
    expect(JSON.parse(text(recordsText([record('u1', [['a']]), record('u2', [['b'], ['c']])], true)))).toEqual([
      { ...summary('u1'), items: [item('a')] },
      { ...summary('u2'), items: [item('b'), item('c')] },
    ]);
    expect(JSON.parse(text(recordsText([], true)))).toEqual([]);
  });

  test('a page is read only when the text reaches it', () => {
    const read: number[] = [];
    const pieces = recordsText([record('u1', [['a'], ['b'], ['c']], read)], false);
    pieces.next(); // the summary
    expect(read).toEqual([]);
    pieces.next();
    expect(read).toEqual([0]);
    pieces.next();
    expect(read).toEqual([0, 1]);
  });
});

async function readAll(pieces: AsyncIterable<string | Buffer>): Promise<string> {
  let out = '';
  for await (const p of pieces) out += p.toString();
  return out;
}

const spoolFiles = () => fs.readdirSync(os.tmpdir()).filter((f) => f.startsWith(`ferry-record-${process.pid}-`));

describe('RecordSpool', () => {
  test('records kept one after another read back once as a list, from a file no folder shows', async () => {
    const spool = new RecordSpool();
    await spool.keep(record('u1', [['a'], ['b']]));
    await spool.keep(record('u2', [['c']]));
    expect(spoolFiles()).toEqual([]);
    expect(JSON.parse(await readAll(spool.read(true)))).toEqual([
      { ...summary('u1'), items: [item('a'), item('b')] },
      { ...summary('u2'), items: [item('c')] },
    ]);
    // Read once: a second read has nothing kept.
    expect(await readAll(spool.read(true))).toBe('[]');
  });

  test('one record reads back as that record; a spool that kept none reads as an empty list', async () => {
    const one = new RecordSpool();
    await one.keep(record('u1', [['a']]));
    expect(JSON.parse(await readAll(one.read(false)))).toEqual({ ...summary('u1'), items: [item('a')] });
    expect(await readAll(new RecordSpool().read(true))).toBe('[]');
  });

  test('a record larger than one write reads back whole', async () => {
    const spool = new RecordSpool();
    const pages = Array.from({ length: 40 }, (_, p) => Array.from({ length: 500 }, (_, i) => `folder-${p}/file-${i}.bin`));
    await spool.keep(record('big', pages));
    const back = JSON.parse(await readAll(spool.read(false)));
    expect(back.items).toHaveLength(20_000);
    expect(back.items.at(-1)).toEqual(item('folder-39/file-499.bin'));
  });

  test('close() drops what was kept and not read; reading after it finds nothing', async () => {
    const spool = new RecordSpool();
    await spool.keep(record('u1', [['a']]));
    await spool.close();
    expect(await readAll(spool.read(true))).toBe('[]');
    expect(spoolFiles()).toEqual([]);
  });
});
