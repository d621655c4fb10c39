// JSON bodies for Fastify servers: an empty body counts as absent (routes like
// finalize take none), and malformed JSON becomes the server's own 400 error.
import type { FastifyInstance } from 'fastify';

export function acceptJsonBodies(app: FastifyInstance<any, any, any, any, any>, malformed: () => Error): void {
  app.removeContentTypeParser('application/json');
  app.addContentTypeParser('application/json', { parseAs: 'string' }, (_req: unknown, body: string | Buffer, done: (err: Error | null, value?: unknown) => void) => {
    const text = body.toString().trim();
    if (text === '') return done(null, undefined);
    try {
      done(null, JSON.parse(text));
    } catch {
      done(malformed(), undefined);
    }
  });
}
