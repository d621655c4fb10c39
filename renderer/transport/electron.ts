// The desktop app: requests and events through the preload's window.ferry
// (Electron IPC to main, which relays them to the agent's process).
import type { Answer, Channel, EventName, EventOf, RequestOf, ResponseOf } from '../../src/ipc/contract.js';
import type { DesktopChannel, DesktopEventName, DesktopEventOf, DesktopResponseOf } from '../../src/ipc/desktop.js';
import type { Connection, Transport } from './types.js';

/** What main/preload.ts exposes as window.ferry. */
export interface FerryBridge {
  invoke(channel: Channel, request: unknown): Promise<unknown>;
  desktop(channel: DesktopChannel, request?: unknown): Promise<unknown>;
  on(event: EventName | DesktopEventName, listener: (payload: unknown) => void): () => void;
  pathForFile(file: File): string;
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
    connection = state as DesktopEventOf<'agent.connection'>;
    for (const w of watchers) w(connection);
    if (connection === 'connected') void resync();
  });
  return {
    pathOf: (file) => bridge.pathForFile(file) || undefined,
    desktop: <C extends DesktopChannel>(channel: C, request?: unknown) => bridge.desktop(channel, request) as Promise<Answer<DesktopResponseOf<C>>>,
    onDesktop: (event, listener) => bridge.on(event, listener as (p: unknown) => void),
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
