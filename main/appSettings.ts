// The desktop app's own settings (not the agent's): a small JSON file in the
// app's data folder, written whole on each change.
import fs from 'node:fs';
import path from 'node:path';

export interface AppSettings {
  closeToTray: boolean;
  notifications: boolean;
  /** The first close to the tray was explained. */
  trayNoticeShown: boolean;
}

const DEFAULTS: AppSettings = { closeToTray: true, notifications: true, trayNoticeShown: false };

export function appSettings(dir: string) {
  const file = path.join(dir, 'settings.json');
  let current: AppSettings = { ...DEFAULTS };
  try {
    const saved = JSON.parse(fs.readFileSync(file, 'utf8')) as Partial<AppSettings>;
    for (const k of Object.keys(DEFAULTS) as (keyof AppSettings)[]) if (typeof saved[k] === 'boolean') current[k] = saved[k];
  } catch {
    // None yet, or unreadable: the defaults.
  }
  return {
    get: () => current,
    set(change: Partial<AppSettings>) {
      current = { ...current, ...change };
      fs.mkdirSync(dir, { recursive: true });
      fs.writeFileSync(`${file}.tmp`, JSON.stringify(current, null, 2));
      fs.renameSync(`${file}.tmp`, file);
    },
  };
}
