// A ZIP of any number of entries, written as it streams: its entries come in
// pages (zip.ts reads them from the database), and the archive is made in three
// walks over them, never holding the list: one to measure it (the answer's
// Content-Length), one to send each header and file, one for the central
// directory. Only 8 bytes per entry stay in memory (its CRC-32 and a check that
// the third walk meets the entries the second sent). Entries are STORED (media
// does not compress, and stored sizes make the length exact); ZIP64 records come
// in where a size, an offset or the entry count passes what 32 or 16 bits hold.
// The layout is yazl's: local headers with a data descriptor, Info-ZIP's UT time.
import { Readable } from 'node:stream';

export interface ZipEntry {
  name: string;
  kind: 'file' | 'directory';
  size: number;
  mtime: Date;
  key: string | null;
}

/** The archive's entries in order, in pages; each call walks them again from the first. */
export type EntryPages = () => AsyncIterable<ZipEntry[]>;

export interface ZipStream {
  stream: Readable;
  /** Exact byte length of the archive. */
  size: number;
  /** Stops reading from storage (the client went away). */
  abort(): void;
}

const LOCAL_HEADER = 30;
const DESCRIPTOR = 16;
const DESCRIPTOR_64 = 24;
const CENTRAL_HEADER = 46;
const UT_EXTRA = 9;
const ZIP64_EXTRA = 28;
const END = 22;
const END_64 = 56;
const LOCATOR_64 = 20;
const UTF8_NAMES = 1 << 11;
const DATA_DESCRIPTOR = 1 << 3;
const VERSION_UTF8 = 20;
const VERSION_ZIP64 = 45;
const MADE_BY_UNIX = (3 << 8) | 63;
const MAX16 = 0xffff;
const MAX32 = 0xffffffff;
/** Central directory records are sent in pieces of about this size, not one write each. */
const BATCH = 64 * 1024;

/** CRC-32 tables for eight bytes a step ("slicing by 8"): table k is the CRC of a byte followed by k zero bytes. */
const CRC_TABLES = (() => {
  const t = new Uint32Array(8 * 256);
  for (let n = 0; n < 256; n++) {
    let c = n;
    for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
    t[n] = c >>> 0;
  }
  for (let k = 1; k < 8; k++) {
    for (let n = 0; n < 256; n++) {
      const prev = t[(k - 1) * 256 + n]!;
      t[k * 256 + n] = (prev >>> 8) ^ t[prev & 0xff]!;
    }
  }
  return t;
})();

/** The CRC-32 of `buf` continuing `crc` (0 to start): eight bytes a step, the ZIP's one pass over every byte it sends. */
export function crc32(crc: number, buf: Uint8Array): number {
  const t = CRC_TABLES;
  let c = ~crc >>> 0;
  let i = 0;
  for (const end = buf.length - 7; i < end; i += 8) {
    const a = (c ^ (buf[i]! | (buf[i + 1]! << 8) | (buf[i + 2]! << 16) | (buf[i + 3]! << 24))) >>> 0;
    const b = buf[i + 4]! | (buf[i + 5]! << 8) | (buf[i + 6]! << 16) | (buf[i + 7]! << 24);
    c =
      t[1792 + (a & 0xff)]! ^ t[1536 + ((a >>> 8) & 0xff)]! ^ t[1280 + ((a >>> 16) & 0xff)]! ^ t[1024 + (a >>> 24)]! ^
      t[768 + (b & 0xff)]! ^ t[512 + ((b >>> 8) & 0xff)]! ^ t[256 + ((b >>> 16) & 0xff)]! ^ t[(b >>> 24) & 0xff]!;
  }
  for (; i < buf.length; i++) c = t[(c ^ buf[i]!) & 0xff]! ^ (c >>> 8);
  return ~c >>> 0;
}

/** A cheap fingerprint of an entry (its name and size), to catch a list that changed between walks. */
function fingerprint(name: Buffer, size: number): number {
  return (crc32(size >>> 0, name) ^ Math.floor(size / 0x100000000)) >>> 0;
}

interface Placed {
  name: Buffer;
  dir: boolean;
  size: number;
  offset: number;
  /** yazl's rule: a size or an offset past 0xfffffffe. */
  zip64: boolean;
  mtime: Date;
  key: string | null;
}

/** Walks the entries, placing each: where its local header starts, and whether it needs ZIP64. */
async function* placed(pages: EntryPages): AsyncGenerator<Placed> {
  let offset = 0;
  for await (const page of pages()) {
    for (const e of page) {
      const dir = e.kind === 'directory';
      const name = Buffer.from(dir ? `${e.name}/` : e.name, 'utf8');
      if (name.length > MAX16) throw new Error(`an entry's name is ${name.length} bytes; a ZIP holds at most ${MAX16}`);
      const size = dir ? 0 : e.size;
      const zip64 = size > MAX32 - 1 || offset > MAX32 - 1;
      yield { name, dir, size, offset, zip64, mtime: e.mtime, key: e.key };
      offset += localLength(name.length, size, zip64, dir);
    }
  }
}

