// A small ZIP of a few in-memory entries (a support bundle: logs and JSON, some
// MiB at most), deflated with node:zlib. Sizes and CRCs are known before each
// header, so there is no data descriptor and no ZIP64 (an entry or the archive
// over 4 GiB is refused). The service's streaming ZIP (src/hosted) is for
// Packages and lives on the other side of the layers.
import zlib from 'node:zlib';

export interface ZipInput {
  name: string;
  data: Buffer;
  mtime?: Date;
}

const UTF8_NAMES = 1 << 11;
const DEFLATE = 8;
const VERSION = 20;
const MAX32 = 0xffffffff;

/** DOS time and date, as ZIP headers carry them (local time, two-second steps). */
function dosTime(d: Date): { time: number; date: number } {
  const year = Math.max(1980, d.getFullYear());
  return {
    time: (d.getHours() << 11) | (d.getMinutes() << 5) | Math.floor(d.getSeconds() / 2),
    date: ((year - 1980) << 9) | ((d.getMonth() + 1) << 5) | d.getDate(),
  };
}

/** The archive of `entries`, in order. */
export function zipBuffers(entries: ZipInput[]): Buffer {
  const parts: Buffer[] = [];
  const central: Buffer[] = [];
  let offset = 0;
  for (const e of entries) {
    const name = Buffer.from(e.name, 'utf8');
    const packed = zlib.deflateRawSync(e.data);
    const crc = zlib.crc32(e.data);
    if (e.data.length > MAX32 || packed.length > MAX32 || offset > MAX32) throw new Error('a support bundle holds at most 4 GiB');
    const { time, date } = dosTime(e.mtime ?? new Date());
    const local = Buffer.alloc(30);
    local.writeUInt32LE(0x04034b50, 0);
    local.writeUInt16LE(VERSION, 4);
    local.writeUInt16LE(UTF8_NAMES, 6);
    local.writeUInt16LE(DEFLATE, 8);
    local.writeUInt16LE(time, 10);
    local.writeUInt16LE(date, 12);
    local.writeUInt32LE(crc, 14);
    local.writeUInt32LE(packed.length, 18);
    local.writeUInt32LE(e.data.length, 22);
    local.writeUInt16LE(name.length, 26);
    local.writeUInt16LE(0, 28);
    const head = Buffer.alloc(46);
    head.writeUInt32LE(0x02014b50, 0);
    head.writeUInt16LE((3 << 8) | VERSION, 4); // made by Unix
    head.writeUInt16LE(VERSION, 6);
    head.writeUInt16LE(UTF8_NAMES, 8);
    head.writeUInt16LE(DEFLATE, 10);
    head.writeUInt16LE(time, 12);
    head.writeUInt16LE(date, 14);
    head.writeUInt32LE(crc, 16);
    head.writeUInt32LE(packed.length, 20);
    head.writeUInt32LE(e.data.length, 24);
    head.writeUInt16LE(name.length, 28);
    head.writeUInt32LE((0o100600 << 16) >>> 0, 38); // a regular file, readable by its owner
    head.writeUInt32LE(offset, 42);
    central.push(head, name);
    parts.push(local, name, packed);
    offset += local.length + name.length + packed.length;
  }
  const dir = Buffer.concat(central);
  const end = Buffer.alloc(22);
  end.writeUInt32LE(0x06054b50, 0);
  end.writeUInt16LE(entries.length, 8);
  end.writeUInt16LE(entries.length, 10);
  end.writeUInt32LE(dir.length, 12);
  end.writeUInt32LE(offset, 16);
  return Buffer.concat([...parts, dir, end]);
}
