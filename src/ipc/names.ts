// The names of the contract's channels and events, alone: what the Electron
// preload exposes (its allowlist) without carrying the schemas into the window.
// A test checks these lists against contract.ts and the handler table.
export const CHANNELS = [
  'session.current', 'session.login', 'session.loginWithApiKey', 'session.logout', 'session.thisComputer', 'teams.list',
  'transfers.snapshot',
  'uploads.create', 'uploads.createPortal', 'uploads.pause', 'uploads.resume', 'uploads.remove', 'uploads.cancel', 'uploads.pauseAll', 'uploads.resumeAll', 'uploads.link', 'uploads.transferLink', 'uploads.links', 'uploads.revokeLink',
  'downloads.preview', 'downloads.previewFiles', 'downloads.create', 'downloads.pause', 'downloads.resume', 'downloads.remove', 'downloads.cancel', 'downloads.pauseAll', 'downloads.resumeAll',
  'automations.list', 'automations.create', 'automations.update', 'automations.setEnabled', 'automations.remove', 'automations.packages',
  'gateways.list', 'gateways.register', 'gateways.update', 'gateways.unregister', 'gateways.createConnection',
  'system.about', 'settings.get', 'settings.update', 'fs.list',
  'fs.measure',
] as const;

export const EVENTS = ['transfers.changed', 'session.changed', 'automations.changed', 'gateways.changed'] as const;

/** Sent by main, not the agent: whether the agent's process is there. */
export const CONNECTION_EVENT = 'agent.connection';
/** Sent by main: open Receive with this Link (a ferry:// URL or a Link given to the app). */
export const RECEIVE_EVENT = 'app.receive';
/** Sent by main: the app's update state ({status: idle | available | downloading | ready, ...}). */
export const UPDATE_EVENT = 'app.update';
/** Answered by main itself, not the agent: restart into a downloaded update. */
export const RESTART_TO_UPDATE = 'app.restartToUpdate';

/** Answered by main itself (main/desktopChannels.ts): what only the desktop app can do. */
export const DESKTOP_CHANNELS = [
  'app.chooseFiles', 'app.chooseFolders', 'app.chooseFolder', 'app.showInFolder', 'app.openExternal', 'app.getSettings', 'app.setSettings',
] as const;
export type DesktopChannel = (typeof DESKTOP_CHANNELS)[number];

/** Electron IPC channel names: requests, and events to the window. */
export const ipcRequest = (channel: string) => `ferry:${channel}`;
export const ipcEvent = (event: string) => `ferry:event:${event}`;