const localLength = (nameLength: number, size: number, zip64: boolean, dir: boolean) =>
  LOCAL_HEADER + nameLength + (dir ? 0 : size + (zip64 ? DESCRIPTOR_64 : DESCRIPTOR));
const centralLength = (p: Placed) => CENTRAL_HEADER + p.name.length + UT_EXTRA + (p.zip64 ? ZIP64_EXTRA : 0);
const needsEnd64 = (count: number, centralSize: number, centralOffset: number) => count >= MAX16 || centralSize >= MAX32 || centralOffset >= MAX32;

/** The archive's byte length, read from one walk over its entries. */
export async function measureZip(pages: EntryPages): Promise<number> {
  let end = 0;
  let central = 0;
  let count = 0;
  for await (const p of placed(pages)) {
    end = p.offset + localLength(p.name.length, p.size, p.zip64, p.dir);
    central += centralLength(p);
    count++;
  }
  return end + central + (needsEnd64(count, central, end) ? END_64 + LOCATOR_64 : 0) + END;
}

function writeUInt64(b: Buffer, n: number, at: number): void {
  b.writeUInt32LE(n % 0x100000000, at);
  b.writeUInt32LE(Math.floor(n / 0x100000000), at + 4);
}

/** MS-DOS date and time, in the server's time zone as yazl writes them. */
function dosTime(d: Date): { date: number; time: number } {
  const min = new Date(1980, 0, 1);
  const max = new Date(2107, 11, 31, 23, 59, 58);
  const t = d < min ? min : d > max ? max : d;
  return {
    date: (t.getDate() & 0x1f) | (((t.getMonth() + 1) & 0xf) << 5) | (((t.getFullYear() - 1980) & 0x7f) << 9),
    time: Math.floor(t.getSeconds() / 2) | ((t.getMinutes() & 0x3f) << 5) | ((t.getHours() & 0x1f) << 11),
  };
}

function localHeader(p: Placed): Buffer {
  const b = Buffer.alloc(LOCAL_HEADER + p.name.length);
  const { date, time } = dosTime(p.mtime);
  b.writeUInt32LE(0x04034b50, 0);
  b.writeUInt16LE(VERSION_UTF8, 4);
  b.writeUInt16LE(p.dir ? UTF8_NAMES : UTF8_NAMES | DATA_DESCRIPTOR, 6);
  // Method 0 (stored); CRC and sizes follow in the data descriptor (zeros for a folder).
  b.writeUInt16LE(time, 10);
  b.writeUInt16LE(date, 12);
  b.writeUInt16LE(p.name.length, 26);
  p.name.copy(b, LOCAL_HEADER);
  return b;
}

function descriptor(p: Placed, crc: number): Buffer {
  const b = Buffer.alloc(p.zip64 ? DESCRIPTOR_64 : DESCRIPTOR);
  b.writeUInt32LE(0x08074b50, 0);
  b.writeUInt32LE(crc, 4);
  if (p.zip64) {
    writeUInt64(b, p.size, 8);
    writeUInt64(b, p.size, 16);
  } else {
    b.writeUInt32LE(p.size, 8);
    b.writeUInt32LE(p.size, 12);
  }
  return b;
}

function centralHeader(p: Placed, crc: number): Buffer {
  const b = Buffer.alloc(centralLength(p));
  const { date, time } = dosTime(p.mtime);
  b.writeUInt32LE(0x02014b50, 0);
  b.writeUInt16LE(MADE_BY_UNIX, 4);
  b.writeUInt16LE(p.zip64 ? VERSION_ZIP64 : VERSION_UTF8, 6);
  b.writeUInt16LE(p.dir ? UTF8_NAMES : UTF8_NAMES | DATA_DESCRIPTOR, 8);
  b.writeUInt16LE(time, 12);
  b.writeUInt16LE(date, 14);
  b.writeUInt32LE(crc, 16);
  b.writeUInt32LE(p.zip64 ? MAX32 : p.size, 20);
  b.writeUInt32LE(p.zip64 ? MAX32 : p.size, 24);
  b.writeUInt16LE(p.name.length, 28);
  b.writeUInt16LE(UT_EXTRA + (p.zip64 ? ZIP64_EXTRA : 0), 30);
  b.writeUInt32LE(((p.dir ? 0o40755 : 0o100644) << 16) >>> 0, 38);
  b.writeUInt32LE(p.zip64 ? MAX32 : p.offset, 42);
  let at = CENTRAL_HEADER;
  p.name.copy(b, at);
  at += p.name.length;
  // Info-ZIP's UT field: the modification time in Unix seconds (flags say mtime and atime, as Info-ZIP does).
  b.writeUInt16LE(0x5455, at);
  b.writeUInt16LE(UT_EXTRA - 4, at + 2);
  b.writeUInt8(3, at + 4);
  b.writeInt32LE(Math.max(-0x80000000, Math.min(0x7fffffff, Math.floor(p.mtime.getTime() / 1000))), at + 5);
  at += UT_EXTRA;
  if (p.zip64) {
    b.writeUInt16LE(0x0001, at);
    b.writeUInt16LE(ZIP64_EXTRA - 4, at + 2);
    writeUInt64(b, p.size, at + 4);
    writeUInt64(b, p.size, at + 12);
    writeUInt64(b, p.offset, at + 20);
  }
  return b;
}

