// A transfer's record (or a list of them) as an answer. The routes' response
// schemas are the spec's records, with `items`; neither of these answers goes
// through them: a summary is plain JSON, and a whole record is text made as it is
// sent (server/recordText.ts), a page of files at a time.
import { Readable } from 'node:stream';
import type { FastifyReply } from 'fastify';
import type { KeepRecord, RecordQuery, StreamedRecord } from '../../../api/agent/transfers.js';
import { RecordSpool, recordsText } from '../recordText.js';

const JSON_TYPE = 'application/json; charset=utf-8';

export const summaries = (reply: FastifyReply, value: unknown): FastifyReply =>
  reply.type(JSON_TYPE).serializer((v: unknown) => JSON.stringify(v)).send(value);

/** Whole records, one or a list, made as the client takes the text. */
export const records = (reply: FastifyReply, recs: StreamedRecord[], list: boolean): FastifyReply =>
  reply.type(JSON_TYPE).send(Readable.from(recordsText(recs, list), { objectMode: false }));

/**
 * Ferry's `?files=false` on every route that answers records: the spec's record of
 * each transfer, or its summary (a transfer of a million files has a record of a
 * hundred megabytes and more, which Ferry's own clients never need).
 */
export function recordsOrSummaries<S>(get: (id: string) => StreamedRecord, summary: (id: string) => S) {
  return {
    many: (reply: FastifyReply, q: RecordQuery, ids: string[]) => (q.files === false ? summaries(reply, ids.map(summary)) : records(reply, ids.map(get), true)),
    one: (reply: FastifyReply, q: RecordQuery, id: string) => (q.files === false ? summaries(reply, summary(id)) : records(reply, [get(id)], false)),
  };
}

/** A removal answered with the whole records: each written aside (RecordSpool) before its rows go, sent once `remove` is done. */
export async function removedRecords(reply: FastifyReply, list: boolean, remove: (keep: KeepRecord) => Promise<unknown>): Promise<FastifyReply> {
  const spool = new RecordSpool();
  try {
    await remove(spool.keep);
  } catch (err) {
    await spool.close();
    throw err;
  }
  const body = Readable.from(spool.read(list), { objectMode: false });
  body.once('close', () => void spool.close());
  return reply.type(JSON_TYPE).send(body);
}
