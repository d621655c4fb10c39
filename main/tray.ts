// The tray: the overall progress in its tooltip (and the taskbar or dock
// progress bar), and a menu to open the window, pause or resume everything, or
// quit. Written against small interfaces over Electron's Tray and BrowserWindow.
import { speed } from '../src/format/sizes.js';

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
  quit(): void;
}

export function trayMenu(a: TrayActions, active: number) {
  return [
    { label: 'Open Ferry', click: a.open },
    { label: 'Pause all', enabled: active > 0, click: a.pauseAll },
    { label: 'Resume all', click: a.resumeAll },
    { label: 'Quit', click: a.quit },
  ];
}

/** "Ferry: 2 transfers, 45%" or "Ferry: nothing to transfer". */
export function trayTooltip(active: number, fraction: number | undefined, rate?: number): string {
  if (active === 0 || fraction === undefined) return 'Ferry: nothing to transfer';
  const pct = Math.floor(fraction * 100);
  return `Ferry: ${active} transfer${active === 1 ? '' : 's'}, ${pct}%${rate ? ` at ${speed(rate)}` : ''}`;
}

/** Shows the state on the tray and the window, and the menu whenever the number of active transfers changes. */
export class TrayView {
  private lastActive = -1;
  constructor(
    private readonly tray: TrayLike,
    private readonly actions: TrayActions,
    private readonly window: () => ProgressWindow | undefined,
  ) {}

  show(active: number, fraction: number | undefined): void {
    this.tray.setToolTip(trayTooltip(active, fraction));
    this.window()?.setProgressBar(fraction === undefined ? -1 : fraction);
    if (active !== this.lastActive) {
      this.lastActive = active;
      this.tray.setContextMenu(trayMenu(this.actions, active));
    }
  }
}
