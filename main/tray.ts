// The tray: the overall progress in its tooltip (and the taskbar or dock
// progress bar), the bandwidth limits in force, and a menu to open the window,
// pause or resume everything, pause the limits for an hour (or resume them), or
// quit. Written against small interfaces over Electron's Tray and BrowserWindow.
import type { LimitsLine } from '../src/format/rateSchedule.js';

export interface TrayLike {
  setToolTip(text: string): void;
  setContextMenu(items: { label: string; enabled?: boolean; click(): void }[]): void;
}

export interface ProgressWindow {
  /** A fraction 0..1, or -1 to hide the bar (Electron's setProgressBar). */
  setProgressBar(fraction: number): void;
}

export interface TrayActions {
  open(): void;
  pauseAll(): void;
  resumeAll(): void;
  pauseLimits(): void;
  resumeLimits(): void;
  quit(): void;
}

export function trayMenu(a: TrayActions, active: number, limits?: LimitsLine) {
  return [
    { label: 'Open Ferry', click: a.open },
    { label: 'Pause all', enabled: active > 0, click: a.pauseAll },
    { label: 'Resume all', click: a.resumeAll },
    ...(limits?.action === 'pause' ? [{ label: 'Pause limits for an hour', click: a.pauseLimits }] : []),
    ...(limits?.action === 'resume' ? [{ label: 'Resume limits', click: a.resumeLimits }] : []),
    { label: 'Quit', click: a.quit },
  ];
}

/** "Ferry: 2 transfers, 45%" or "Ferry: nothing to transfer", and the limits on a line of their own. */
export function trayTooltip(active: number, fraction: number | undefined, limits?: LimitsLine): string {
  const pct = fraction === undefined ? 0 : Math.floor(fraction * 100);
  const head = active === 0 || fraction === undefined ? 'Ferry: nothing to transfer' : `Ferry: ${active} transfer${active === 1 ? '' : 's'}, ${pct}%`;
  return limits ? `${head}\n${limits.words}` : head;
}

/** Shows the state on the tray and the window, and the menu whenever what it offers changes. */
export class TrayView {
  private lastMenu = '';
  constructor(
    private readonly tray: TrayLike,
    private readonly actions: TrayActions,
    private readonly window: () => ProgressWindow | undefined,
  ) {}

  show(active: number, fraction: number | undefined, limits?: LimitsLine): void {
    this.tray.setToolTip(trayTooltip(active, fraction, limits));
    this.window()?.setProgressBar(fraction === undefined ? -1 : fraction);
    const menu = `${active > 0} ${limits?.action ?? ''}`;
    if (menu !== this.lastMenu) {
      this.lastMenu = menu;
      this.tray.setContextMenu(trayMenu(this.actions, active, limits));
    }
  }
}
