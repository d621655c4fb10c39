// The protocol between the app's main process and the agent it hosts (in an
// Electron utilityProcess, or a Node child process or worker in tests): plain
// messages over anything that can post one and hear them.
import type { Answer, EventName, EventOf } from './contract.js';

/** What both ends need of a port: Electron's MessagePortMain and parentPort, Node's process and worker ports all fit. */
export interface Port {
  post(message: HostMessage | MainMessage): void;
  /** Returns the function that stops listening. */
  onMessage(listener: (message: unknown) => void): () => void;
}

/** Main to the agent. */
export type MainMessage =
  | { kind: 'request'; id: number; channel: string; payload: unknown }
  /** Stop: record the state and exit. */
  | { kind: 'shutdown' };

/** The agent to main. */
export type HostMessage =
  /** The agent is up; `url` is its REST API, null when the local API is off. */
  | { kind: 'ready'; url: string | null }
  | { kind: 'response'; id: number; answer: Answer<unknown> }
  | { [E in EventName]: { kind: 'event'; event: E; payload: EventOf<E> } }[EventName]
  /** The agent could not start: why, in words. */
  | { kind: 'failed'; message: string };

export const isHostMessage = (m: unknown): m is HostMessage => typeof m === 'object' && m !== null && typeof (m as { kind?: unknown }).kind === 'string';

/** The exit code of an agent process that stops to start again with new settings: main starts it at once. */
export const RESTART_EXIT = 75;
