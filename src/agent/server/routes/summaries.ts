// A transfer's summary (or a list of them) as an answer: the route's response
// schema is the spec's record, with `items`, so the summary is sent as plain JSON.
import type { FastifyReply } from 'fastify';

export const summaries = (reply: FastifyReply, value: unknown): FastifyReply => reply.serializer((v: unknown) => JSON.stringify(v)).send(value);
