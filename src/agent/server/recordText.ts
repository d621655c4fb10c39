// The spec's whole record of a transfer (its summary and every file) as JSON text
// made as it is sent: a transfer of a million files has a record of some 200 MB,
// which built as objects took the agent past a gigabyte. Its files are read a page
// at a time as the client takes the text, so memory holds one page.
import { open, unlink, type FileHandle } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { randomBytes } from 'node:crypto';
import type { StreamedRecord } from '../../api/agent/transfers.js';

/** The text of one record, or of a list (`[...]`) of them, in pieces of about a page each. */
export function* recordsText(records: Iterable<StreamedRecord>, list: boolean): Generator<string> {
  if (list) yield '[';
  let n = 0;
  for (const r of records) {
    const head = JSON.stringify(r.summary);
    yield `${n++ > 0 ? ',' : ''}${head.slice(0, -1)},"items":[`;
    let any = false;
    for (const page of r.items) {
      if (page.length === 0) continue;
      // The spec's items have no `index` (Ferry's place of a file in its pages).
      const text = JSON.stringify(page.map(({ index: _, ...item }) => item));
      yield `${any ? ',' : ''}${text.slice(1, -1)}`;
      any = true;
    }
    yield ']}';
  }
  if (list) yield ']';
}

const SPOOL_WRITE = 1 << 20;

/**
 * Records written aside while their transfers are removed (DELETE answers what it
 * removed, and the rows are gone once it answers): a file in the temporary folder,
 * unlinked as soon as it is made, read back once as the answer.
 */
export class RecordSpool {
  private file?: Promise<{ fh: FileHandle; path: string }>;
  private count = 0;

  /** Writes this record (read now, a page at a time) after those before. */
  readonly keep = async (record: StreamedRecord): Promise<void> => {
    const { fh } = await (this.file ??= openUnlinked());
    let buf = this.count++ > 0 ? ',' : '';
    for (const piece of recordsText([record], false)) {
      buf += piece;
      if (buf.length >= SPOOL_WRITE) {
        await fh.write(buf);
        buf = '';
      }
    }
    if (buf) await fh.write(buf);
  };

  /** The records kept, as one record or a list; the file closes when it has been read (or the read is dropped). */
  async *read(list: boolean): AsyncGenerator<string | Buffer> {
    const pending = this.file;
    this.file = undefined;
    const file = await pending;
    try {
      if (list) yield '[';
      if (file) for await (const chunk of file.fh.createReadStream({ start: 0, autoClose: false })) yield chunk as Buffer;
      if (list) yield ']';
    } finally {
      await closeAndUnlink(file);
    }
  }

  /** Drops what was kept and not read (the removal failed, or the answer was dropped before its first byte). */
  async close(): Promise<void> {
    const pending = this.file;
    this.file = undefined;
    await closeAndUnlink(await pending?.catch(() => undefined));
  }
}

async function openUnlinked(): Promise<{ fh: FileHandle; path: string }> {
  const file = path.join(os.tmpdir(), `ferry-record-${process.pid}-${randomBytes(6).toString('hex')}.json`);
  const fh = await open(file, 'wx+', 0o600);
  // Gone from the folder at once where the system allows it (the bytes stay while the handle is open): a crash leaves nothing behind.
  await unlink(file).catch(() => undefined);
  return { fh, path: file };
}

async function closeAndUnlink(file: { fh: FileHandle; path: string } | undefined): Promise<void> {
  if (!file) return;
  await file.fh.close();
  // Windows keeps an open file's name: it goes now.
  await unlink(file.path).catch(() => undefined);
}
