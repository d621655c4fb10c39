// The one interface the renderer codes against (docs/architecture.md, principle 2): Electron IPC in
// the desktop app, HTTP and a WebSocket in a browser. Requests answer
// {ok, value | error}; events arrive by name; the connection says whether the
// agent is there.
import type { Answer, Channel, EventName, EventOf, RequestOf, ResponseOf } from '../../src/ipc/contract.js';

export type Connection = 'connecting' | 'connected' | 'reconnecting';

export interface Transport {
  invoke<C extends Channel>(channel: C, request: RequestOf<C>): Promise<Answer<ResponseOf<C>>>;
  /** Follows an event; returns the function that stops following. */
  on<E extends EventName>(event: E, listener: (payload: EventOf<E>) => void): () => void;
  /** Hears of the connection to the agent; called at once with the current state. */
  onConnection(listener: (c: Connection) => void): () => void;
  /**
   * Opens the event stream, and opens it again whenever it is lost: each time,
   * `sync` first takes a snapshot and answers its cursor (it throws while the
   * agent cannot be reached, and is then tried again).
   */
  follow(sync: () => Promise<number>): void;
  /** The desktop app: what only it can do (main/desktopChannels.ts); absent in a browser. */
  desktop?<T>(channel: string, request?: unknown): Promise<Answer<T>>;
  /** The desktop app: the path of a file dropped on the window; a browser cannot tell. */
  pathOf?(file: File): string | undefined;
  /** Browser mode, an agent with an API key: proves the key once (an HttpOnly cookie stands for it after). */
  unlock?(apiKey: string): Promise<Answer<{ done: true }>>;
}
