// The window's only door to main (bundled to CommonJS, run sandboxed): exactly
// the contract's channels and events, as window.ferry. Anything else is refused
// here, and main checks the sender again.
import { contextBridge, ipcRenderer, webUtils, type IpcRendererEvent } from 'electron';
import { CHANNELS, CONNECTION_EVENT, DESKTOP_CHANNELS, EVENTS, RECEIVE_EVENT, RESTART_TO_UPDATE, UPDATE_EVENT, ipcEvent, ipcRequest } from '../src/ipc/names.js';
import { AgentErrorCode } from '../src/api/agent/errors.js';

const channels = new Set<string>(CHANNELS);
const desktopChannels = new Set<string>(DESKTOP_CHANNELS);
const events = new Set<string>([...EVENTS, CONNECTION_EVENT, RECEIVE_EVENT, UPDATE_EVENT]);

export const bridge = {
  invoke(channel: string, request: unknown): Promise<unknown> {
    if (!channels.has(channel)) return Promise.resolve({ ok: false, error: { code: AgentErrorCode.badRequest, message: `no channel "${channel}"` } });
    return ipcRenderer.invoke(ipcRequest(channel), request);
  },
  on(event: string, listener: (payload: unknown) => void): () => void {
    if (!events.has(event)) return () => {};
    const handler = (_e: IpcRendererEvent, payload: unknown) => listener(payload);
    ipcRenderer.on(ipcEvent(event), handler);
    return () => void ipcRenderer.off(ipcEvent(event), handler);
  },
  /** What only the desktop app can do (dialogs, show in folder, the app's settings), answered by main. */
  desktop(channel: string, request?: unknown): Promise<unknown> {
    if (!desktopChannels.has(channel)) return Promise.resolve({ ok: false, error: { code: AgentErrorCode.badRequest, message: `no channel "${channel}"` } });
    return ipcRenderer.invoke(ipcRequest(channel), request);
  },
  /** Quits and installs a downloaded update (main answers it; the agent is stopped first). */
  restartToUpdate: (): Promise<unknown> => ipcRenderer.invoke(ipcRequest(RESTART_TO_UPDATE)),
  /** The path of a file or folder dropped on the window (a desktop app may know it; a web page may not). */
  pathForFile: (file: File): string => webUtils.getPathForFile(file),
};

contextBridge.exposeInMainWorld('ferry', bridge);
