// The app's one window, locked down: a sandboxed renderer without Node, its own
// app:// origin, no navigation away, no new windows (http(s) links open in the
// system browser after a check), no permissions granted.
import { BrowserWindow, shell, type WebContents } from 'electron';
import { isExternalLink } from './links.js';

export const APP_ORIGIN = 'app://ferry';


export function createWindow(preload: string): BrowserWindow {
  const win = new BrowserWindow({
    width: 1100,
    height: 720,
    minWidth: 800,
    minHeight: 560,
    show: false,
    title: 'Ferry',
    webPreferences: { preload, contextIsolation: true, sandbox: true, nodeIntegration: false, webSecurity: true, spellcheck: false },
  });
  lockDown(win.webContents);
  win.once('ready-to-show', () => win.show());
  void win.loadURL(`${APP_ORIGIN}/index.html`);
  return win;
}

function lockDown(wc: WebContents): void {
  wc.on('will-navigate', (e) => e.preventDefault());
  wc.setWindowOpenHandler(({ url }) => {
    if (isExternalLink(url)) void shell.openExternal(url);
    return { action: 'deny' };
  });
  wc.session.setPermissionRequestHandler((_wc, _permission, callback) => callback(false));
}

/** A request comes from the app's own main frame, showing the app's own page. */
export function isOwnFrame(win: BrowserWindow | undefined, frame: unknown): boolean {
  return !!win && !win.isDestroyed() && frame === win.webContents.mainFrame && win.webContents.mainFrame.url.startsWith(`${APP_ORIGIN}/`);
}
