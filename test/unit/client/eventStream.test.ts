// The client's reader of the service's Server-Sent Events (src/client/events.ts)
// against a plain local HTTP server: messages split across writes, comments and
// `retry:` skipped, Last-Event-ID sent, a refusal thrown as HostedApiError, and a
// stream that falls silent given up so that its caller reconnects.
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, expect, test } from 'vitest';
import { readEventStream, type StreamMessage } from '../../../src/client/events.js';
import { HostedApiError } from '../../../src/client/http.js';

let server: http.Server | undefined;
afterEach(async () => {
  server?.closeAllConnections();
  await new Promise((ok) => server?.close(ok) ?? ok(undefined));
  server = undefined;
});

async function serve(handler: http.RequestListener): Promise<string> {
  server = http.createServer(handler);
  await new Promise<void>((ok) => server!.listen(0, '127.0.0.1', ok));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

test('messages come whole however the bytes are cut; comments and retry lines are not messages; Last-Event-ID is sent', async () => {
  let seenId: string | undefined;
  const url = await serve((req, res) => {
    seenId = req.headers['last-event-id'] as string | undefined;
    res.writeHead(200, { 'content-type': 'text/event-stream' });
    const body = 'retry: 3000\n\n: ping\n\nid: 7\nevent: package.finalized\ndata: {"a":1}\n\nid: 8\nevent: reset\ndata: {"b":\ndata: 2}\n\n';
    // One byte a write: every boundary is a cut somewhere.
    let i = 0;
    const next = () => (i < body.length ? res.write(body[i++], next) : res.end());
    next();
  });
  const got: StreamMessage[] = [];
  await readEventStream(url, '/events', { auth: { apiKey: 'k' }, lastEventId: '6', signal: new AbortController().signal }, (m) => got.push(m));
  expect(seenId).toBe('6');
  expect(got).toEqual([
    { id: '7', event: 'package.finalized', data: '{"a":1}' },
    { id: '8', event: 'reset', data: '{"b":\n2}' },
  ]);
});

test('a refusal is a HostedApiError with the status and code; a 200 that is no stream is one too', async () => {
  const url = await serve((req, res) => {
    if (req.url === '/gone') {
      res.writeHead(404, { 'content-type': 'application/json' });
      return res.end(JSON.stringify({ code: 'not_found', message: 'no route GET /gone' }));
    }
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end('{}');
  });
  const opts = { auth: {}, signal: new AbortController().signal };
  const refused = await readEventStream(url, '/gone', opts, () => undefined).catch((e: unknown) => e);
  expect(refused).toBeInstanceOf(HostedApiError);
  expect(refused).toMatchObject({ status: 404, code: 'not_found' });
  await expect(readEventStream(url, '/json', opts, () => undefined)).rejects.toBeInstanceOf(HostedApiError);
});

test('a stream silent for longer than stallMs ends (the caller reconnects); the caller\'s own abort rejects', async () => {
  const url = await serve((_req, res) => {
    res.writeHead(200, { 'content-type': 'text/event-stream' });
    res.write(': hello\n\n');
  });
  let opened = false;
  await readEventStream(url, '/quiet', { auth: {}, signal: new AbortController().signal, stallMs: 200, onOpen: () => (opened = true) }, () => undefined);
  expect(opened).toBe(true);
  const mine = new AbortController();
  const reading = readEventStream(url, '/quiet', { auth: {}, signal: mine.signal }, () => undefined);
  setTimeout(() => mine.abort(), 50);
  await expect(reading).rejects.toThrow();
});
