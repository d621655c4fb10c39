// A mockttp fault-injecting proxy in front of an object store: the hosted service
// signs its blueprints for the proxy, which passes requests through with their
// Host header as signed (so SigV4 still verifies), unless a fault rule added
// before the pass-through answers first. stop() closes the port (connections are
// refused); start() opens it again at the same address.
import { getLocal, type Mockttp } from 'mockttp';
export type { Mockttp };
import { startServiceBehindProxy, type Proxied } from './proxiedService.js';
import { stablePort } from './ports.js';

export interface SeenByProxy { method: string; path: string; at: number }

export interface FaultProxy {
  url: string;
  /** Every request that reached the proxy, across restarts. */
  seen: SeenByProxy[];
  /**
   * Drops every rule, adds those of `faults` (mockttp takes the first rule that
   * matches and is not used up), then the pass-through, each request of which
   * waits `delayMs` first.
   */
  rules(faults?: (s: Mockttp) => Promise<unknown>, delayMs?: number): Promise<void>;
  /** Closes the port: connections are refused. */
  stop(): Promise<void>;
  /** Opens the port again, passing everything through. */
  start(): Promise<void>;
  close(): Promise<void>;
}

export async function startFaultProxy(storeUrl: string): Promise<FaultProxy> {
  const targetHost = new URL(storeUrl).host;
  const seen: SeenByProxy[] = [];
  // Outside the ephemeral range: while it is stopped, nothing else can take its port.
  const port = await stablePort();
  let server: Mockttp | undefined;

  const open = async () => {
    const s = getLocal();
    await s.start(port);
    await s.on('request-initiated', (r) => seen.push({ method: r.method, path: r.path, at: Date.now() }));
    server = s;
    await proxy.rules();
  };

  const proxy: FaultProxy = {
    url: '',
    seen,
    async rules(faults, delayMs = 0) {
      const s = server!;
      await s.reset();
      await s.on('request-initiated', (r) => seen.push({ method: r.method, path: r.path, at: Date.now() }));
      await faults?.(s);
      const rule = s.forAnyRequest();
      await (delayMs > 0 ? rule.delay(delayMs) : rule).thenPassThrough({ transformRequest: { replaceHost: { targetHost, updateHostHeader: false } } });
    },
    async stop() {
      await server?.stop();
      server = undefined;
    },
    start: open,
    close: () => proxy.stop(),
  };
  await open();
  proxy.url = `http://127.0.0.1:${port}`;
  return proxy;
}

/** A hosted service whose store is reached through a fault proxy. */
export const startServiceBehindFaultProxy = (): Promise<Proxied<FaultProxy>> => startServiceBehindProxy(startFaultProxy);
