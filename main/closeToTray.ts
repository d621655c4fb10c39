// Closing the window while transfers run keeps them going in the tray (a
// setting, on by default); the first time, a notification says so. With nothing
// under way, or the setting off, closing quits (and the agent records its state).
export interface CloseDecision { keepRunning: boolean; tellUser: boolean }

export function onWindowClose(o: { closeToTray: boolean; active: number; toldBefore: boolean; quitting: boolean }): CloseDecision {
  if (o.quitting || !o.closeToTray || o.active === 0) return { keepRunning: false, tellUser: false };
  return { keepRunning: true, tellUser: !o.toldBefore };
}

export const TRAY_NOTICE = { title: 'Ferry keeps transferring', body: 'Your transfers go on in the tray. Quit from the tray menu to stop them.' };
