// A webhook receiver for tests: a real HTTP server on 127.0.0.1 that records
// every request and answers each with the status `answer` gives for it.
import http from 'node:http';
import type { AddressInfo } from 'node:net';

export interface Received {
  method: string;
  url: string;
  headers: http.IncomingHttpHeaders;
  body: any;
}

/** The status for the n-th request (1-based), possibly later; 0 never answers. */
export type Answer = (n: number, req: Received) => number | Promise<number>;

export interface Receiver {
  url: string;
  requests: Received[];
  /** Changes the answers from now on. */
  answer: Answer;
  close(): Promise<void>;
}

/** `answer(n, req)` gives the status of the n-th request; 200 by default. */
export async function startReceiver(answer: Answer = () => 200): Promise<Receiver> {
  const requests: Received[] = [];
  const receiver = { requests, answer } as Receiver;
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', async () => {
      const text = Buffer.concat(chunks).toString('utf8');
      let body: any = text;
      try {
        body = JSON.parse(text);
      } catch {
        // recorded as text
      }
      const r: Received = { method: req.method!, url: req.url!, headers: req.headers, body };
      requests.push(r);
      const status = await receiver.answer(requests.length, r);
      if (status !== 0) res.writeHead(status, { 'content-type': 'text/plain' }).end('noted');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  receiver.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`;
  receiver.close = async () => {
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  };
  return receiver;
}
