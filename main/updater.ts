// The auto-update state main sends the window (which shows "Update available",
// "Downloading n%", "Restart to update"), driven by electron-updater's events. An update error never
// interrupts the user: it is logged and the state goes back to idle.
import type { UpdateState } from '../src/ipc/desktop.js';

export type { UpdateState };

/** The events of electron-updater's autoUpdater that matter here. */
export interface UpdaterLike {
  on(event: 'update-available' | 'update-downloaded', listener: (info: { version: string }) => void): unknown;
  on(event: 'download-progress', listener: (p: { percent: number }) => void): unknown;
  on(event: 'update-not-available', listener: () => void): unknown;
  on(event: 'error', listener: (err: Error) => void): unknown;
}

export function followUpdates(updater: UpdaterLike, changed: (s: UpdateState) => void, log: (message: string) => void): void {
  let ready = false;
  updater.on('update-available', (info) => changed({ status: 'available', version: info.version }));
  updater.on('download-progress', (p) => changed({ status: 'downloading', percent: Math.max(0, Math.min(100, p.percent)) }));
  updater.on('update-downloaded', (info) => {
    ready = true;
    changed({ status: 'ready', version: info.version });
  });
  updater.on('update-not-available', () => {
    if (!ready) changed({ status: 'idle' });
  });
  updater.on('error', (err) => {
    log(`update check failed: ${err.message}`);
    // A downloaded update stays ready; anything else goes quiet.
    if (!ready) changed({ status: 'idle' });
  });
}
