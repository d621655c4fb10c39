// The desktop app: requests and events through the preload's window.ferry
// (Electron IPC to main, which relays them to the agent's process).
import type { Answer, Channel, EventName, EventOf, RequestOf, ResponseOf } from '../../src/ipc/contract.js';
import type { Connection, Transport } from './types.js';

export interface FerryBridge {
  invoke(channel: string, request: unknown): Promise<unknown>;
  on(event: string, listener: (payload: unknown) => void): () => void;
  pathForFile(file: File): string;
  restartToUpdate(): Promise<unknown>;
  desktop(channel: string, request?: unknown): Promise<unknown>;
}

export function electronTransport(bridge: FerryBridge): Transport {
  let connection: Connection = 'connecting';
  const watchers = new Set<(c: Connection) => void>();
  let sync: (() => Promise<number>) | undefined;
  const resync = async () => {
    // A snapshot after each (re)connection; events keep flowing meanwhile and apply above its cursor.
    for (let wait = 500; sync; wait = Math.min(wait * 2, 5000)) {
      try {
        await sync();
        return;
      } catch {
        await new Promise((r) => setTimeout(r, wait));
      }
    }
  };
  bridge.on('agent.connection', (state) => {
    connection = state as Connection;
    for (const w of watchers) w(connection);
    if (connection === 'connected') void resync();
  });
  return {
    pathOf: (file) => bridge.pathForFile(file) || undefined,
    desktop: <T,>(channel: string, request?: unknown) => bridge.desktop(channel, request) as Promise<Answer<T>>,
    invoke: <C extends Channel>(channel: C, request: RequestOf<C>) => bridge.invoke(channel, request) as Promise<Answer<ResponseOf<C>>>,
    on: <E extends EventName>(event: E, listener: (payload: EventOf<E>) => void) => bridge.on(event, listener as (p: unknown) => void),
    onConnection(listener) {
      watchers.add(listener);
      listener(connection);
      return () => watchers.delete(listener);
    },
    follow(s) {
      sync = s;
      void resync();
    },
  };
}