function endRecords(count: number, centralSize: number, centralOffset: number): Buffer {
  const parts: Buffer[] = [];
  const zip64 = needsEnd64(count, centralSize, centralOffset);
  if (zip64) {
    const r = Buffer.alloc(END_64);
    r.writeUInt32LE(0x06064b50, 0);
    writeUInt64(r, END_64 - 12, 4);
    r.writeUInt16LE(MADE_BY_UNIX, 12);
    r.writeUInt16LE(VERSION_ZIP64, 14);
    writeUInt64(r, count, 24);
    writeUInt64(r, count, 32);
    writeUInt64(r, centralSize, 40);
    writeUInt64(r, centralOffset, 48);
    const l = Buffer.alloc(LOCATOR_64);
    l.writeUInt32LE(0x07064b50, 0);
    writeUInt64(l, centralOffset + centralSize, 8);
    l.writeUInt32LE(1, 16);
    parts.push(r, l);
  }
  const e = Buffer.alloc(END);
  e.writeUInt32LE(0x06054b50, 0);
  e.writeUInt16LE(zip64 && count >= MAX16 ? MAX16 : count, 8);
  e.writeUInt16LE(zip64 && count >= MAX16 ? MAX16 : count, 10);
  e.writeUInt32LE(zip64 && centralSize >= MAX32 ? MAX32 : centralSize, 12);
  e.writeUInt32LE(zip64 && centralOffset >= MAX32 ? MAX32 : centralOffset, 16);
  parts.push(e);
  return Buffer.concat(parts);
}

/** A growable array of 32-bit values, one per entry. */
class Column {
  private data = new Uint32Array(1024);
  length = 0;
  push(v: number): void {
    if (this.length === this.data.length) {
      const bigger = new Uint32Array(this.data.length * 2);
      bigger.set(this.data);
      this.data = bigger;
    }
    this.data[this.length++] = v;
  }
  at(i: number): number {
    return this.data[i]!;
  }
}

/**
 * The archive of `pages`, each file's bytes read through `open(key)` one file at a
 * time. Measures it first (one walk); the stream errors (and stops) when the entries
 * change between walks or a stored object's length is not its entry's size.
 */
export async function streamZip(pages: EntryPages, open: (key: string) => Promise<Readable>): Promise<ZipStream> {
  const size = await measureZip(pages);
  let current: Readable | undefined;
  let aborted = false;
  const crcs = new Column();
  const prints = new Column();

  async function* archive(): AsyncGenerator<Buffer> {
    let written = 0;
    const emit = (b: Buffer) => ((written += b.length), b);
    // The entries: header, bytes, descriptor.
    for await (const p of placed(pages)) {
      yield emit(localHeader(p));
      let crc = 0;
      if (!p.dir && p.size > 0) {
        if (!p.key) throw new Error(`entry ${p.name.toString()} has no stored object`);
        current = await open(p.key);
        if (aborted) return void current.destroy();
        let got = 0;
        for await (const chunk of current as AsyncIterable<Buffer>) {
          crc = crc32(crc, chunk);
          got += chunk.length;
          if (got > p.size) break;
          yield emit(chunk);
        }
        current = undefined;
        if (aborted) return;
        if (got !== p.size) throw new Error(`the stored object of ${p.name.toString()} is not the ${p.size} bytes its entry says`);
      }
      if (!p.dir) yield emit(descriptor(p, crc));
      crcs.push(crc);
      prints.push(fingerprint(p.name, p.size));
    }
    // The central directory, from a third walk checked against the second.
    const centralOffset = written;
    let n = 0;
    let batch: Buffer[] = [];
    let batched = 0;
    for await (const p of placed(pages)) {
      if (n >= crcs.length || prints.at(n) !== fingerprint(p.name, p.size)) throw new Error('the Package\'s files changed while its ZIP was being sent');
      const b = centralHeader(p, crcs.at(n++));
      batch.push(b);
      batched += b.length;
      if (batched >= BATCH) {
        yield emit(Buffer.concat(batch));
        batch = [];
        batched = 0;
      }
    }
    if (n !== crcs.length) throw new Error('the Package\'s files changed while its ZIP was being sent');
    if (batch.length) yield emit(Buffer.concat(batch));
    yield emit(endRecords(n, written - centralOffset, centralOffset));
    if (written !== size) throw new Error(`the ZIP came to ${written} bytes, not the ${size} measured`);
  }

  const stream = Readable.from(archive(), { objectMode: false, highWaterMark: BATCH });
  return {
    stream,
    size,
    abort() {
      aborted = true;
      current?.destroy();
      stream.destroy();
    },
  };
}
