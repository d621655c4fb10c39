// The window's only door to main (bundled to CommonJS, run sandboxed): exactly
// the contract's channels and events (src/ipc/names.ts: the names alone, no
// schemas), as window.ferry. Anything else is refused here, and main checks the
// sender again (main/trustedIpc.ts).
import { contextBridge, ipcRenderer, webUtils, type IpcRendererEvent } from 'electron';
import { CHANNELS, DESKTOP_CHANNELS, DESKTOP_EVENTS, EVENTS, ipcEvent, ipcRequest } from '../src/ipc/names.js';
import { AgentErrorCode } from '../src/api/agent/errors.js';

const channels = new Set<string>(CHANNELS);
const desktopChannels = new Set<string>(DESKTOP_CHANNELS);
const events = new Set<string>([...EVENTS, ...DESKTOP_EVENTS]);

const noChannel = (channel: string) => Promise.resolve({ ok: false, error: { code: AgentErrorCode.badRequest, message: `no channel "${channel}"` } });

export const bridge = {
  /** The agent's channels (src/ipc/contract.ts), relayed by main. */
  invoke(channel: string, request: unknown): Promise<unknown> {
    if (!channels.has(channel)) return noChannel(channel);
    return ipcRenderer.invoke(ipcRequest(channel), request);
  },
  /** What only the desktop app can do (src/ipc/desktop.ts), answered by main. */
  desktop(channel: string, request?: unknown): Promise<unknown> {
    if (!desktopChannels.has(channel)) return noChannel(channel);
    return ipcRenderer.invoke(ipcRequest(channel), request);
  },
  /** The agent's events and main's own. */
  on(event: string, listener: (payload: unknown) => void): () => void {
    if (!events.has(event)) return () => {};
    const handler = (_e: IpcRendererEvent, payload: unknown) => listener(payload);
    ipcRenderer.on(ipcEvent(event), handler);
    return () => void ipcRenderer.off(ipcEvent(event), handler);
  },
  /** The path of a file or folder dropped on the window (a desktop app may know it; a web page may not). */
  pathForFile: (file: File): string => webUtils.getPathForFile(file),
};

contextBridge.exposeInMainWorld('ferry', bridge);
