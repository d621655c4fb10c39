// A transfer's summary (or a list of them) as an answer: the route's response
// schema is the spec's record, with `items`, so the summary is sent as plain JSON.
import type { FastifyReply } from 'fastify';
import type { RecordQuery } from '../../../api/agent/transfers.js';

export const summaries = (reply: FastifyReply, value: unknown): FastifyReply =>
  reply.type('application/json; charset=utf-8').serializer((v: unknown) => JSON.stringify(v)).send(value);

/**
 * Ferry's `?files=false` on every route that answers records: the spec's record of
 * each transfer, or its summary (a transfer of a million files has a record of a
 * hundred megabytes, which Ferry's own clients never need).
 */
export function recordsOrSummaries<R, S>(get: (id: string) => R, summary: (id: string) => S) {
  return {
    many: (reply: FastifyReply, q: RecordQuery, ids: string[]) => (q.files === false ? summaries(reply, ids.map(summary)) : ids.map(get)),
    one: (reply: FastifyReply, q: RecordQuery, id: string) => (q.files === false ? summaries(reply, summary(id)) : get(id)),
  };
}
