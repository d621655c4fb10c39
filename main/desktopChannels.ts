// What only the desktop app can do, answered by main itself (the agent is not
// asked): the system's file and folder dialogs, showing a file in its folder,
// opening a web link in the system browser, and the app's own settings (close to
// the tray, notifications, start at login). Each request must come from the app's
// own frame and fit its shape; errors come back as data.
import path from 'node:path';
import { DESKTOP_CHANNELS, ipcRequest, type DesktopChannel } from '../src/ipc/names.js';
import type { Answer } from '../src/ipc/contract.js';
import type { IpcMainLike } from './ipcRelay.js';
import type { AppSettings } from './appSettings.js';
import { isExternalLink } from './links.js';
import { AgentErrorCode } from '../src/api/agent/errors.js';

export interface DialogLike {
  open(kind: 'files' | 'folders' | 'folder'): Promise<string[]>;
}

export interface DesktopDeps {
  trusted(frame: unknown): boolean;
  dialog: DialogLike;
  showInFolder(file: string): void;
  openExternal(url: string): void;
  settings: { get(): AppSettings; set(change: Partial<AppSettings>): void };
  startAtLogin: { get(): boolean; set(on: boolean): void };
}

const bad = (message: string): Answer<never> => ({ ok: false, error: { code: AgentErrorCode.badRequest, message } });

type Handler = (request: unknown) => Promise<Answer<unknown>> | Answer<unknown>;

export function desktopHandlers(d: DesktopDeps): Record<DesktopChannel, Handler> {
  const settingsView = () => ({ closeToTray: d.settings.get().closeToTray, notifications: d.settings.get().notifications, startAtLogin: d.startAtLogin.get() });
  return {
    'app.chooseFiles': async () => ({ ok: true, value: await d.dialog.open('files') }),
    'app.chooseFolders': async () => ({ ok: true, value: await d.dialog.open('folders') }),
    'app.chooseFolder': async () => ({ ok: true, value: (await d.dialog.open('folder'))[0] ?? null }),
    'app.showInFolder': (r) => {
      const file = (r as { path?: unknown } | undefined)?.path;
      if (typeof file !== 'string' || !path.isAbsolute(file)) return bad('path must be an absolute path');
      d.showInFolder(file);
      return { ok: true, value: { done: true } };
    },
    'app.openExternal': (r) => {
      const url = (r as { url?: unknown } | undefined)?.url;
      if (typeof url !== 'string' || !isExternalLink(url)) return bad('url must be an http(s) address');
      d.openExternal(url);
      return { ok: true, value: { done: true } };
    },
    'app.getSettings': () => ({ ok: true, value: settingsView() }),
    'app.setSettings': (r) => {
      const change = (r ?? {}) as Record<string, unknown>;
      for (const [k, v] of Object.entries(change)) {
        if (!['closeToTray', 'notifications', 'startAtLogin'].includes(k)) return bad(`unknown setting "${k}"`);
        if (typeof v !== 'boolean') return bad(`${k} must be true or false`);
      }
      const { startAtLogin, ...rest } = change as Partial<AppSettings> & { startAtLogin?: boolean };
      if (Object.keys(rest).length > 0) d.settings.set(rest);
      if (startAtLogin !== undefined) d.startAtLogin.set(startAtLogin);
      return { ok: true, value: settingsView() };
    },
  };
}

/** Registers the desktop channels with ipcMain, each checking its sender first. */
export function registerDesktop(ipcMain: IpcMainLike, d: DesktopDeps): void {
  const handlers = desktopHandlers(d);
  for (const channel of DESKTOP_CHANNELS) {
    ipcMain.handle(ipcRequest(channel), async (event, request) => {
      if (!d.trusted(event.senderFrame)) return { ok: false, error: { code: AgentErrorCode.forbidden, message: "not the app's own window" } };
      return handlers[channel](request);
    });
  }
}
