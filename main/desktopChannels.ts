// What only the desktop app can do, answered by main itself (the agent is not
// asked): the system's file and folder dialogs, showing a file in its folder,
// opening a web link in the system browser, the app's own settings (close to the
// tray, notifications, start at login) and restarting into a downloaded update.
// Each channel's schema is in the contract (src/ipc/desktop.ts); every request
// goes through the one trusted-sender door (trustedIpc.ts), which checks it
// against that schema; errors come back as data.
import path from 'node:path';
import { DESKTOP_CHANNELS } from '../src/ipc/names.js';
import { desktopChannels, type DesktopChannel, type DesktopRequestOf, type DesktopResponseOf, type DesktopSettings } from '../src/ipc/desktop.js';
import type { Answer } from '../src/ipc/contract.js';
import type { AppSettings } from './appSettings.js';
import { isExternalLink } from './links.js';
import { handleTrusted, validated, type Door } from './trustedIpc.js';
import { AgentErrorCode } from '../src/api/agent/errors.js';

export interface DialogLike {
  open(kind: 'files' | 'folders' | 'folder'): Promise<string[]>;
}

export interface DesktopDeps {
  dialog: DialogLike;
  showInFolder(file: string): void;
  openExternal(url: string): void;
  settings: { get(): AppSettings; set(change: Partial<AppSettings>): void };
  startAtLogin: { get(): boolean; set(on: boolean): void };
  /** Stops the agent and installs the downloaded update; false when none is ready. */
  restartToUpdate(): boolean;
}

export type DesktopHandlers = { [C in DesktopChannel]: (request: DesktopRequestOf<C>) => Promise<Answer<DesktopResponseOf<C>>> | Answer<DesktopResponseOf<C>> };

const bad = (message: string, field: string) => ({ ok: false, error: { code: AgentErrorCode.badRequest, message, field } }) as const;
const ok = <T,>(value: T) => ({ ok: true, value }) as const;
const done = ok({ done: true as const });

/** The handlers, on requests that fit their schemas. */
export function desktopHandlers(d: DesktopDeps): DesktopHandlers {
  const settingsView = (): DesktopSettings => ({ closeToTray: d.settings.get().closeToTray, notifications: d.settings.get().notifications, startAtLogin: d.startAtLogin.get() });
  return {
    'app.chooseFiles': async () => ok(await d.dialog.open('files')),
    'app.chooseFolders': async () => ok(await d.dialog.open('folders')),
    'app.chooseFolder': async () => ok((await d.dialog.open('folder'))[0] ?? null),
    'app.showInFolder': (r) => {
      if (!path.isAbsolute(r.path)) return bad(`The path is not absolute: "${r.path}".`, 'path');
      d.showInFolder(r.path);
      return done;
    },
    'app.openExternal': (r) => {
      if (!isExternalLink(r.url)) return bad('Only a web address (http or https) opens in the browser.', 'url');
      d.openExternal(r.url);
      return done;
    },
    'app.getSettings': () => ok(settingsView()),
    'app.setSettings': ({ startAtLogin, ...rest }) => {
      if (Object.keys(rest).length > 0) d.settings.set(rest);
      if (startAtLogin !== undefined) d.startAtLogin.set(startAtLogin);
      return ok(settingsView());
    },
    'app.restartToUpdate': () => (d.restartToUpdate() ? done : { ok: false, error: { code: AgentErrorCode.conflict, message: 'No update is ready to install.' } }),
  };
}

/** Registers every desktop channel behind the trusted-sender door and its schema. */
export function registerDesktop(door: Door, d: DesktopDeps): void {
  const handlers = desktopHandlers(d) as Record<DesktopChannel, (request: unknown) => Promise<Answer<unknown>> | Answer<unknown>>;
  for (const channel of DESKTOP_CHANNELS) handleTrusted(door, channel, validated(desktopChannels[channel].request, handlers[channel]));
}
