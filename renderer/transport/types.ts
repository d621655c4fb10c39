// The one interface the renderer codes against (docs/architecture.md, principle 2): Electron IPC in
// the desktop app, HTTP and a WebSocket in a browser. Requests answer
// {ok, value | error}; events arrive by name; the connection says whether the
// agent is there. Every channel and event is typed from the contract
// (src/ipc/contract.ts, and src/ipc/desktop.ts for the desktop app's own).
import type { Answer, Channel, EventName, EventOf, RequestOf, ResponseOf } from '../../src/ipc/contract.js';
import type { Connection, DesktopChannel, DesktopEventName, DesktopEventOf, DesktopRequestOf, DesktopResponseOf } from '../../src/ipc/desktop.js';

export type { Connection };

/** A desktop channel's request: optional where it holds nothing required. */
export type DesktopArgs<C extends DesktopChannel> = object extends DesktopRequestOf<C> ? [request?: DesktopRequestOf<C>] : [request: DesktopRequestOf<C>];

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
  /** The desktop app: what only it can do, answered by main (main/desktopChannels.ts); absent in a browser. */
  desktop?<C extends DesktopChannel>(channel: C, ...request: DesktopArgs<C>): Promise<Answer<DesktopResponseOf<C>>>;
  /** The desktop app: main's own events (a Link to receive, the update's state); absent in a browser. */
  onDesktop?<E extends Exclude<DesktopEventName, 'agent.connection'>>(event: E, listener: (payload: DesktopEventOf<E>) => void): () => void;
  /** The desktop app: the path of a file dropped on the window; a browser cannot tell. */
  pathOf?(file: File): string | undefined;
  /** Browser mode, an agent with an API key: proves the key once (an HttpOnly cookie stands for it after). */
  unlock?(apiKey: string): Promise<Answer<{ done: true }>>;
}
