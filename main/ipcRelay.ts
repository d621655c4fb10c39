// Main relays the window's requests to the agent's process and the agent's
// events to the window; it moves no bytes. Every request goes through the one
// trusted-sender door (trustedIpc.ts); the agent checks each against its schema.
// Written against small interfaces over Electron's modules, so that tests run it
// with fakes (the Electron binary cannot run here).
import { CHANNELS, EVENTS } from '../src/ipc/names.js';
import type { Answer, EventName, EventOf } from '../src/ipc/contract.js';
import type { Connection } from '../src/ipc/desktop.js';
import { handleTrusted, type Door, type SendToWindow } from './trustedIpc.js';

export interface AgentLike {
  invoke(channel: string, request: unknown): Promise<Answer<unknown>>;
  on<E extends EventName>(event: E, listener: (payload: EventOf<E>) => void): () => void;
  onConnection(listener: (state: Connection) => void): () => void;
}

export function relay(door: Door, agent: AgentLike, send: SendToWindow): void {
  for (const channel of CHANNELS) handleTrusted(door, channel, (request) => agent.invoke(channel, request));
  for (const e of EVENTS) agent.on(e, (payload) => send(e, payload));
  agent.onConnection((state) => send('agent.connection', state));
}
