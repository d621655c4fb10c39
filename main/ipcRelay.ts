// Main relays the window's requests to the agent's process and the agent's
// events to the window; it moves no bytes. Every request is checked to come
// from the app's own main frame. Written against small interfaces over Electron's
// modules, so that tests run it with fakes (the Electron binary cannot run here).
import { CHANNELS, CONNECTION_EVENT, EVENTS, ipcEvent, ipcRequest } from '../src/ipc/names.js';
import type { Answer } from '../src/ipc/contract.js';
import { AgentErrorCode } from '../src/api/agent/errors.js';

export interface IpcMainLike {
  handle(channel: string, listener: (event: { senderFrame: unknown }, request: unknown) => Promise<unknown>): void;
}

export interface AgentLike {
  invoke(channel: string, request: unknown): Promise<Answer<unknown>>;
  on(event: (typeof EVENTS)[number], listener: (payload: unknown) => void): () => void;
  onConnection(listener: (state: string) => void): () => void;
}


export function relay(ipcMain: IpcMainLike, agent: AgentLike, o: { trusted(frame: unknown): boolean; send(channel: string, payload: unknown): void }): void {
  for (const channel of CHANNELS) {
    ipcMain.handle(ipcRequest(channel), async (event, request) => {
      if (!o.trusted(event.senderFrame)) return { ok: false, error: { code: AgentErrorCode.forbidden, message: 'not the app\'s own window' } };
      return agent.invoke(channel, request);
    });
  }
  for (const e of EVENTS) agent.on(e, (payload) => o.send(ipcEvent(e), payload));
  agent.onConnection((state) => o.send(ipcEvent(CONNECTION_EVENT), state));
}
