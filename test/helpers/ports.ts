// Loopback ports for servers that a test stops and starts again at the same address.
import fs from 'node:fs';
import net from 'node:net';

const canListen = (port: number) =>
  new Promise<boolean>((resolve) => {
    const srv = net.createServer();
    srv.once('error', () => resolve(false));
    srv.listen({ port, host: '127.0.0.1', exclusive: true }, () => srv.close(() => resolve(true)));
  });

/** A port nothing listens on: bound, then released. */
export async function freePort(): Promise<number> {
  const srv = net.createServer();
  await new Promise<void>((r) => srv.listen(0, '127.0.0.1', r));
  const port = (srv.address() as net.AddressInfo).port;
  await new Promise<void>((r) => srv.close(() => r()));
  return port;
}

/**
 * A free port below the kernel's ephemeral range, which listen(0) and outgoing
 * connections never take: while a test keeps its server down for minutes (an
 * outage), no other test's server can be handed the port and answer in its place.
 */
export async function stablePort(): Promise<number> {
  const low = Number(fs.readFileSync('/proc/sys/net/ipv4/ip_local_port_range', 'utf8').trim().split(/\s+/)[0]) || 32768;
  const from = Math.max(1024, low - 12_000);
  for (let i = 0; i < 200; i++) {
    const port = from + Math.floor(Math.random() * (low - from));
    if (await canListen(port)) return port;
  }
  throw new Error(`no free port between ${from} and ${low}`);
}
