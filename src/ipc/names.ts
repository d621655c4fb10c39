// The names of the contract's channels and events, alone: what the Electron
// preload exposes (its allowlist) without carrying the schemas into the window.
// test/unit/ipc/channels.test.ts checks these lists against contract.ts,
// desktop.ts, both handler tables and the channel tables of docs/desktop.md.
export const CHANNELS = [
  'session.current', 'session.login', 'session.loginWithApiKey', 'session.logout', 'session.thisComputer', 'teams.list',
  'transfers.snapshot',
  'uploads.create', 'uploads.createPortal', 'uploads.pause', 'uploads.resume', 'uploads.remove', 'uploads.cancel', 'uploads.pauseAll', 'uploads.resumeAll', 'uploads.files', 'uploads.link', 'uploads.transferLink', 'uploads.links', 'uploads.revokeLink',
  'downloads.preview', 'downloads.previewFiles', 'downloads.create', 'downloads.pause', 'downloads.resume', 'downloads.remove', 'downloads.cancel', 'downloads.pauseAll', 'downloads.resumeAll', 'downloads.files',
  'automations.list', 'automations.create', 'automations.update', 'automations.setEnabled', 'automations.remove', 'automations.packages',
  'gateways.list', 'gateways.register', 'gateways.update', 'gateways.unregister', 'gateways.createConnection',
  'system.about', 'settings.get', 'settings.update', 'diagnostics.get', 'diagnostics.bundle', 'disks.list', 'disks.status', 'disks.update', 'fs.list',
  'fs.measure',
] as const;

export const EVENTS = ['transfers.changed', 'session.changed', 'automations.changed', 'gateways.changed'] as const;

/** Answered by main itself (main/desktopChannels.ts), with their schemas in desktop.ts: what only the desktop app can do. */
export const DESKTOP_CHANNELS = [
  'app.chooseFiles', 'app.chooseFolders', 'app.chooseFolder', 'app.showInFolder', 'app.openExternal', 'app.getSettings', 'app.setSettings',
  'app.restartToUpdate',
] as const;

/** Sent by main, not the agent (desktop.ts): the agent's connection, a Link to receive, the update's state. */
export const DESKTOP_EVENTS = ['agent.connection', 'app.receive', 'app.update'] as const;

/** Electron IPC channel names: requests, and events to the window. */
export const ipcRequest = (channel: string) => `ferry:${channel}`;
export const ipcEvent = (event: string) => `ferry:event:${event}`;
