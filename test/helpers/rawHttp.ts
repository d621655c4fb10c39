// Raw HTTP/1.1 "stores" over net: each test decides exactly what is sent and when.
import net from 'node:net';

export interface Served {
  url: URL;
  connections: () => number;
  close(): Promise<void>;
}

/** A server that answers every request on a connection with `answer(socket, n, request)` (n counts requests on it). */
export async function serveRaw(answer: (socket: net.Socket, n: number, request: string) => void): Promise<Served> {
  let connections = 0;
  const sockets = new Set<net.Socket>();
  const server = net.createServer((socket) => {
    connections++;
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
    socket.on('error', () => undefined);
    let buf = '';
    let n = 0;
    socket.on('data', (d) => {
      buf += d.toString('latin1');
      while (buf.includes('\r\n\r\n')) {
        const request = buf.slice(0, buf.indexOf('\r\n\r\n'));
        buf = buf.slice(buf.indexOf('\r\n\r\n') + 4);
        answer(socket, n++, request);
      }
    });
  });
  await new Promise<void>((ok) => server.listen(0, '127.0.0.1', ok));
  return {
    url: new URL(`http://127.0.0.1:${(server.address() as net.AddressInfo).port}/bucket/key?x=1`),
    connections: () => connections,
    close: () =>
      new Promise<void>((ok) => {
        for (const s of sockets) s.destroy();
        server.close(() => ok());
      }),
  };
}
